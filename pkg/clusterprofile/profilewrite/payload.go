package profilewrite

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// MetaApply is the metadata and spec one writer applies to a ClusterProfile.
// Only what is set here is sent, so the writer owns exactly these labels,
// annotations and spec fields and nothing else on the object.
type MetaApply struct {
	types.NamespacedName
	Labels      map[string]string
	Annotations map[string]string
	// Spec is nil for writers that do not own the spec.
	Spec *cpv1alpha1.ClusterProfileSpec
}

// StatusApply is the part of a ClusterProfile's status one writer owns. Empty
// parts are left out of the request, which tells the API server that this
// writer no longer owns any of them (so its old entries are removed while
// other writers' entries stay).
type StatusApply struct {
	types.NamespacedName
	Version         string
	Conditions      []metav1.Condition
	Properties      []cpv1alpha1.Property
	AccessProviders []cpv1alpha1.AccessProvider
}

// Empty tells whether the writer owns nothing in the status.
func (s StatusApply) Empty() bool {
	return s.Version == "" && len(s.Conditions) == 0 && len(s.Properties) == 0 && len(s.AccessProviders) == 0
}

// The wire forms below exist because the API types marshal zero values
// (`conditions: null`, `lastObservedTime: null`) that would claim ownership of
// fields this writer does not set.
type propertyApply struct {
	Name             string       `json:"name"`
	Value            string       `json:"value"`
	LastObservedTime *metav1.Time `json:"lastObservedTime,omitempty"`
}

type accessProviderApply struct {
	Name    string              `json:"name"`
	Cluster clientcmdv1.Cluster `json:"cluster"`
}

type versionApply struct {
	Kubernetes string `json:"kubernetes,omitempty"`
}

type statusApply struct {
	Conditions      []metav1.Condition    `json:"conditions,omitempty"`
	Version         *versionApply         `json:"version,omitempty"`
	Properties      []propertyApply       `json:"properties,omitempty"`
	AccessProviders []accessProviderApply `json:"accessProviders,omitempty"`
}

type metadataApply struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type profileApply struct {
	APIVersion string                         `json:"apiVersion"`
	Kind       string                         `json:"kind"`
	Metadata   metadataApply                  `json:"metadata"`
	Spec       *cpv1alpha1.ClusterProfileSpec `json:"spec,omitempty"`
	Status     any                            `json:"status,omitempty"`
}

func newProfileApply(key types.NamespacedName) profileApply {
	return profileApply{
		APIVersion: cpv1alpha1.GroupVersion.String(),
		Kind:       "ClusterProfile",
		Metadata:   metadataApply{Name: key.Name, Namespace: key.Namespace},
	}
}

// Body returns the Server-Side Apply request body.
func (m MetaApply) Body() ([]byte, error) {
	body := newProfileApply(m.NamespacedName)
	body.Metadata.Labels = m.Labels
	body.Metadata.Annotations = m.Annotations
	body.Spec = m.Spec
	return json.Marshal(body)
}

// emptyStatus is how a writer gives up every status field it owned. The API
// server (1.35) turns `status: {}` into `status: null` when nothing else is
// left and then rejects it; an empty list-map is accepted and owns nothing.
var emptyStatus = struct {
	Conditions []metav1.Condition `json:"conditions"`
}{Conditions: []metav1.Condition{}}

// Body returns the Server-Side Apply request body for the status subresource.
func (s StatusApply) Body() ([]byte, error) {
	body := newProfileApply(s.NamespacedName)
	if s.Empty() {
		body.Status = emptyStatus
		return json.Marshal(body)
	}
	status := &statusApply{Conditions: s.Conditions}
	if s.Version != "" {
		status.Version = &versionApply{Kubernetes: s.Version}
	}
	for _, p := range s.Properties {
		pa := propertyApply{Name: p.Name, Value: p.Value}
		if !p.LastObservedTime.IsZero() {
			pa.LastObservedTime = p.LastObservedTime.DeepCopy()
		}
		status.Properties = append(status.Properties, pa)
	}
	for _, ap := range s.AccessProviders {
		status.AccessProviders = append(status.AccessProviders, accessProviderApply(ap))
	}
	body.Status = status
	return json.Marshal(body)
}
