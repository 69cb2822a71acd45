package chart_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/hack/chartrender"
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
	deadline := time.Now().Add(10 * time.Second)
	for outcomeOf(attempts["plant a copy"](mallory)) != deniedByPolicy && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := map[string]map[string]outcome{"mallory": {}, "the manager": {}}
	for name, attempt := range attempts {
		got["mallory"][name] = outcomeOf(attempt(mallory))
		got["the manager"][name] = outcomeOf(attempt(manager))
	}
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
	deadline := time.Now().Add(10 * time.Second)
	for outcomeOf(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "plain"}, &corev1.Secret{})) != allowed && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	return c
}
