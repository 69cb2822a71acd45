package doctor_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/doctor"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestDoctor: one cluster per defect a consumer meets, each with its own
// failing row, next to a healthy one, read from a real API server.
func TestDoctor(t *testing.T) {
	ctx := framework.ContextFor(t)
	const ns = "doctor-rows"
	framework.CreateNamespace(ctx, t, env.Client, ns)
	now := time.Now().UTC().Truncate(time.Second)
	server := "https://cluster-proxy-addon-user.open-cluster-management-addon:9092/"
	healthy := func(cluster string) {
		framework.CreateProfile(ctx, t, env.Client, profile(ns, cluster, server+cluster, env.Config.CAData))
		createSecret(t, copyOf(t, ns, cluster, "token-of-"+cluster, now.Add(24*time.Hour)))
	}
	healthy("healthy")

	foreign := profile(ns, "foreign", server+"foreign", env.Config.CAData)
	foreign.Labels[clusterprofile.LabelClusterManager], foreign.Spec.ClusterManager.Name = "someone-else", "someone-else"
	framework.CreateProfile(ctx, t, env.Client, foreign)
	createSecret(t, copyOf(t, ns, "foreign", "token", now.Add(24*time.Hour)))

	unhealthy := profile(ns, "unhealthy", server+"unhealthy", env.Config.CAData)
	unhealthy.Status.Conditions[0].Status, unhealthy.Status.Conditions[0].Reason = metav1.ConditionFalse, "ManagedClusterLeaseUpdateStopped"
	unhealthy.Status.Conditions[0].Message = "Registration agent stopped updating its lease."
	framework.CreateProfile(ctx, t, env.Client, unhealthy)
	createSecret(t, copyOf(t, ns, "unhealthy", "token", now.Add(24*time.Hour)))

	noEntry := profile(ns, "no-entry", "", nil)
	noEntry.Status.AccessProviders = nil
	framework.CreateProfile(ctx, t, env.Client, noEntry)
	createSecret(t, copyOf(t, ns, "no-entry", "token", now.Add(24*time.Hour)))

	framework.CreateProfile(ctx, t, env.Client, profile(ns, "bad-server", "https://hub_proxy.example.com:9092/bad-server", env.Config.CAData))
	createSecret(t, copyOf(t, ns, "bad-server", "token", now.Add(24*time.Hour)))

	framework.CreateProfile(ctx, t, env.Client, profile(ns, "bad-ca", server+"bad-ca", []byte("not a certificate")))
	createSecret(t, copyOf(t, ns, "bad-ca", "token", now.Add(24*time.Hour)))

	otherExtension := profile(ns, "other-extension", server+"other-extension", env.Config.CAData)
	otherExtension.Status.AccessProviders[0].Cluster.Extensions[0] = cpcreds.ExecExtension("healthy")
	framework.CreateProfile(ctx, t, env.Client, otherExtension)
	createSecret(t, copyOf(t, ns, "other-extension", "token", now.Add(24*time.Hour)))

	framework.CreateProfile(ctx, t, env.Client, profile(ns, "no-copy", server+"no-copy", env.Config.CAData))

	framework.CreateProfile(ctx, t, env.Client, profile(ns, "planted", server+"planted", env.Config.CAData))
	createSecret(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cpcreds.SecretName("planted", msa)},
		Data: map[string][]byte{cpcreds.SecretKeyToken: []byte("the planter's token")}})

	framework.CreateProfile(ctx, t, env.Client, profile(ns, "expired", server+"expired", env.Config.CAData))
	createSecret(t, copyOf(t, ns, "expired", "token", now.Add(-time.Minute)))

	framework.CreateProfile(ctx, t, env.Client, profile(ns, "expiring", server+"expiring", env.Config.CAData))
	createSecret(t, copyOf(t, ns, "expiring", "token", now.Add(10*time.Minute)))

	// The consumer may get the copies.
	framework.GrantGetSecrets(ctx, t, env.Client, ns, "kueue")
	d := &doctor.Doctor{Client: env.Client, Settings: settings(ns), Now: func() time.Time { return now },
		Consumer: doctor.ParseIdentity("system:serviceaccount:"+ns+":kueue", nil)}

	got, err := d.Run(ctx)

	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantRows(ns, now), got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// copyOf is the copy the syncer writes of msa's token next to cluster's
// profile in namespace (created before), recording the servers of the
// profile's entries as the ones the hub publishes.
func copyOf(t *testing.T, namespace, cluster, token string, expiry time.Time) *corev1.Secret {
	t.Helper()
	p := &cpv1alpha1.ClusterProfile{}
	if err := env.Client.Get(framework.ContextFor(t), types.NamespacedName{Namespace: namespace, Name: cluster}, p); err != nil {
		t.Fatal(err)
	}
	var servers []cpcreds.PublishedServer
	for _, e := range p.Status.AccessProviders {
		servers = append(servers, cpcreds.ServerOf(e.Cluster))
	}
	return framework.TokenCopy(namespace, cluster, msa, token, expiry, servers...)
}

func createSecret(t *testing.T, s *corev1.Secret) {
	t.Helper()
	if err := env.Client.Create(framework.ContextFor(t), s); err != nil {
		t.Fatalf("creating Secret %s/%s: %v", s.Namespace, s.Name, err)
	}
}

// row is a row through the default provider whose checks all pass but
// those in failed, which fail with the sentence given.
func row(cluster string, failed map[string]string) doctor.Row {
	r := doctor.Row{Cluster: cluster, Provider: "open-cluster-management"}
	for _, name := range []string{doctor.CheckProfile, doctor.CheckEntry, doctor.CheckServer, doctor.CheckCA, doctor.CheckExtension,
		doctor.CheckToken, doctor.CheckPublished, doctor.CheckAccess} {
		if name == doctor.CheckPublished && failed[doctor.CheckToken] != "" {
			continue // checked only against a good copy
		}
		r.Checks = append(r.Checks, doctor.Check{Name: name, OK: failed[name] == "", Fix: failed[name]})
	}
	return r
}

func wantRows(ns string, now time.Time) []doctor.Row {
	noEntry := doctor.Row{Cluster: "no-entry", Checks: []doctor.Check{{Name: doctor.CheckProfile, OK: true},
		{Name: doctor.CheckEntry, Fix: "The profile has no access provider entry: turn on an access provider on the hub (the chart's clusterProfileAccessProvider gate) and check its condition ClusterProxyAccess on the profile."},
		{Name: doctor.CheckToken, OK: true}, {Name: doctor.CheckAccess, OK: true}}}
	return []doctor.Row{
		row("bad-ca", map[string]string{doctor.CheckCA: "The entry's certificate-authority-data is not PEM-encoded certificates: check the CA the access provider reads (for cluster-proxy, tls.crt of Secret cluster-proxy-user-serving-cert)."}),
		row("bad-server", map[string]string{doctor.CheckServer: `The entry's server "https://hub_proxy.example.com:9092/bad-server" has a host that is neither an IP address nor a DNS-1123 name (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')): consumers refuse it (a token must not travel in clear; Kueue trusts only IP addresses and DNS-1123 names); configure the access provider with https://<host>[:<port>][/<path>].`}),
		row("expired", map[string]string{doctor.CheckToken: fmt.Sprintf("The token in Secret %s/expired-multikueue expired at %s: the managed-serviceaccount agent on cluster expired has not rotated it; check ManagedServiceAccount multikueue there and on the hub.",
			ns, now.Add(-time.Minute).Format(time.RFC3339))}),
		row("expiring", map[string]string{doctor.CheckToken: fmt.Sprintf("The token in Secret %s/expiring-multikueue expires at %s, within 1h0m0s: rotation is late; check ManagedServiceAccount multikueue's rotation and the managed-serviceaccount agent on cluster expiring.",
			ns, now.Add(10*time.Minute).Format(time.RFC3339))}),
		row("foreign", map[string]string{doctor.CheckProfile: `The profile belongs to cluster manager "someone-else" (label x-k8s.io/cluster-manager="someone-else"), not "open-cluster-management": it was not published by this bundle, so use the profile the mirror publishes or pass --cluster-manager.`}),
		row("healthy", nil),
		row("no-copy", map[string]string{doctor.CheckToken: fmt.Sprintf("Secret %s/no-copy-multikueue does not exist: the hub has no ManagedCluster no-copy, so none of its tokens is copied anywhere; this profile was written by another writer, or is left over.", ns)}),
		noEntry,
		row("other-extension", map[string]string{doctor.CheckExtension: `The entry's extension client.authentication.k8s.io/exec is {"clusterName":"healthy"}, not {"clusterName": "other-extension"}: cp-creds would look for another cluster's token; the access provider writes it, so check who else writes the entry "open-cluster-management".`}),
		row("planted", map[string]string{doctor.CheckToken: fmt.Sprintf("Secret %s/planted-multikueue is not a synced token copy: it has no label authentication.open-cluster-management.io/synced-from, so the credential syncer did not write it; only its copies are used (delete the Secret and check the ManagedServiceAccount's sync label on the hub).", ns)}),
		row("unhealthy", map[string]string{doctor.CheckProfile: "ControlPlaneHealthy is False (ManagedClusterLeaseUpdateStopped: Registration agent stopped updating its lease.): the cluster's control plane is not healthy; look at ManagedCluster unhealthy and its klusterlet."}),
	}
}

// TestDoctorConsumerRights: the SubjectAccessReview answers for the
// consumer named with --as, not for the caller (a cluster-admin), and
// namespaces without profiles get the Bound-binding hint.
func TestDoctorConsumerRights(t *testing.T) {
	ctx := framework.ContextFor(t)
	const ns = "doctor-rights"
	framework.CreateNamespace(ctx, t, env.Client, ns)
	now := time.Now().UTC().Truncate(time.Second)
	framework.CreateProfile(ctx, t, env.Client, profile(ns, "cluster1", "https://10.0.0.1:6443", env.Config.CAData))
	createSecret(t, copyOf(t, ns, "cluster1", "token", now.Add(24*time.Hour)))
	framework.GrantGetSecrets(ctx, t, env.Client, ns, "kueue")
	accessFix := fmt.Sprintf("The consumer system:serviceaccount:%s:argocd may not get Secret %s/cluster1-multikueue: grant get on secrets in namespace %s with a Role and RoleBinding, or cp-creds fails in the consumer's pod.", ns, ns, ns)
	tests := map[string]struct {
		namespace, as string
		want          []doctor.Row
	}{
		"the caller":                          {namespace: ns, want: []doctor.Row{row("cluster1", nil)}},
		"a consumer allowed to get secrets":   {namespace: ns, as: "system:serviceaccount:" + ns + ":kueue", want: []doctor.Row{row("cluster1", nil)}},
		"a consumer without a Role":           {namespace: ns, as: "system:serviceaccount:" + ns + ":argocd", want: []doctor.Row{row("cluster1", map[string]string{doctor.CheckAccess: accessFix})}},
		"a namespace no binding publishes to": {namespace: "default", want: []doctor.Row{doctor.NoProfiles("default")}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d := &doctor.Doctor{Client: env.Client, Settings: settings(tc.namespace), Now: func() time.Time { return now },
				Consumer: doctor.ParseIdentity(tc.as, nil)}

			got, err := d.Run(ctx)

			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDoctorWarnsOfUnscopedTokens: a namespace holding the copies of a
// ManagedServiceAccount that names no consumer namespaces (another
// consumer's, and the caller's own) gets a warning for each, read from the
// copies' metadata only; scoped copies get none.
func TestDoctorWarnsOfUnscopedTokens(t *testing.T) {
	ctx := framework.ContextFor(t)
	const ns = "doctor-unscoped"
	framework.CreateNamespace(ctx, t, env.Client, ns)
	expires := time.Now().Add(24 * time.Hour)
	for _, c := range []struct {
		cluster, msa string
		unscoped     bool
	}{{"c1", "argocd", true}, {"c2", "argocd", true}, {"c1", msa, true}, {"c1", "scoped", false}} {
		copied := framework.TokenCopy(ns, c.cluster, c.msa, "token", expires)
		if c.unscoped {
			copied.Annotations[cpcreds.AnnotationUnscoped] = "true"
		}
		createSecret(t, copied)
	}
	d := &doctor.Doctor{Client: env.Client, Settings: settings(ns), Now: time.Now}

	got := d.Warnings(ctx)

	want := []string{
		"Namespace doctor-unscoped holds another consumer's unscoped tokens of ManagedServiceAccount argocd (clusters c1, c2): it names no consumer namespaces, so the hub copies its token into every namespace that serves those clusters, and anyone who may read Secrets in any of them can act there with its rights. Set the annotation clusterprofile.open-cluster-management.io/consumer-namespaces on the ManagedServiceAccount (in each cluster's hub namespace) to the namespaces that need it.",
		"Namespace doctor-unscoped holds your unscoped tokens of ManagedServiceAccount multikueue (clusters c1): it names no consumer namespaces, so the hub copies its token into every namespace that serves those clusters, and anyone who may read Secrets in any of them can act there with its rights. Set the annotation clusterprofile.open-cluster-management.io/consumer-namespaces on the ManagedServiceAccount (in each cluster's hub namespace) to the namespaces that need it.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
