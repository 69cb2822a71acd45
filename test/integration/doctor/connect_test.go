package doctor_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/doctor"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// ignoreLatency: how long a call took is not the test's business.
var ignoreLatency = cmpopts.IgnoreFields(doctor.Row{}, "Latency")

// TestDoctorConnect: --connect builds the rest.Config as pkg/access does,
// runs the freshly built cp-creds as a consumer pod in the namespace would,
// and calls /version on the managed cluster (here the test API server, so
// the synced token is a real one).
func TestDoctorConnect(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // cp-creds must read the hub through the kubeconfig
	ctx := framework.ContextFor(t)
	const ns = "doctor-connect"
	framework.CreateNamespace(ctx, t, env.Client, ns)
	token, expiry := env.ServiceAccountToken(ctx, t, ns, "multikueue-sa", 3*time.Hour)
	for _, cluster := range []string{"reachable", "rejected", "no-copy"} {
		framework.CreateProfile(ctx, t, env.Client, profile(ns, cluster, env.Config.Host, env.Config.CAData))
	}
	createSecret(t, copyOf(t, ns, "reachable", token, expiry))
	createSecret(t, copyOf(t, ns, "rejected", "not-a-token", expiry))
	d := &doctor.Doctor{Client: env.Client, Settings: settings(ns), Now: time.Now, Connect: true, Plugin: plugin(t)}

	got, err := d.Run(ctx)

	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimSuffix(env.Config.Host, "/")
	want := []doctor.Row{
		connected(row("no-copy", map[string]string{doctor.CheckToken: fmt.Sprintf("Secret %s/no-copy-multikueue does not exist: the hub has no ManagedCluster no-copy, so none of its tokens is copied anywhere; this profile was written by another writer, or is left over.", ns)}),
			"Not connected: the checks token failed, and the doctor sends the token only to a profile and an entry that pass them.", ""),
		connected(row("reachable", nil), "", serverVersion(t)),
		connected(row("rejected", nil), host+" rejected the token (401 Unauthorized): the copied ManagedServiceAccount token is not valid on the managed cluster; check the ManagedServiceAccount and its agent there.", ""),
	}
	if diff := cmp.Diff(want, got, ignoreLatency); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// connected adds the connect check to r: passed with version, or failed with fix.
func connected(r doctor.Row, fix, version string) doctor.Row {
	r.Checks = append(r.Checks, doctor.Check{Name: doctor.CheckConnect, OK: fix == "", Fix: fix})
	r.ServerVersion = version
	return r
}

// TestDoctorPassesTheBundlesOwnOutput: with the manager running (mirror,
// direct access entry, credential syncer) and a cluster whose API server
// the hub can reach, every check passes, --connect included: what the
// bundle publishes is what a consumer needs.
func TestDoctorPassesTheBundlesOwnOutput(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	ctx := framework.ContextFor(t)
	const ns, cluster = "doctor-bundle", "bundle-c1"
	mc := utiltesting.MakeManagedCluster(cluster).Label(framework.LabelClusterName, cluster).Version("v1.35.4").
		Available(metav1.ConditionTrue).Joined().Obj()
	mc.Spec.HubAcceptsClient = true
	mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: env.Config.Host, CABundle: env.Config.CAData}}
	framework.CreateCluster(ctx, t, env.Client, mc)
	framework.CreateNamespace(ctx, t, env.Client, cluster) // the cluster namespace on the hub
	framework.CreateNamespace(ctx, t, env.Client, ns)
	framework.Serve(ctx, t, env.Client, ns, cluster)
	token, expiry := env.ServiceAccountToken(ctx, t, cluster, "multikueue-sa", 3*time.Hour)
	createMSA(t, cluster, token, expiry)
	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{
		"ClusterProfile": true, "ClusterProfileDirectAccess": true, "ClusterProfileCredSyncer": true}})
	s := settings(ns)
	s.Providers = []string{"open-cluster-management-direct"}
	d := &doctor.Doctor{Client: env.Client, Settings: s, Now: time.Now, Connect: true, Plugin: plugin(t)}
	want := connected(row(cluster, nil), "", serverVersion(t))
	want.Provider = "open-cluster-management-direct"

	NewWithT(t).Eventually(func(g Gomega) {
		got, err := d.Run(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cmp.Diff([]doctor.Row{want}, got, ignoreLatency)).To(BeEmpty())
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// createMSA writes the ManagedServiceAccount multikueue, labelled for sync,
// and its token Secret, as the managed-serviceaccount agent would. With
// consumerNamespaces its owner scopes the token to them; without, it is
// unscoped.
func createMSA(t *testing.T, cluster, token string, expiry time.Time, consumerNamespaces ...string) {
	t.Helper()
	ctx := framework.ContextFor(t)
	tokenSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: msa,
			Labels: map[string]string{"authentication.open-cluster-management.io/is-managed-serviceaccount": "true"}},
		Data: map[string][]byte{cpcreds.SecretKeyToken: []byte(token), cpcreds.SecretKeyCA: env.Config.CAData},
	}
	createSecret(t, tokenSecret)
	m := &authv1beta1.ManagedServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: msa, Labels: map[string]string{cpcreds.LabelSyncToClusterProfile: "true"}},
		Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{
			Enabled: true, Validity: metav1.Duration{Duration: 3 * time.Hour}}},
	}
	if len(consumerNamespaces) > 0 {
		m.Annotations = map[string]string{cpcreds.AnnotationConsumerNamespaces: strings.Join(consumerNamespaces, ",")}
	}
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatalf("creating ManagedServiceAccount: %v", err)
	}
	framework.UpdateStatus(ctx, t, env.Client, m, func(m *authv1beta1.ManagedServiceAccount) {
		m.Status.TokenSecretRef = &authv1beta1.SecretRef{Name: msa, LastRefreshTimestamp: metav1.Now()}
		m.Status.ExpirationTimestamp = &metav1.Time{Time: expiry}
	})
}
