//go:build linux

// Package docsconsumer runs on the hub a consumer's pod set up as the
// chart's README ("Consumers") says: an initContainer from the bundle's
// image copies cp-creds into an emptyDir, and the consumer's container,
// the bundle's doctor with --connect, runs that copy as its exec plugin
// and reports, as JSON in its log, whether it reached every cluster.
package docsconsumer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/doctor"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kubelet"
)

// pluginsVolume is the consumer's emptyDir that the initContainer copies
// cp-creds into, as the chart's README names it.
const pluginsVolume = "clusterprofile-plugins"

// Start runs on the hub, in namespace, a consumer's pod set up
// as the chart's README ("Consumers") says: an initContainer from the
// bundle's image runs `cp /cp-creds /plugins/cp-creds` into an emptyDir at
// /plugins, and the consumer's container uses that copy as its exec
// plugin. The container is the bundle's consumer-side check,
// `kubectl-clusterprofile doctor --connect -o json --plugin
// /plugins/cp-creds`, which builds each cluster's client from its profile
// with pkg/access, as MultiKueue does, and calls /version through the
// profile's cluster-proxy entry; it reports again whenever the kubelet
// restarts it (Report reads the latest report). The pod's service
// account may read the profiles and token copies of namespace and nothing
// else; image is the bundle's image, from the local registry.
func Start(ctx context.Context, c client.Client, namespace, name, managedServiceAccount, image string) error {
	for _, o := range docsConsumer(namespace, name, managedServiceAccount, image) {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %T %s/%s: %w", o, namespace, o.GetName(), err)
		}
	}
	return nil
}

// Stop deletes what Start created.
func Stop(ctx context.Context, c client.Client, namespace, name string) error {
	var errs []error
	for _, o := range docsConsumer(namespace, name, "", "") {
		if err := c.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Report is the last report the docs' consumer printed, from its pod's
// containers as the hub kubelet runs them.
func Report(containers []kubelet.ContainerStatus) (doctor.Report, error) {
	if len(containers) != 2 || !containers[0].Completed {
		return doctor.Report{}, fmt.Errorf("the initContainer has not completed: %+v", containers)
	}
	raw, err := os.ReadFile(containers[1].Log)
	if err != nil {
		return doctor.Report{}, err
	}
	out := string(raw)
	// Each report is indented JSON: only its own braces start a line.
	start := strings.LastIndex("\n"+out, "\n{\n")
	if start < 0 {
		return doctor.Report{}, fmt.Errorf("no report in %s yet: %s", containers[1].Log, out)
	}
	var report doctor.Report
	if err := json.NewDecoder(strings.NewReader(out[start:])).Decode(&report); err != nil {
		return doctor.Report{}, fmt.Errorf("the last report in %s: %w", containers[1].Log, err)
	}
	return report, nil
}

// docsConsumer are the consumer's service account, its Role and binding,
// and its Deployment.
func docsConsumer(namespace, name, managedServiceAccount, image string) []client.Object {
	meta := metav1.ObjectMeta{Namespace: namespace, Name: name}
	labels := map[string]string{"app": name}
	plugins := []corev1.VolumeMount{{Name: pluginsVolume, MountPath: "/plugins"}}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta},
		&rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"multicluster.x-k8s.io"}, Resources: []string{"clusterprofiles"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: meta,
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}}},
		&appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: name,
					SecurityContext:    &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
					// charts/clusterprofile-manager/README.md, "Consumers", word for word.
					InitContainers: []corev1.Container{{
						Name: "install-cp-creds", Image: image,
						Command:      []string{"cp", "/cp-creds", "/plugins/cp-creds"},
						VolumeMounts: plugins,
					}},
					Containers: []corev1.Container{{
						Name: "consumer", Image: image,
						Command: []string{"/kubectl-clusterprofile", "doctor", "-n", namespace, "--managed-serviceaccount", managedServiceAccount,
							"--plugin", "/plugins/cp-creds", "--connect", "-o", "json"},
						VolumeMounts: plugins,
						SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
					}},
					Volumes: []corev1.Volume{{Name: pluginsVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				},
			},
		}},
	}
}
