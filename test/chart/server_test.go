package chart_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestRenderedObjectsPassServerValidation sends every rendered object of
// every variant to the API server as a dry-run create, so the server's own
// schema, validation and admission (including the compilation of the
// admission policy's CEL) judge them. The CRD goes in for real first, as
// `helm install` would, over the copy the suite installed.
func TestRenderedObjectsPassServerValidation(t *testing.T) {
	ctx := framework.ContextFor(t)
	rel := chartrender.Release{Name: "dryrun", Namespace: "chart-dryrun"}
	framework.CreateNamespace(ctx, t, env.Client, rel.Namespace)
	for _, v := range allVariants() {
		t.Run(v.String(), func(t *testing.T) {
			for _, u := range render(t, rel, v.values(v.cleanup)) {
				if u.GetKind() == "CustomResourceDefinition" {
					createOrReplace(ctx, t, env.Client, u)
					continue
				}
				if err := env.Client.Create(ctx, u.DeepCopy(), client.DryRunAll); err != nil {
					t.Errorf("the API server rejects %s: %v", objectKey(u), err)
				}
			}
		})
	}
}

// createOrReplace writes u for real: a create, or an update of the object
// of that name.
func createOrReplace(ctx context.Context, t testing.TB, c client.Client, u *unstructured.Unstructured) {
	t.Helper()
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(u.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(u), existing)
	switch {
	case apierrors.IsNotFound(err):
		err = c.Create(ctx, u.DeepCopy())
	case err == nil:
		update := u.DeepCopy()
		update.SetResourceVersion(existing.GetResourceVersion())
		err = c.Update(ctx, update)
	}
	if err != nil {
		t.Fatalf("writing %s: %v", objectKey(u), err)
	}
}
