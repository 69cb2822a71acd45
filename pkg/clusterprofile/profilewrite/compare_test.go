package profilewrite

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

var transition = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

func TestMetaUpToDate(t *testing.T) {
	current := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "1", "other": "x"}},
		Spec: cpv1alpha1.ClusterProfileSpec{DisplayName: "c1", ClusterManager: cpv1alpha1.ClusterManager{Name: "m"}}}
	want := MetaApply{Labels: map[string]string{"a": "1"},
		Spec: &cpv1alpha1.ClusterProfileSpec{DisplayName: "c1", ClusterManager: cpv1alpha1.ClusterManager{Name: "m"}}}
	owns := func(labels ...string) Ownership {
		o := emptyOwnership()
		o.Labels = sets.New(labels...)
		o.Spec = sets.New("displayName", "clusterManager.name")
		return o
	}
	cases := map[string]struct {
		want MetaApply
		own  Ownership
		ok   bool
	}{
		"values there and owned; another writer's label is not ours to judge": {want: want, own: owns("a"), ok: true},
		"value there but owned by someone else":                               {want: want, own: owns(), ok: false},
		"an owned label is no longer wanted":                                  {want: want, own: owns("a", "gone"), ok: false},
		"a value differs": {want: MetaApply{Labels: map[string]string{"a": "2"}, Spec: want.Spec},
			own: owns("a"), ok: false},
		"spec not owned": {want: want, own: func() Ownership { o := owns("a"); o.Spec = sets.New("displayName"); return o }(), ok: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := MetaUpToDate(current, tc.want, tc.own); got != tc.ok {
				t.Errorf("MetaUpToDate = %v, want %v", got, tc.ok)
			}
		})
	}
}

func TestStatusUpToDate(t *testing.T) {
	joined := metav1.Condition{Type: "Joined", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: transition}
	provider := cpv1alpha1.AccessProvider{Name: "ocm", Cluster: clientcmdv1.Cluster{Server: "https://hub:9092/c1",
		Extensions: []clientcmdv1.NamedExtension{{Name: "client.authentication.k8s.io/exec",
			Extension: runtime.RawExtension{Raw: []byte(`{"clusterName":"c1"}`)}}}}}
	current := &cpv1alpha1.ClusterProfile{Status: cpv1alpha1.ClusterProfileStatus{
		Version:    cpv1alpha1.ClusterVersion{Kubernetes: "v1.31.0"},
		Conditions: []metav1.Condition{joined, {Type: "Theirs", Status: metav1.ConditionTrue, Reason: "R"}},
		Properties: []cpv1alpha1.Property{{Name: "region", Value: "eu"}},
		// Re-serialised by the API server: same JSON value, other bytes.
		AccessProviders: []cpv1alpha1.AccessProvider{{Name: "ocm", Cluster: clientcmdv1.Cluster{Server: "https://hub:9092/c1",
			Extensions: []clientcmdv1.NamedExtension{{Name: "client.authentication.k8s.io/exec",
				Extension: runtime.RawExtension{Raw: []byte(`{ "clusterName": "c1" }`)}}}}}},
	}}
	want := StatusApply{Version: "v1.31.0", Conditions: []metav1.Condition{joined},
		Properties: []cpv1alpha1.Property{{Name: "region", Value: "eu"}}, AccessProviders: []cpv1alpha1.AccessProvider{provider}}
	owned := func(mutate func(*Ownership)) Ownership {
		o := emptyOwnership()
		o.Version, o.Conditions, o.Properties, o.AccessProviders = true, sets.New("Joined"), sets.New("region"), sets.New("ocm")
		if mutate != nil {
			mutate(&o)
		}
		return o
	}
	later := joined
	later.LastTransitionTime = metav1.NewTime(transition.Add(time.Second))
	cases := map[string]struct {
		want StatusApply
		own  Ownership
		ok   bool
	}{
		"all there and owned":        {want: want, own: owned(nil), ok: true},
		"version not owned":          {want: want, own: owned(func(o *Ownership) { o.Version = false }), ok: false},
		"version owned, not wanted":  {want: StatusApply{Conditions: want.Conditions, Properties: want.Properties, AccessProviders: want.AccessProviders}, own: owned(nil), ok: false},
		"a condition's time differs": {want: StatusApply{Version: "v1.31.0", Conditions: []metav1.Condition{later}, Properties: want.Properties, AccessProviders: want.AccessProviders}, own: owned(nil), ok: false},
		"an extra owned property":    {want: want, own: owned(func(o *Ownership) { o.Properties.Insert("gone") }), ok: false},
		"an access provider differs": {want: StatusApply{Version: "v1.31.0", Conditions: want.Conditions, Properties: want.Properties,
			AccessProviders: []cpv1alpha1.AccessProvider{{Name: "ocm", Cluster: clientcmdv1.Cluster{Server: "https://other"}}}}, own: owned(nil), ok: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := StatusUpToDate(current, tc.want, tc.own); got != tc.ok {
				t.Errorf("StatusUpToDate = %v, want %v", got, tc.ok)
			}
		})
	}
}
