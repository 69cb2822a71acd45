package profilewrite

import (
	"encoding/json"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// MetaUpToDate tells whether applying m to current would change nothing:
// every label, annotation and spec field of m is there with its value and
// owned by the writer, and the writer owns nothing more.
func MetaUpToDate(current *cpv1alpha1.ClusterProfile, m MetaApply, own Ownership) bool {
	if !mapUpToDate(current.Labels, m.Labels, own.Labels) ||
		!mapUpToDate(current.Annotations, m.Annotations, own.Annotations) {
		return false
	}
	wantSpec := sets.New[string]()
	if m.Spec != nil {
		if m.Spec.DisplayName != "" {
			wantSpec.Insert("displayName")
			if current.Spec.DisplayName != m.Spec.DisplayName {
				return false
			}
		}
		if m.Spec.ClusterManager.Name != "" {
			wantSpec.Insert("clusterManager.name")
			if current.Spec.ClusterManager.Name != m.Spec.ClusterManager.Name {
				return false
			}
		}
	}
	return own.Spec.Equal(wantSpec)
}

func mapUpToDate(current, want map[string]string, owned sets.Set[string]) bool {
	if !owned.Equal(sets.KeySet(want)) {
		return false
	}
	for k, v := range want {
		if got, ok := current[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// StatusUpToDate tells whether applying s to current would change nothing.
func StatusUpToDate(current *cpv1alpha1.ClusterProfile, s StatusApply, own Ownership) bool {
	st := &current.Status
	if own.Version != (s.Version != "") || (s.Version != "" && st.Version.Kubernetes != s.Version) {
		return false
	}
	return conditionsPresent(st.Conditions, s.Conditions) &&
		own.Conditions.Equal(conditionTypes(s.Conditions)) &&
		propertiesPresent(st.Properties, s.Properties) &&
		own.Properties.Equal(propertyNames(s.Properties)) &&
		accessProvidersPresent(st.AccessProviders, s.AccessProviders) &&
		own.AccessProviders.Equal(accessProviderNames(s.AccessProviders))
}

// conditionsPresent tells whether every wanted condition is in current with
// the same content.
func conditionsPresent(current, want []metav1.Condition) bool {
	for i := range want {
		got := meta.FindStatusCondition(current, want[i].Type)
		if got == nil || !conditionEqual(*got, want[i]) {
			return false
		}
	}
	return true
}

// conditionEqual compares what the API server stores: times at second precision.
func conditionEqual(a, b metav1.Condition) bool {
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.ObservedGeneration == b.ObservedGeneration &&
		a.LastTransitionTime.Unix() == b.LastTransitionTime.Unix()
}

// propertiesPresent tells whether every wanted property is in current with the same value.
func propertiesPresent(current, want []cpv1alpha1.Property) bool {
	byName := make(map[string]cpv1alpha1.Property, len(current))
	for _, p := range current {
		byName[p.Name] = p
	}
	for _, p := range want {
		got, ok := byName[p.Name]
		if !ok || got.Value != p.Value || got.LastObservedTime.Unix() != p.LastObservedTime.Unix() {
			return false
		}
	}
	return true
}

// accessProvidersPresent tells whether every wanted access provider is in
// current with the same cluster connection details.
func accessProvidersPresent(current, want []cpv1alpha1.AccessProvider) bool {
	for _, w := range want {
		found := false
		for _, c := range current {
			if c.Name == w.Name {
				found = clusterEqual(c.Cluster, w.Cluster)
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// clusterEqual compares kubeconfig clusters, with extensions compared as JSON
// values: the API server re-serialises them, so their bytes may differ.
func clusterEqual(a, b clientcmdv1.Cluster) bool {
	ae, be := a.Extensions, b.Extensions
	a.Extensions, b.Extensions = nil, nil
	if !equality.Semantic.DeepEqual(a, b) || len(ae) != len(be) {
		return false
	}
	for i := range ae {
		if ae[i].Name != be[i].Name || !jsonEqual(ae[i].Extension.Raw, be[i].Extension.Raw) {
			return false
		}
	}
	return true
}

func jsonEqual(a, b []byte) bool {
	var av, bv any
	if json.Unmarshal(a, &av) != nil || json.Unmarshal(b, &bv) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(av, bv)
}

func conditionTypes(conditions []metav1.Condition) sets.Set[string] {
	out := sets.New[string]()
	for _, c := range conditions {
		out.Insert(c.Type)
	}
	return out
}

func propertyNames(properties []cpv1alpha1.Property) sets.Set[string] {
	out := sets.New[string]()
	for _, p := range properties {
		out.Insert(p.Name)
	}
	return out
}

func accessProviderNames(providers []cpv1alpha1.AccessProvider) sets.Set[string] {
	out := sets.New[string]()
	for _, p := range providers {
		out.Insert(p.Name)
	}
	return out
}
