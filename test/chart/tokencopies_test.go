package chart_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestOnlyTheManagerWritesTokenCopies plays a user who may create and
// change Secrets in a consumer namespace and tries to plant a token there
// that cp-creds would hand to the consumer: with the syncer's gate on, the
// chart's token-copies policy refuses every Secret that carries a mark of a
// copy, unless the manager writes it.
func TestOnlyTheManagerWritesTokenCopies(t *testing.T) {
	ctx := framework.ContextFor(t)
	rel := chartrender.Release{Name: "tokens", Namespace: "chart-tokens"}
	consumer := "chart-tokens-consumer"
	framework.CreateNamespace(ctx, t, env.Client, rel.Namespace)
	framework.CreateNamespace(ctx, t, env.Client, consumer)
	for _, u := range render(t, rel, gates{credSyncer: true}.values(false)) {
		if strings.HasSuffix(u.GetName(), "-token-copies") {
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })
		}
	}
	for _, s := range []*corev1.Secret{syncedCopy(consumer, "c1", "msa"), plainSecret(consumer, "plain")} {
		if err := env.Client.Create(ctx, s); err != nil { // as a cluster admin (break-glass)
			t.Fatal(err)
		}
	}
	mallory := namespaceSecretsUser(ctx, t, "mallory", consumer)
	manager := namespaceSecretsUser(ctx, t, serviceAccountUser(rel), consumer)

	planted := syncedCopy(consumer, "c2", "msa")
	annotatedOnly := syncedCopy(consumer, "c3", "msa")
	annotatedOnly.Labels = nil
	attempts := map[string]func(c client.Client) error{
		"create a Secret that is not a copy": func(c client.Client) error {
			return c.Create(ctx, plainSecret(consumer, "other"), client.DryRunAll)
		},
		"plant a copy": func(c client.Client) error { return c.Create(ctx, planted.DeepCopy(), client.DryRunAll) },
		"plant a Secret with the source annotations only": func(c client.Client) error {
			return c.Create(ctx, annotatedOnly.DeepCopy(), client.DryRunAll)
		},
		"turn a Secret into a copy": func(c client.Client) error {
			patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"c1-msa"}}}`, labelSyncedFrom)
			return c.Patch(ctx, plainSecret(consumer, "plain"), mergePatch(patch), client.DryRunAll)
		},
		"swap the token of a copy": func(c client.Client) error {
			return c.Patch(ctx, syncedCopy(consumer, "c1", "msa"), mergePatch(`{"data":{"token":"bWluZQ=="}}`), client.DryRunAll)
		},
		"delete a copy": func(c client.Client) error {
			return c.Delete(ctx, syncedCopy(consumer, "c1", "msa"), client.DryRunAll)
		},
	}
	want := map[string]map[string]outcome{
		"mallory": {
			"create a Secret that is not a copy": allowed, "plant a copy": deniedByPolicy,
			"plant a Secret with the source annotations only": deniedByPolicy, "turn a Secret into a copy": deniedByPolicy,
			"swap the token of a copy": deniedByPolicy, "delete a copy": allowed,
		},
		"the manager": {
			"create a Secret that is not a copy": allowed, "plant a copy": allowed,
			"plant a Secret with the source annotations only": allowed, "turn a Secret into a copy": allowed,
			"swap the token of a copy": allowed, "delete a copy": allowed,
		},
	}
	// Wait for the policy to take effect, then ask for everything.
	awaitOutcome(deniedByPolicy, func() error { return attempts["plant a copy"](mallory) })
	got := outcomesOf(map[string]client.Client{"mallory": mallory, "the manager": manager}, attempts)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("who may write what (-want +got):\n%s", diff)
	}
}

// namespaceSecretsUser grants user every write on Secrets in namespace (what
// a namespace admin has) and returns a client acting as that user.
func namespaceSecretsUser(ctx context.Context, t *testing.T, user, namespace string) client.Client {
	t.Helper()
	name := "secrets-" + strings.NewReplacer(":", "-").Replace(user)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create", "update", "patch", "delete"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	for _, o := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	c := impersonate(t, user)
	awaitOutcome(allowed, func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "plain"}, &corev1.Secret{})
	})
	return c
}

// TestManagerWritesNoCopyOrProfileInAManagedClusterNamespace plays the
// manager's ServiceAccount (mirror and syncer on, the chart's RBAC and
// policies) against ManagedCluster namespaces, recognised by the label
// open-cluster-management.io/cluster-name whatever its value: another
// cluster's token copy and a profile of ours must never land there, where
// that cluster's agents hold rights, while the same writes in a consumer
// namespace go through, and a copy already there can still be deleted.
func TestManagerWritesNoCopyOrProfileInAManagedClusterNamespace(t *testing.T) {
	ctx := framework.ContextFor(t)
	rel := chartrender.Release{Name: "clusterns", Namespace: "chart-clusterns"}
	r := installForManager(ctx, t, rel, gates{mirror: true, credSyncer: true}.values(false))
	label := "open-cluster-management.io/cluster-name"
	namespaces := map[string]*corev1.Namespace{
		"a consumer namespace": {ObjectMeta: metav1.ObjectMeta{Name: "chart-clusterns-consumer"}},
		"a cluster's namespace": {ObjectMeta: metav1.ObjectMeta{Name: "chart-clusterns-own",
			Labels: map[string]string{label: "chart-clusterns-own"}}},
		"a namespace labelled for another cluster": {ObjectMeta: metav1.ObjectMeta{Name: "chart-clusterns-other",
			Labels: map[string]string{label: "c9"}}},
		"a namespace labelled with no cluster": {ObjectMeta: metav1.ObjectMeta{Name: "chart-clusterns-empty",
			Labels: map[string]string{label: ""}}},
	}
	for _, ns := range namespaces {
		if err := env.Client.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, syncedCopy(ns.Name, "c1", "msa")); err != nil { // as a cluster admin
			t.Fatal(err)
		}
	}
	attempts := map[string]func(ns string) error{
		"create a token copy": func(ns string) error {
			return r.c.Create(ctx, syncedCopy(ns, "c2", "msa"), client.DryRunAll)
		},
		"update a token copy": func(ns string) error {
			return r.c.Patch(ctx, syncedCopy(ns, "c1", "msa"), mergePatch(`{"data":{"token":"dDI="}}`), client.DryRunAll)
		},
		"delete a token copy": func(ns string) error {
			return r.c.Delete(ctx, syncedCopy(ns, "c1", "msa"), client.DryRunAll)
		},
		"create a ClusterProfile": func(ns string) error { return applyProfile(ctx, r, ns, "c1") },
	}
	refused := map[string]outcome{"create a token copy": deniedByPolicy, "update a token copy": deniedByPolicy,
		"delete a token copy": allowed, "create a ClusterProfile": deniedByPolicy}
	want := map[string]map[string]outcome{
		"a consumer namespace": {"create a token copy": allowed, "update a token copy": allowed,
			"delete a token copy": allowed, "create a ClusterProfile": allowed},
		"a cluster's namespace":                    refused,
		"a namespace labelled for another cluster": refused,
		"a namespace labelled with no cluster":     refused,
	}
	for _, access := range []string{"create a token copy", "create a ClusterProfile"} {
		awaitOutcome(deniedByPolicy, func() error { return attempts[access](namespaces["a cluster's namespace"].Name) })
	}
	got := map[string]map[string]outcome{}
	for kind, ns := range namespaces {
		got[kind] = map[string]outcome{}
		for name, attempt := range attempts {
			got[kind][name] = outcomeOf(attempt(ns.Name))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the manager may write where (-want +got):\n%s", diff)
	}

	for access, message := range map[string]string{
		"create a token copy":     "clusterprofile-manager may not write token copies into a ManagedCluster namespace",
		"create a ClusterProfile": "clusterprofile-manager may not create ClusterProfiles in a ManagedCluster namespace",
	} {
		if err := attempts[access](namespaces["a cluster's namespace"].Name); err == nil || !strings.Contains(err.Error(), message) {
			t.Errorf("%s in a cluster's namespace: the refusal should say %q; got %v", access, message, err)
		}
	}
}
