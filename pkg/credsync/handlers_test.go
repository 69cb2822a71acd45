package credsync

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
)

func keys(requests []reconcile.Request) []string {
	out := []string{}
	for _, r := range requests {
		out = append(out, r.String())
	}
	return out
}

func TestEventsMapToNamespaceAndClusterKeys(t *testing.T) {
	labelled := func(p *cpv1alpha1.ClusterProfile, cluster string) *cpv1alpha1.ClusterProfile {
		p.Labels[clusterprofile.LabelClusterName] = cluster
		return p
	}
	c := fakeclient.New(labelled(profile("kueue", "c1"), "c1"), labelled(profile("argocd", "c1"), "c1"),
		labelled(profile("kueue", "c2"), "c2"),
		// A forgery: labelled as c1's, named otherwise. Only the name counts.
		labelled(profile("kueue", "fake-c1"), "c1"))
	m := &keyMapper{client: c}
	ctx := context.Background()
	copyOf := DesiredCopies(profile("kueue", "c1"), "c1", []Source{tokenSource("c1", "m", "t")}, Rules{})[0]

	cases := map[string]struct {
		mapFunc func(context.Context, client.Object) []reconcile.Request
		obj     client.Object
		want    []string
	}{
		"a profile maps to its namespace and name": {m.ofProfile, labelled(profile("kueue", "c1"), "c1"), []string{"kueue/c1"}},
		"a profile's labels do not count":          {m.ofProfile, labelled(profile("kueue", "fake-c1"), "c1"), []string{"kueue/fake-c1"}},
		"a ManagedServiceAccount maps to every profile of its cluster": {m.ofClusterNamespace,
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "token"}}, []string{"argocd/c1", "kueue/c1"}},
		"a cluster without profiles maps nowhere": {m.ofClusterNamespace,
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "c9", Name: "token"}}, []string{}},
		"a synced copy maps back to its namespace and cluster": {m.ofCopy, copyOf, []string{"kueue/c1"}},
		"a Secret that is not a copy maps nowhere":             {m.ofCopy, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue", Name: "x"}}, []string{}},
		"another syncer's copy maps to the profile owning it": {m.ofCopy, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue", Name: "c1-m",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ClusterProfile", Name: "c1", UID: "u"},
				{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "v"}}}}, []string{"kueue/c1"}},
		"a copy of the wrong type maps nowhere": {m.ofCopy, profile("kueue", "c1"), []string{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := keys(tc.mapFunc(ctx, tc.obj))
			if diff := cmp.Diff(tc.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}
