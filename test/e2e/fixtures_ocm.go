//go:build linux

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
)

// forgetIssuedAddonCSRs deletes the hub's approved and issued CSRs of an
// addon, as kube-controller-manager's CSR cleaner does an hour after they
// were approved; the certificates they issued stay valid. OCM's
// registration agent requests no new certificate for an addon on a cluster
// that has ten CSRs on the hub, and each time an addon is enabled it may
// ask for up to three, so a suite that disables and enables an addon a few
// times within the hour would wait out the cleaner.
func forgetIssuedAddonCSRs(ctx context.Context, hub client.Client, addon string) error {
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := hub.List(ctx, list, client.MatchingLabels{addonv1alpha1.AddonLabelKey: addon}); err != nil {
		return fmt.Errorf("listing the CSRs of addon %s: %w", addon, err)
	}
	for i := range list.Items {
		csr := &list.Items[i]
		approved := slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
			return c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue
		})
		if !approved || len(csr.Status.Certificate) == 0 {
			continue
		}
		if err := client.IgnoreNotFound(hub.Delete(ctx, csr, client.Preconditions{UID: &csr.UID})); err != nil {
			return fmt.Errorf("deleting CSR %s: %w", csr.Name, err)
		}
	}
	return nil
}

// watchesOpened counts the watches of resource in API group group (""
// for the core group) that a control plane's API server has opened for
// user since it started (a worker's own Kueue watches its Workloads too),
// from its watch audit log.
func watchesOpened(cp *ocmlocal.ControlPlane, user, group, resource string) (int, error) {
	f, err := os.Open(cp.AuditLogPath())
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 64*1024), 1024*1024)
	for lines.Scan() {
		var event struct {
			Verb string `json:"verb"`
			User struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef *struct {
				APIGroup string `json:"apiGroup"`
				Resource string `json:"resource"`
			} `json:"objectRef"`
		}
		if json.Unmarshal(lines.Bytes(), &event) != nil {
			continue // the line the API server is writing now
		}
		if event.Verb == "watch" && event.User.Username == user && event.ObjectRef != nil &&
			event.ObjectRef.APIGroup == group && event.ObjectRef.Resource == resource {
			n++
		}
	}
	return n, lines.Err()
}
