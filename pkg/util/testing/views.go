package testing

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// ProfileView is what a consumer reads of a ClusterProfile, for whole
// comparisons with cmp.Diff: its labels, display name and manager, and of
// its status the version, the properties by name, the conditions by type
// and the names of the access provider entries. Times, generations and
// the order of entries are left out: they are not what a writer decides.
type ProfileView struct {
	Labels      map[string]string
	DisplayName string
	Manager     string
	Version     string
	Properties  map[string]string
	Conditions  map[string]ConditionView
	Providers   []string
}

// ConditionView is what a consumer reads of a condition.
type ConditionView struct {
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// ViewOf is p as a consumer reads it.
func ViewOf(p *cpv1alpha1.ClusterProfile) ProfileView {
	v := ProfileView{
		Labels: p.Labels, DisplayName: p.Spec.DisplayName, Manager: p.Spec.ClusterManager.Name,
		Version: p.Status.Version.Kubernetes, Properties: map[string]string{}, Conditions: map[string]ConditionView{},
	}
	for _, prop := range p.Status.Properties {
		v.Properties[prop.Name] = prop.Value
	}
	for _, c := range p.Status.Conditions {
		v.Conditions[c.Type] = ConditionView{Status: c.Status, Reason: c.Reason, Message: c.Message}
	}
	for _, ap := range p.Status.AccessProviders {
		v.Providers = append(v.Providers, ap.Name)
	}
	return v
}

// DrainEvents returns the events recorder has recorded so far, sorted:
// a reconcile reports its findings in no particular order.
func DrainEvents(recorder *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-recorder.Events:
			out = append(out, e)
		default:
			sort.Strings(out)
			return out
		}
	}
}
