package credsync_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/pkg/doctor"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestTheDoctorNamesWhyACopyIsMissing: against the real manager (unscoped
// tokens copied nowhere), each reason the syncer has for leaving a token
// out of a consumer namespace is the one the doctor's token check names,
// with its fix; and the copy the syncer did write passes.
func TestTheDoctorNamesWhyACopyIsMissing(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster, consumer, optedOut = "why-c1", "why-kueue", "why-optout"
	fleet(ctx, t, "why-set", []string{cluster}, consumer)
	framework.CreateNamespace(ctx, t, env.Client, optedOut)
	framework.CreateBinding(ctx, t, env.Client, utiltesting.MakeBinding(optedOut, "why-set").
		Annotation(membership.AnnotationPublish, "false").Bound(true).Obj())
	labelClusterNamespace(ctx, t, cluster)

	scope(ctx, t, createMSA(ctx, t, cluster, "scoped-here", "token-1", expiry, true), consumer)
	scope(ctx, t, createMSA(ctx, t, cluster, "unlabelled", "token-2", expiry, false), consumer)
	scope(ctx, t, createMSA(ctx, t, cluster, "elsewhere", "token-3", expiry, true), "kueue-system")
	createMSA(ctx, t, cluster, "unscoped", "token-4", expiry, true)
	noToken := &authv1beta1.ManagedServiceAccount{}
	noToken.Namespace, noToken.Name = cluster, "no-token"
	noToken.Labels = map[string]string{"authentication.open-cluster-management.io/sync-to-clusterprofile": "true"}
	noToken.Annotations = map[string]string{"clusterprofile.open-cluster-management.io/consumer-namespaces": consumer}
	noToken.Spec.Rotation = authv1beta1.ManagedServiceAccountRotation{Enabled: true}
	if err := env.Client.Create(ctx, noToken); err != nil {
		t.Fatal(err)
	}
	scope(ctx, t, createMSA(ctx, t, cluster, "to-opted-out", "token-5", expiry, true), optedOut)
	scope(ctx, t, createMSA(ctx, t, cluster, "to-cluster-ns", "token-6", expiry, true), cluster)

	// The mirror alone: every fact says copy, but no syncer runs.
	stop := framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{"ClusterProfile": true}})
	g := NewWithT(t)
	g.Eventually(func() doctor.Check { return tokenCheck(t, ctx, consumer, cluster, "scoped-here") }, framework.Timeout, framework.Interval).
		Should(Equal(doctor.Check{Name: doctor.CheckToken, Fix: "Secret why-kueue/why-c1-scoped-here does not exist, though ManagedServiceAccount why-c1/scoped-here asks for its token here and has one: the manager's credential syncer is off (chart gate clusterProfileCredSyncer) or yields to managed-serviceaccount's own syncer, which then writes the copies (Event YieldingToUpstream: kubectl get events -A --field-selector reason=YieldingToUpstream). Turn the gate on, or upstream's syncer off."}))
	stop()

	framework.StartManager(t, env, framework.ManagerOptions{Gates: syncGates, UnscopedTokens: credsync.UnscopedNowhere})
	expectCopiesIn(t, ctx, "why-c1-scoped-here", consumer)
	// What another writer may put where ours does not publish: a profile in
	// the opted-out namespace and in the cluster's namespace (under another
	// manager's name, which our mirror leaves alone).
	for _, ns := range []string{optedOut, cluster} {
		p := utiltesting.MakeClusterProfile(ns, cluster, "another-writer").Obj()
		framework.CreateProfile(ctx, t, env.Client, p)
	}

	want := map[string]doctor.Check{
		"scoped-here": {Name: doctor.CheckToken, OK: true},
		"unlabelled":  {Name: doctor.CheckToken, Fix: "Secret why-kueue/why-c1-unlabelled does not exist: ManagedServiceAccount why-c1/unlabelled is not labelled authentication.open-cluster-management.io/sync-to-clusterprofile=true, so its token is not synced. Label it."},
		"elsewhere":   {Name: doctor.CheckToken, Fix: "Secret why-kueue/why-c1-elsewhere does not exist: ManagedServiceAccount why-c1/elsewhere sends its token only to kueue-system (annotation clusterprofile.open-cluster-management.io/consumer-namespaces). Add why-kueue to it."},
		"unscoped":    {Name: doctor.CheckToken, Fix: "Secret why-kueue/why-c1-unscoped does not exist: ManagedServiceAccount why-c1/unscoped names no consumer namespaces (annotation clusterprofile.open-cluster-management.io/consumer-namespaces), and such a token is copied only while the manager copies unscoped tokens everywhere (chart value credentialSyncer.unscopedTokens; nowhere copies it nowhere). Annotate it with clusterprofile.open-cluster-management.io/consumer-namespaces: why-kueue."},
		"no-token":    {Name: doctor.CheckToken, Fix: "Secret why-kueue/why-c1-no-token does not exist: ManagedServiceAccount why-c1/no-token has no token yet (no status.tokenSecretRef). Check its conditions and the managed-serviceaccount agent on cluster why-c1."},
		"absent":      {Name: doctor.CheckToken, Fix: "Secret why-kueue/why-c1-absent does not exist: there is no ManagedServiceAccount absent in hub namespace why-c1. Create it there, labelled authentication.open-cluster-management.io/sync-to-clusterprofile=true and annotated clusterprofile.open-cluster-management.io/consumer-namespaces: why-kueue."},
	}
	for name, w := range want {
		g.Expect(tokenCheck(t, ctx, consumer, cluster, name)).To(Equal(w), "the token check for ManagedServiceAccount %s", name)
	}
	g.Expect(tokenCheck(t, ctx, optedOut, cluster, "to-opted-out")).To(Equal(doctor.Check{Name: doctor.CheckToken,
		Fix: `Secret why-optout/why-c1-to-opted-out does not exist: no Bound ManagedClusterSetBinding in why-optout publishes cluster why-c1 (none selects it, none is Bound, or each is annotated clusterprofile.open-cluster-management.io/publish: "false"), so none of its tokens is copied here; this profile was written by another writer. Bind a set that holds why-c1 here, without the opt-out.`}))
	g.Expect(tokenCheck(t, ctx, cluster, cluster, "to-cluster-ns")).To(Equal(doctor.Check{Name: doctor.CheckToken,
		Fix: "Secret why-c1/why-c1-to-cluster-ns does not exist: namespace why-c1 is a managed cluster's namespace on the hub (label open-cluster-management.io/cluster-name), and the credential syncer copies no token into one. Consume from a namespace of your own, with a ManagedClusterSetBinding there."}))
}

// tokenCheck is the doctor's token check on cluster's profile in
// namespace for the consumer of ManagedServiceAccount msa, as the admin.
func tokenCheck(t *testing.T, ctx context.Context, namespace, cluster, msa string) doctor.Check {
	t.Helper()
	d := &doctor.Doctor{Client: env.Client, Now: time.Now, Settings: doctor.Settings{Namespace: namespace,
		Providers: []string{"open-cluster-management"}, ManagedServiceAccount: msa, ManagerName: clusterprofile.DefaultManagerName,
		ExpiryMargin: doctor.DefaultExpiryMargin}}
	rows, err := d.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Cluster != cluster {
			continue
		}
		for _, c := range r.Checks {
			if c.Name == doctor.CheckToken {
				return c
			}
		}
	}
	return doctor.Check{}
}

// labelClusterNamespace labels the cluster's namespace as OCM's registration
// controller does.
func labelClusterNamespace(ctx context.Context, t *testing.T, cluster string) {
	t.Helper()
	ns := &corev1.Namespace{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: cluster}, ns); err != nil {
		t.Fatal(err)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[membership.LabelClusterNamespace] = cluster
	if err := env.Client.Update(ctx, ns); err != nil {
		t.Fatal(err)
	}
}
