package clusterprofile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/utils/ptr"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	cpclient "sigs.k8s.io/cluster-inventory-api/client/clientset/versioned/typed/apis/v1alpha1"
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

// Applier sends one field manager's writes through cluster-inventory-api's
// typed client, so request bodies are plain JSON and responses decode
// straight into ClusterProfiles. Applies always force ownership: a
// controller is the authority for the fields it applies, and a conflict
// would otherwise leave the profile stale forever.
type Applier struct {
	Profiles     cpclient.ClusterProfilesGetter
	FieldManager string
}

// NewProfilesClient builds the typed ClusterProfile client, on a manager's
// connection when httpClient is given.
func NewProfilesClient(cfg *rest.Config, httpClient *http.Client) (cpclient.ClusterProfilesGetter, error) {
	if httpClient == nil {
		var err error
		if httpClient, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, fmt.Errorf("creating an HTTP client: %w", err)
		}
	}
	c, err := cpclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the ClusterProfile client: %w", err)
	}
	return c, nil
}

func (a Applier) applyOptions() metav1.PatchOptions {
	return metav1.PatchOptions{FieldManager: a.FieldManager, Force: ptr.To(true)}
}

// ApplyMeta applies metadata and spec, creating the profile when it is missing,
// and returns the object as the API server stored it.
func (a Applier) ApplyMeta(ctx context.Context, m MetaApply) (*cpv1alpha1.ClusterProfile, error) {
	body, err := m.Body()
	if err != nil {
		return nil, err
	}
	p, err := a.Profiles.ClusterProfiles(m.Namespace).Patch(ctx, m.Name, types.ApplyPatchType, body, a.applyOptions())
	if err != nil {
		return nil, fmt.Errorf("applying metadata of ClusterProfile %s: %w", m.NamespacedName, err)
	}
	return p, nil
}

// ApplyStatus applies the writer's part of the status.
func (a Applier) ApplyStatus(ctx context.Context, s StatusApply) (*cpv1alpha1.ClusterProfile, error) {
	body, err := s.Body()
	if err != nil {
		return nil, err
	}
	p, err := a.Profiles.ClusterProfiles(s.Namespace).Patch(ctx, s.Name, types.ApplyPatchType, body, a.applyOptions(), "status")
	if err != nil {
		return nil, fmt.Errorf("applying status of ClusterProfile %s: %w", s.NamespacedName, err)
	}
	return p, nil
}
