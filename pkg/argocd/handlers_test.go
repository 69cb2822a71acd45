package argocd

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

func TestProfileOfSecret(t *testing.T) {
	r := &Reconciler{settings: testSettings}
	secret := func(namespace, name string) client.Object {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	}
	cases := map[string]struct {
		obj  client.Object
		want []string
	}{
		"a cluster Secret → its profile":               {obj: secret("argocd", "cluster-c1"), want: []string{"argocd/c1"}},
		"its metadata alone → its profile":             {obj: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "cluster-c1"}}, want: []string{"argocd/c1"}},
		"another Secret in Argo CD's namespace → none": {obj: secret("argocd", "argocd-secret")},
		"the bare prefix → none":                       {obj: secret("argocd", "cluster-")},
		"a cluster Secret in another namespace → none": {obj: secret("team-a", "cluster-c1")},
		"nothing → none":                               {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, req := range r.profileOfSecret(context.Background(), tc.obj) {
				got = append(got, req.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProfileHoldingName: a Secret of any kind named cluster-<name> maps to
// the profile of that name only while it is there: a token copy named
// cluster-east-kueue queues nothing when no profile east-kueue exists.
func TestProfileHoldingName(t *testing.T) {
	c := fakeclient.New(utiltesting.MakeClusterProfile("argocd", "c1", testManager).Obj())
	r := &Reconciler{client: c, settings: testSettings}
	metadata := func(name string) client.Object {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: name}}
	}
	cases := map[string]struct {
		obj  client.Object
		want []string
	}{
		"a Secret holding a profile's name → the profile":        {obj: metadata("cluster-c1"), want: []string{"argocd/c1"}},
		"a Secret named like a profile that is not there → none": {obj: metadata("cluster-c1-kueue")},
		"another Secret → none":                                  {obj: metadata("argocd-secret")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, req := range r.profileHoldingName(context.Background(), tc.obj) {
				got = append(got, req.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}
