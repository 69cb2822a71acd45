package chart_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestTheChartsOwnBindingPublishesNothing: the agent's global binding in
// the release namespace exists for Placement only. Read by the very rule
// the mirror, the access providers and the syncer use, even once OCM has
// marked it Bound it publishes no profile, entry or token copy there.
func TestTheChartsOwnBindingPublishesNothing(t *testing.T) {
	objects := render(t, defaultRelease, gates{agent: true}.values(false))
	rendered := find(objects, "ManagedClusterSetBinding", "global")
	if rendered == nil {
		t.Fatal("the agent gate renders no global ManagedClusterSetBinding")
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rendered.Object, binding); err != nil {
		t.Fatal(err)
	}
	binding.Status.Conditions = []metav1.Condition{{Type: clusterv1beta2.ClusterSetBindingBoundType, Status: metav1.ConditionTrue}}
	if membership.Publishes(binding) {
		t.Errorf("the chart's global binding in %s publishes; it must carry %s: \"false\"",
			binding.Namespace, membership.AnnotationPublish)
	}
}

// TestPublishOptOutNeedsBindRights plays a namespace admin who may update
// ManagedClusterSetBindings in their namespace but may not bind the set
// (OCM checks managedclustersets/bind on create only): with a publishing
// gate on, the chart's policy refuses them adding, removing or changing a
// binding's publish annotation, and lets them change anything else; whoever
// may bind that set may change it.
func TestPublishOptOutNeedsBindRights(t *testing.T) {
	ctx := framework.ContextFor(t)
	rel := chartrender.Release{Name: "optout", Namespace: "chart-optout"}
	tenant := "chart-optout-tenant"
	framework.CreateNamespace(ctx, t, env.Client, rel.Namespace)
	framework.CreateNamespace(ctx, t, env.Client, tenant)
	for _, u := range render(t, rel, gates{mirror: true}.values(false)) {
		if strings.HasSuffix(u.GetName(), "-publish-opt-out") {
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })
		}
	}
	const optedOut, publishing = "optout-placement", "optout-fleet"
	for _, set := range []string{optedOut, publishing, "optout-other"} {
		framework.CreateClusterSet(ctx, t, env.Client, utiltesting.MakeClusterSet(set).Obj())
	}
	// As a cluster admin, who may bind every set.
	framework.CreateBinding(ctx, t, env.Client, utiltesting.MakeBinding(tenant, optedOut).
		Annotation(membership.AnnotationPublish, "false").Bound(true).Obj())
	framework.CreateBinding(ctx, t, env.Client, utiltesting.MakeBinding(tenant, publishing).Bound(true).Obj())

	users := map[string]client.Client{
		"a namespace admin":                     bindingsUser(ctx, t, "alice", tenant),
		"a namespace admin binding the sets":    bindingsUser(ctx, t, "bob", tenant, optedOut, publishing),
		"a namespace admin binding another set": bindingsUser(ctx, t, "carol", tenant, "optout-other"),
	}
	binding := func(set string) *clusterv1beta2.ManagedClusterSetBinding {
		return &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: set}}
	}
	annotate := func(value string) client.Patch {
		return mergePatch(fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, membership.AnnotationPublish, value))
	}
	attempts := map[string]func(c client.Client) error{
		"remove the opt-out": func(c client.Client) error {
			return c.Patch(ctx, binding(optedOut), annotate("null"), client.DryRunAll)
		},
		"turn the opt-out into publish: true": func(c client.Client) error {
			return c.Patch(ctx, binding(optedOut), annotate(`"true"`), client.DryRunAll)
		},
		"empty the opt-out's value": func(c client.Client) error {
			return c.Patch(ctx, binding(optedOut), annotate(`""`), client.DryRunAll)
		},
		"replace the opted-out binding without its annotations (PUT)": func(c client.Client) error {
			b := &clusterv1beta2.ManagedClusterSetBinding{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(binding(optedOut)), b); err != nil {
				return err
			}
			b.Annotations = nil
			return c.Update(ctx, b, client.DryRunAll)
		},
		"add an opt-out to a publishing binding": func(c client.Client) error {
			return c.Patch(ctx, binding(publishing), annotate(`"false"`), client.DryRunAll)
		},
		"label the opted-out binding": func(c client.Client) error {
			return c.Patch(ctx, binding(optedOut), mergePatch(`{"metadata":{"labels":{"team":"a"}}}`), client.DryRunAll)
		},
		"create a binding that carries the annotation": func(c client.Client) error {
			b := utiltesting.MakeBinding(tenant, "optout-new").Annotation(membership.AnnotationPublish, "true").Obj()
			b.Spec.ClusterSet = publishing
			return c.Create(ctx, b, client.DryRunAll)
		},
	}
	noBind := map[string]outcome{
		"remove the opt-out": deniedByPolicy, "turn the opt-out into publish: true": deniedByPolicy,
		"empty the opt-out's value": deniedByPolicy, "replace the opted-out binding without its annotations (PUT)": deniedByPolicy,
		"add an opt-out to a publishing binding": deniedByPolicy, "label the opted-out binding": allowed,
		"create a binding that carries the annotation": deniedByPolicy,
	}
	everything := map[string]outcome{}
	for name := range attempts {
		everything[name] = allowed
	}
	want := map[string]map[string]outcome{
		"a namespace admin":                     noBind,
		"a namespace admin binding the sets":    everything,
		"a namespace admin binding another set": noBind,
	}
	alice := users["a namespace admin"]
	awaitOutcome(deniedByPolicy, func() error { return attempts["remove the opt-out"](alice) })
	if diff := cmp.Diff(want, outcomesOf(users, attempts)); diff != "" {
		t.Errorf("who may change a binding's publish annotation (-want +got):\n%s", diff)
	}

	err := attempts["remove the opt-out"](alice)
	wantMessage := `requires create on managedclustersets/bind (cluster.open-cluster-management.io) for ManagedClusterSet "` +
		optedOut + `", which alice lacks`
	if err == nil || !strings.Contains(err.Error(), wantMessage) {
		t.Errorf("the refusal should say what is missing (%q); got %v", wantMessage, err)
	}
}

// bindingsUser grants user what a namespace admin has on
// ManagedClusterSetBindings in namespace and, for each of sets, the right
// to bind it (create on managedclustersets/bind, what OCM checks), and
// returns a client acting as that user once the grants are in effect.
func bindingsUser(ctx context.Context, t *testing.T, user, namespace string, sets ...string) client.Client {
	t.Helper()
	name := "bindings-" + user
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{clusterv1beta2.GroupName}, Resources: []string{"managedclustersetbindings"},
		Verbs: []string{"get", "create", "update", "patch", "delete"}}}}
	objects := []client.Object{role,
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}}
	if len(sets) > 0 {
		bind := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "chart-optout-bind-" + user}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{clusterv1beta2.GroupName}, Resources: []string{"managedclustersets/bind"},
			ResourceNames: sets, Verbs: []string{"create"}}}}
		grant := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: bind.Name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: bind.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
		objects = append(objects, bind, grant)
	}
	for _, o := range objects {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		if o.GetNamespace() == "" {
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
		}
	}
	c := impersonate(t, user)
	awaitOutcome(allowed, func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "none"}, &clusterv1beta2.ManagedClusterSetBinding{})
	})
	return c
}
