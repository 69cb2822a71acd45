package clusterprofile_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// TestWriterReadsTheServedCRD: the writer takes the list-map path only when
// it reads a CRD whose status lists are list-maps; a CRD that is not there
// is read as atomic lists (the merged write is safe on either), and one that
// cannot be read fails the plan.
func TestWriterReadsTheServedCRD(t *testing.T) {
	refused := errors.New("refused")
	cases := map[string]struct {
		client       client.Client
		wantListMaps bool
		wantErr      error
	}{
		"the chart's CRD":                {client: fakeclient.New(), wantListMaps: true},
		"a CRD with atomic status lists": {client: fakeclient.NewAtomic()},
		"no CRD":                         {client: fake.NewClientBuilder().WithScheme(scheme.New()).Build()},
		"a CRD that cannot be read": {
			client: fakeclient.Builder().WithInterceptorFuncs(interceptor.Funcs{
				Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return refused
				},
			}).Build(),
			wantErr: refused,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := clusterprofile.NewWriter(profilewrite.Identity{FieldManager: "clusterprofile-test"}, tc.client)
			got, err := w.ListMaps(context.Background())
			if got != tc.wantListMaps || !errors.Is(err, tc.wantErr) {
				t.Errorf("ListMaps = %v, %v; want %v, %v", got, err, tc.wantListMaps, tc.wantErr)
			}
		})
	}
}

// Two writers of one profile: the publisher, which creates it with its
// metadata and writes condition A and entry "a", and a second writer of
// condition B and entry "b" alone.
var (
	key        = types.NamespacedName{Namespace: "team", Name: "c1"}
	publisher  = profilewrite.Identity{FieldManager: "clusterprofile-publisher", ConditionTypes: []string{"A"}, AccessProviders: []string{"a"}}
	second     = profilewrite.Identity{FieldManager: "clusterprofile-second", ConditionTypes: []string{"B"}, AccessProviders: []string{"b"}}
	entryA     = cpv1alpha1.AccessProvider{Name: "a", Cluster: clientcmdv1.Cluster{Server: "https://a.example"}}
	entryB     = cpv1alpha1.AccessProvider{Name: "b", Cluster: clientcmdv1.Cluster{Server: "https://b.example"}}
	conditionA = metav1.Condition{Type: "A", Status: metav1.ConditionTrue, Reason: "ByA", LastTransitionTime: utiltesting.ConditionTime}
	conditionB = metav1.Condition{Type: "B", Status: metav1.ConditionFalse, Reason: "ByB", LastTransitionTime: utiltesting.ConditionTime}

	publisherDesire = profilewrite.Desire{
		Meta: &profilewrite.MetaApply{NamespacedName: key, Labels: map[string]string{cpv1alpha1.LabelClusterManagerKey: "open-cluster-management"},
			Spec: &cpv1alpha1.ClusterProfileSpec{DisplayName: "c1", ClusterManager: cpv1alpha1.ClusterManager{Name: "open-cluster-management"}}},
		Status: profilewrite.StatusApply{NamespacedName: key, Conditions: []metav1.Condition{conditionA}, AccessProviders: []cpv1alpha1.AccessProvider{entryA}},
	}
	secondDesire = profilewrite.Desire{
		Status: profilewrite.StatusApply{NamespacedName: key, Conditions: []metav1.Condition{conditionB}, AccessProviders: []cpv1alpha1.AccessProvider{entryB}},
	}
)

// written is the profile both writers leave, less its resourceVersion and
// managedFields (see writesOf).
func written(status cpv1alpha1.ClusterProfileStatus) *cpv1alpha1.ClusterProfile {
	p := utiltesting.MakeClusterProfile(key.Namespace, key.Name, "open-cluster-management").Obj()
	p.Status = status
	return p
}

// writesOf reads p's managedFields as "manager operation", once each: how
// each writer wrote, which the fake client records as the API server does
// (the subresource it leaves out).
func writesOf(p *cpv1alpha1.ClusterProfile) []string {
	var out []string
	for _, entry := range p.ManagedFields {
		out = append(out, entry.Manager+" "+string(entry.Operation))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func plan(t *testing.T, w *clusterprofile.Writer, c client.Client, desire profilewrite.Desire) *profilewrite.Write {
	t.Helper()
	current := &cpv1alpha1.ClusterProfile{}
	if err := c.Get(context.Background(), key, current); err != nil {
		current = nil
	}
	write, err := w.Plan(context.Background(), current, desire)
	if err != nil {
		t.Fatalf("%s: Plan: %v", w.Identity().FieldManager, err)
	}
	return write
}

func write(t *testing.T, w *clusterprofile.Writer, c client.Client, desire profilewrite.Desire) {
	t.Helper()
	if write := plan(t, w, c, desire); write != nil {
		if _, err := w.Execute(context.Background(), write); err != nil {
			t.Fatalf("%s: Execute: %v", w.Identity().FieldManager, err)
		}
	}
}

func read(t *testing.T, c client.Client) *cpv1alpha1.ClusterProfile {
	t.Helper()
	p := &cpv1alpha1.ClusterProfile{}
	if err := c.Get(context.Background(), key, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// without is p less what written leaves out.
func without(p *cpv1alpha1.ClusterProfile) *cpv1alpha1.ClusterProfile {
	p = p.DeepCopy()
	p.ResourceVersion, p.ManagedFields = "", nil
	return p
}

// TestTwoWritersKeepEachOthersShare: each writer's share of the status
// stays when the other writes, on either kind of CRD; on list-maps both
// apply, on atomic lists the second merges the whole lists (and the
// publisher's merge, whose lists it took over, is no longer recorded).
func TestTwoWritersKeepEachOthersShare(t *testing.T) {
	both := written(cpv1alpha1.ClusterProfileStatus{
		Conditions: []metav1.Condition{conditionA, conditionB}, AccessProviders: []cpv1alpha1.AccessProvider{entryA, entryB}})
	cases := map[string]struct {
		builder    func(...client.Object) *fake.ClientBuilder
		wantWrites []string
	}{
		"list-maps": {
			builder:    fakeclient.Builder,
			wantWrites: []string{"clusterprofile-publisher Apply", "clusterprofile-second Apply"},
		},
		"atomic lists": {
			builder:    fakeclient.AtomicBuilder,
			wantWrites: []string{"clusterprofile-publisher Apply", "clusterprofile-second Update"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := tc.builder().WithReturnManagedFields().Build()
			write(t, clusterprofile.NewWriter(publisher, c), c, publisherDesire)
			write(t, clusterprofile.NewWriter(second, c), c, secondDesire)

			got := read(t, c)
			if diff := cmp.Diff(both, without(got)); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWrites, writesOf(got)); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRemoveEntry: a writer removes an entry whoever wrote it, and nothing
// else, on either kind of CRD.
func TestRemoveEntry(t *testing.T) {
	for name, newClient := range map[string]func(...client.Object) client.WithWatch{
		"list-maps": fakeclient.New, "atomic lists": fakeclient.NewAtomic,
	} {
		t.Run(name, func(t *testing.T) {
			c := newClient()
			write(t, clusterprofile.NewWriter(publisher, c), c, publisherDesire)
			w := clusterprofile.NewWriter(second, c)
			write(t, w, c, secondDesire)

			returned, err := w.RemoveEntry(context.Background(), read(t, c), "a")
			if err != nil {
				t.Fatalf("RemoveEntry: %v", err)
			}
			want := written(cpv1alpha1.ClusterProfileStatus{
				Conditions: []metav1.Condition{conditionA, conditionB}, AccessProviders: []cpv1alpha1.AccessProvider{entryB}})
			if diff := cmp.Diff(want, without(read(t, c))); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(read(t, c), returned); diff != "" {
				t.Errorf("returned profile (-stored +returned):\n%s", diff)
			}
		})
	}
}

// TestOnAtomicListsAWriterSeesItsShareByKey: on atomic lists a writer's
// share of the status is its condition types and entry names, so once
// written (and its metadata owned, as managedFields say) the next plan
// writes nothing, and a withdrawal takes its share and nothing else. (On
// list-maps its share is what managedFields say its status apply owns,
// which the fake client does not record per subresource: see package
// fakeclient.)
func TestOnAtomicListsAWriterSeesItsShareByKey(t *testing.T) {
	c := fakeclient.AtomicBuilder().WithReturnManagedFields().Build()
	pub, sec := clusterprofile.NewWriter(publisher, c), clusterprofile.NewWriter(second, c)
	write(t, pub, c, publisherDesire)
	write(t, sec, c, secondDesire)

	for w, desire := range map[*clusterprofile.Writer]profilewrite.Desire{pub: publisherDesire, sec: secondDesire} {
		if got := plan(t, w, c, desire); got != nil {
			t.Errorf("%s: a second plan of the same desire writes %+v, want nothing", w.Identity().FieldManager, got)
		}
	}

	wrote, err := sec.Withdraw(context.Background(), c, read(t, c))
	if err != nil || !wrote {
		t.Fatalf("Withdraw = %v, %v; want a write", wrote, err)
	}
	want := written(cpv1alpha1.ClusterProfileStatus{
		Conditions: []metav1.Condition{conditionA}, AccessProviders: []cpv1alpha1.AccessProvider{entryA}})
	if diff := cmp.Diff(want, without(read(t, c))); diff != "" {
		t.Errorf("profile after the withdrawal (-want +got):\n%s", diff)
	}
}
