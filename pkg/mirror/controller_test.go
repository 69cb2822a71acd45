package mirror

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// profilesOf are the profiles c holds, by namespace/name.
func profilesOf(t *testing.T, c client.Client) map[string]cpv1alpha1.ClusterProfile {
	t.Helper()
	list := &cpv1alpha1.ClusterProfileList{}
	if err := c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	out := map[string]cpv1alpha1.ClusterProfile{}
	for _, p := range list.Items {
		out[p.Namespace+"/"+p.Name] = p
	}
	return out
}

// viewsOf are the profiles c holds as a consumer reads them.
func viewsOf(profiles map[string]cpv1alpha1.ClusterProfile) map[string]utiltesting.ProfileView {
	out := map[string]utiltesting.ProfileView{}
	for key, p := range profiles {
		out[key] = utiltesting.ViewOf(&p)
	}
	return out
}

// publishedView is c1's profile in ns as the mirror publishes it, with status.
func publishedView(ns string, status cpv1alpha1.ClusterProfileStatus) utiltesting.ProfileView {
	p := utiltesting.MakeClusterProfile(ns, "c1", testManager).Obj()
	p.Labels["open-cluster-management.io/cluster-name"] = "c1"
	p.Labels["multicluster.x-k8s.io/clusterset"] = "dev"
	p.Status = status
	return utiltesting.ViewOf(p)
}

// TestReconcile runs the mirror's Reconcile against a fake client carrying
// the production indexes, on either kind of CRD, with a fake event recorder:
// want objects and want events. On atomic status lists the mirror also
// records the names of the properties it wrote, on list-maps it does not.
func TestReconcile(t *testing.T) {
	cluster := func() *clusterv1.ManagedCluster {
		return utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Version("v1.31.0").Claim("region", "eu").Claim("", "nameless").Joined().Obj()
	}
	joined := metav1.Condition{Type: "Joined", Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined",
		Message: "Managed cluster joined", LastTransitionTime: utiltesting.ConditionTime}
	status := cpv1alpha1.ClusterProfileStatus{Version: cpv1alpha1.ClusterVersion{Kubernetes: "v1.31.0"},
		Conditions: []metav1.Condition{joined}, Properties: []cpv1alpha1.Property{{Name: "region", Value: "eu"},
			{Name: "cluster.clusterset.k8s.io", Value: "c1"}, {Name: "clusterset.k8s.io", Value: "dev"}}}
	world := func() []client.Object {
		return []client.Object{utiltesting.MakeClusterSet("dev").Obj(), utiltesting.NamespaceObj("team"),
			utiltesting.MakeBinding("team", "dev").Bound(true).Obj()}
	}
	cases := map[string]struct {
		objects    []client.Object
		wantViews  map[string]utiltesting.ProfileView
		wantEvents []string
	}{
		"a bound cluster is published; a claim the schema rejects is reported": {
			objects:    append(world(), cluster()),
			wantViews:  map[string]utiltesting.ProfileView{"team/c1": publishedView("team", status)},
			wantEvents: []string{`Warning ClusterClaimsSkipped Claims left out of ClusterProfile properties: "" (empty name)`},
		},
		"a cluster that left its set loses its profile": {
			objects: append(world(), utiltesting.MakeManagedCluster("c1").ClusterSet("prod").Obj(),
				func() client.Object {
					p := utiltesting.MakeClusterProfile("team", "c1", testManager).Obj()
					return p
				}()),
			wantViews: map[string]utiltesting.ProfileView{},
		},
		"another manager's profile under the name is a clash, reported, never written": {
			objects:   append(world(), cluster(), utiltesting.MakeClusterProfile("team", "c1", "fleet").Obj()),
			wantViews: map[string]utiltesting.ProfileView{"team/c1": utiltesting.ViewOf(utiltesting.MakeClusterProfile("team", "c1", "fleet").Obj())},
			wantEvents: []string{
				`Warning ClusterClaimsSkipped Claims left out of ClusterProfile properties: "" (empty name)`,
				`Warning ClusterProfileNameClash ClusterProfile team/c1 belongs to cluster manager "fleet"; not publishing this cluster in namespace team until it is gone`,
			},
		},
		"an id another cluster holds is not published, and reported": {
			objects: append(world(),
				utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Version("v1.31.0").Claim("region", "eu").Claim("id.k8s.io", "8f1c").Joined().Obj(),
				utiltesting.MakeManagedCluster("c2").Claim("id.k8s.io", "8f1c").Obj(),
				idRecordLease(DefaultNamespace, IDRecord{ID: "8f1c", Holder: "c2"})),
			wantViews: map[string]utiltesting.ProfileView{"team/c1": publishedView("team", cpv1alpha1.ClusterProfileStatus{
				Version: status.Version, Conditions: status.Conditions, Properties: []cpv1alpha1.Property{{Name: "region", Value: "eu"},
					{Name: "clusterset.k8s.io", Value: "dev"}}})},
			wantEvents: []string{`Warning ClusterIDConflict The cluster id "8f1c" is held by ManagedCluster c2 (its recorded id.k8s.io claim), ` +
				`which published it first: ids stay with their holder, so this cluster's ClusterProfiles carry no cluster.clusterset.k8s.io property ` +
				`(nor id.k8s.io) until c2 releases it (drops the claim, or is deleted)`},
		},
		"an id only this cluster holds is its id": {
			objects: append(world(),
				utiltesting.MakeManagedCluster("c1").ClusterSet("dev").Version("v1.31.0").Claim("region", "eu").Claim("id.k8s.io", "8f1c").Joined().Obj(),
				utiltesting.MakeManagedCluster("c2").Claim("id.k8s.io", "other").Obj()),
			wantViews: map[string]utiltesting.ProfileView{"team/c1": publishedView("team", cpv1alpha1.ClusterProfileStatus{
				Version: status.Version, Conditions: status.Conditions, Properties: []cpv1alpha1.Property{{Name: "region", Value: "eu"},
					{Name: "id.k8s.io", Value: "8f1c"}, {Name: "cluster.clusterset.k8s.io", Value: "8f1c"}, {Name: "clusterset.k8s.io", Value: "dev"}}})},
		},
		"a binding in a ManagedCluster's namespace publishes nothing there and is reported on the binding": {
			objects: []client.Object{utiltesting.MakeClusterSet("dev").Obj(), cluster(),
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "c2", Labels: map[string]string{"open-cluster-management.io/cluster-name": "c2"}}},
				utiltesting.MakeBinding("c2", "dev").Bound(true).Obj(),
				// One of ours left there from before the label: deleted.
				utiltesting.MakeClusterProfile("c2", "c1", testManager).Obj()},
			wantViews: map[string]utiltesting.ProfileView{},
			wantEvents: []string{
				`Warning ClusterClaimsSkipped Claims left out of ClusterProfile properties: "" (empty name)`,
				"Warning ClusterNamespaceNotPublished Namespace c2 is a ManagedCluster's namespace (label open-cluster-management.io/cluster-name), " +
					"where that cluster's agents hold rights: no ClusterProfile, access provider entry or token copy is published through this binding; it still serves Placement",
			},
		},
	}
	for crd, newClient := range map[string]func(...client.Object) client.WithWatch{
		"list-maps": newFakeClient, "atomic lists": newAtomicFakeClient,
	} {
		for name, tc := range cases {
			t.Run(crd+"/"+name, func(t *testing.T) {
				ctx := context.Background()
				c := newClient(tc.objects...)
				recorder := events.NewFakeRecorder(10)
				r := NewReconciler(c, c, recorder, Options{ManagerName: testManager, Namespace: DefaultNamespace})
				req := ctrl.Request{NamespacedName: types.NamespacedName{Name: "c1"}}

				if _, err := r.Reconcile(ctx, req); err != nil {
					t.Fatalf("Reconcile: %v", err)
				}
				profiles := profilesOf(t, c)
				if diff := cmp.Diff(tc.wantViews, viewsOf(profiles)); diff != "" {
					t.Errorf("profiles (-want +got):\n%s", diff)
				}
				wantRecords := map[string]string{}
				if crd == "atomic lists" {
					wantRecords = propertyRecords(tc.wantViews)
				}
				if diff := cmp.Diff(wantRecords, recordsOf(profiles)); diff != "" {
					t.Errorf("records of the mirrored property names (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.wantEvents, utiltesting.DrainEvents(recorder)); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}

				// A second reconcile of the same world changes and reports
				// nothing. (The fake client returns no managedFields, so the
				// resourceVersion may move: the mirror cannot see it owns
				// its metadata, nor on list-maps its status, and applies
				// them again, unchanged.)
				if _, err := r.Reconcile(ctx, req); err != nil {
					t.Fatalf("second Reconcile: %v", err)
				}
				if diff := cmp.Diff(profiles, profilesOf(t, c), cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion")); diff != "" {
					t.Errorf("the second reconcile changed profiles (-first +second):\n%s", diff)
				}
				if got := utiltesting.DrainEvents(recorder); len(got) > 0 {
					t.Errorf("the second reconcile reported again: %v", got)
				}
			})
		}
	}
}

// recordsOf are the mirror's records of the property names it wrote, by
// profile.
func recordsOf(profiles map[string]cpv1alpha1.ClusterProfile) map[string]string {
	out := map[string]string{}
	for key, p := range profiles {
		if record, ok := p.Annotations[AnnotationMirroredProperties]; ok {
			out[key] = record
		}
	}
	return out
}

// propertyRecords are the records the mirror keeps on atomic status lists
// for the profiles of views it publishes: every property name, sorted.
func propertyRecords(views map[string]utiltesting.ProfileView) map[string]string {
	out := map[string]string{}
	for key, v := range views {
		if v.Manager != testManager {
			continue
		}
		raw, err := json.Marshal(slices.Sorted(maps.Keys(v.Properties)))
		if err != nil {
			panic(err)
		}
		out[key] = string(raw)
	}
	return out
}
