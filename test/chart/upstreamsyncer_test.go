package chart_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// upstreamSyncerUser is managed-serviceaccount's ServiceAccount as its chart
// installs it, the chart's default tokenCopies.upstreamSyncers.
const upstreamSyncerUser = "system:serviceaccount:open-cluster-management-addon:managed-serviceaccount"

// upstreamCopyOf is managed-serviceaccount's own copy of msa's token for
// cluster: its label and the token, none of the manager's marks.
func upstreamCopyOf(ns, cluster, msa string) *corev1.Secret {
	s := syncedCopy(ns, cluster, msa)
	s.Annotations = nil
	return s
}

// TestCopiesWhileTheManagerYieldsToManagedServiceAccount plays, with the
// syncer's gate on and the chart's policies, managed-serviceaccount's own
// syncer, a namespace admin and the manager, on the copies of a consumer
// namespace while the manager's syncer yields: the upstream syncer writes
// its copies but never the manager's marks; the manager changes only the
// marks of the upstream syncer's copies, never their token, and may delete
// them (revocation never yields); the namespace admin does neither.
func TestCopiesWhileTheManagerYieldsToManagedServiceAccount(t *testing.T) {
	ctx := framework.ContextFor(t)
	rel := chartrender.Release{Name: "yield", Namespace: "chart-yield"}
	values := gates{credSyncer: true}.values(false)
	r := installForManager(ctx, t, rel, values)
	consumer := r.consumer
	framework.CreateNamespace(ctx, t, env.Client, consumer)
	for _, u := range render(t, rel, values) {
		if strings.HasSuffix(u.GetName(), "-token-copies") { // installForManager leaves it out
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })
		}
	}
	for _, s := range []*corev1.Secret{upstreamCopyOf(consumer, "u1", "msa"), syncedCopy(consumer, "m1", "msa")} {
		if err := env.Client.Create(ctx, s); err != nil { // as a cluster admin (break-glass)
			t.Fatal(err)
		}
	}
	upstream := namespaceSecretsUser(ctx, t, upstreamSyncerUser, consumer)
	mallory := namespaceSecretsUser(ctx, t, "mallory-yield", consumer)
	marks := fmt.Sprintf(`{"metadata":{"annotations":{%q:"u1",%q:"msa"}}}`, annotationFromCluster, annotationFromMSA)
	attempts := map[string]func(c client.Client) error{
		"create an unmarked copy": func(c client.Client) error {
			return c.Create(ctx, upstreamCopyOf(consumer, "u2", "msa"), client.DryRunAll)
		},
		"create a marked copy": func(c client.Client) error {
			return c.Create(ctx, syncedCopy(consumer, "u3", "msa"), client.DryRunAll)
		},
		"rotate the token of an unmarked copy": func(c client.Client) error {
			return c.Patch(ctx, upstreamCopyOf(consumer, "u1", "msa"), mergePatch(`{"data":{"token":"bmV3"}}`), client.DryRunAll)
		},
		"rotate the token of a marked copy, keeping the marks": func(c client.Client) error {
			return c.Patch(ctx, syncedCopy(consumer, "m1", "msa"), mergePatch(`{"data":{"token":"bmV3"}}`), client.DryRunAll)
		},
		"mark an unmarked copy": func(c client.Client) error {
			return c.Patch(ctx, upstreamCopyOf(consumer, "u1", "msa"), mergePatch(marks), client.DryRunAll)
		},
		"mark an unmarked copy and change its token": func(c client.Client) error {
			patch := strings.TrimSuffix(marks, "}") + `,"data":{"token":"bWluZQ=="}}`
			return c.Patch(ctx, upstreamCopyOf(consumer, "u1", "msa"), mergePatch(patch), client.DryRunAll)
		},
		"take the marks off a marked copy": func(c client.Client) error {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null,%q:null}}}`, annotationFromCluster, annotationFromMSA)
			return c.Patch(ctx, syncedCopy(consumer, "m1", "msa"), mergePatch(patch), client.DryRunAll)
		},
		"delete an unmarked copy": func(c client.Client) error {
			return c.Delete(ctx, upstreamCopyOf(consumer, "u1", "msa"), client.DryRunAll)
		},
	}
	want := map[string]map[string]outcome{
		"the upstream syncer": {
			"create an unmarked copy": allowed, "create a marked copy": deniedByPolicy,
			"rotate the token of an unmarked copy": allowed, "rotate the token of a marked copy, keeping the marks": allowed,
			"mark an unmarked copy": deniedByPolicy, "mark an unmarked copy and change its token": deniedByPolicy,
			"take the marks off a marked copy": deniedByPolicy, "delete an unmarked copy": allowed,
		},
		"a namespace admin": {
			"create an unmarked copy": deniedByPolicy, "create a marked copy": deniedByPolicy,
			"rotate the token of an unmarked copy": deniedByPolicy, "rotate the token of a marked copy, keeping the marks": deniedByPolicy,
			"mark an unmarked copy": deniedByPolicy, "mark an unmarked copy and change its token": deniedByPolicy,
			"take the marks off a marked copy": deniedByPolicy, "delete an unmarked copy": allowed,
		},
		"the manager": {
			"create an unmarked copy": deniedByPolicy, "create a marked copy": allowed,
			"rotate the token of an unmarked copy": deniedByPolicy, "rotate the token of a marked copy, keeping the marks": allowed,
			"mark an unmarked copy": allowed, "mark an unmarked copy and change its token": deniedByPolicy,
			"take the marks off a marked copy": allowed, "delete an unmarked copy": allowed,
		},
	}
	clients := map[string]client.Client{"the upstream syncer": upstream, "a namespace admin": mallory, "the manager": r.c}
	awaitOutcome(deniedByPolicy, func() error { return attempts["create a marked copy"](mallory) })
	if diff := cmp.Diff(want, outcomesOf(clients, attempts)); diff != "" {
		t.Errorf("who may write what (-want +got):\n%s", diff)
	}
}
