package clusterprofile

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	Status     *statusApply                   `json:"status,omitempty"`
}

func newProfileApply(key types.NamespacedName) profileApply {
	return profileApply{
		APIVersion: cpv1alpha1.GroupVersion.String(),
		Kind:       "ClusterProfile",
		Metadata:   metadataApply{Name: key.Name, Namespace: key.Namespace},
	}
}

// Object returns the Server-Side Apply request body.
func (m MetaApply) Object() (*unstructured.Unstructured, error) {
	body := newProfileApply(m.NamespacedName)
	body.Metadata.Labels = m.Labels
	body.Metadata.Annotations = m.Annotations
	body.Spec = m.Spec
	return toUnstructured(&body)
}

// Object returns the Server-Side Apply request body for the status subresource.
func (s StatusApply) Object() (*unstructured.Unstructured, error) {
	body := newProfileApply(s.NamespacedName)
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
	u, err := toUnstructured(&body)
	if err != nil {
		return nil, err
	}
	// A writer gives up every status field it owned by applying an empty
	// status. The API server (1.35) turns `status: {}` into `status: null` when
	// nothing else is left and then rejects it; an empty list-map is accepted
	// and owns no entries, so that is what an empty status is sent as.
	if s.Empty() {
		u.Object["status"] = map[string]any{"conditions": []any{}}
	}
	return u, nil
}

func toUnstructured(body *profileApply) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(body)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: content}, nil
}

// Applier sends Server-Side Apply requests for one field manager. It always
// forces ownership: a controller is the authority for the fields it applies,
// and a conflict would otherwise leave the profile stale forever.
type Applier struct {
	Client       client.Client
	FieldManager string
}

// ApplyMeta applies metadata and spec, creating the profile when it is missing,
// and returns the object as the API server stored it.
func (a Applier) ApplyMeta(ctx context.Context, m MetaApply) (*cpv1alpha1.ClusterProfile, error) {
	u, err := m.Object()
	if err != nil {
		return nil, err
	}
	err = a.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(a.FieldManager), client.ForceOwnership)
	if err != nil {
		return nil, fmt.Errorf("applying metadata of ClusterProfile %s: %w", m.NamespacedName, err)
	}
	return fromUnstructured(u)
}

// ApplyStatus applies the writer's part of the status.
func (a Applier) ApplyStatus(ctx context.Context, s StatusApply) (*cpv1alpha1.ClusterProfile, error) {
	u, err := s.Object()
	if err != nil {
		return nil, err
	}
	err = a.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(a.FieldManager), client.ForceOwnership)
	if err != nil {
		return nil, fmt.Errorf("applying status of ClusterProfile %s: %w", s.NamespacedName, err)
	}
	return fromUnstructured(u)
}

func fromUnstructured(u *unstructured.Unstructured) (*cpv1alpha1.ClusterProfile, error) {
	out := &cpv1alpha1.ClusterProfile{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, fmt.Errorf("decoding ClusterProfile %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return out, nil
}
