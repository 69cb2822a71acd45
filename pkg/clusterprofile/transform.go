package clusterprofile

import (
	"hash/maphash"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/intern"
)

// Shared holds what cached profiles share with each other (see Compact):
// one table per kind of value, each letting go of what no profile holds.
type Shared struct {
	// Bytes also serves other cached objects (a ManagedCluster's CA bundle
	// is its direct access entry's).
	Bytes         *intern.Bytes
	metadata      *intern.Maps[string]
	managedFields *intern.Slices[metav1.ManagedFieldsEntry]
	conditions    *intern.Slices[metav1.Condition]
	properties    *intern.Slices[cpv1alpha1.Property]
	providers     *intern.Slices[cpv1alpha1.AccessProvider]
}

func NewShared() *Shared {
	return &Shared{
		Bytes:         intern.NewBytes(),
		metadata:      intern.NewStringMaps(),
		managedFields: intern.NewComparable[metav1.ManagedFieldsEntry](),
		conditions:    intern.NewComparable[metav1.Condition](),
		properties:    intern.NewComparable[cpv1alpha1.Property](),
		providers:     intern.NewSlices(hashProviders, equalProviders),
	}
}

// CacheTransform is the manager's cache transform for every type. Of a
// ClusterProfile it keeps this project's own managedFields entries (the
// no-op check reads them), compacted (profilewrite.CompactEntry), and shares
// what equals other profiles' (see Compact). Of any other object it drops
// managedFields. One transform for all types, rather than one per type,
// because a per-type cache option makes the manager resolve the
// ClusterProfile API at start, and it may not be installed yet.
func CacheTransform(shared *Shared) toolscache.TransformFunc {
	return func(in any) (any, error) {
		if p, ok := in.(*cpv1alpha1.ClusterProfile); ok {
			Compact(p, shared)
			return p, nil
		}
		if obj, err := meta.Accessor(in); err == nil {
			obj.SetManagedFields(nil)
		}
		return in, nil
	}
}

// Compact shrinks a profile for the cache without changing what any reader
// sees of it: other writers' managedFields go, this project's are compacted,
// and what repeats across profiles is shared: strings (label keys,
// condition types and reasons), certificates, and whole labels, lists and
// entries (a cluster's profile in each namespace bound to it carries the
// same). A hub with tens of thousands of profiles holds them all in memory.
// p must not be modified afterwards (cached objects never are).
func Compact(p *cpv1alpha1.ClusterProfile, shared *Shared) {
	p.Name, p.Namespace = intern.String(p.Name), intern.String(p.Namespace)
	intern.Map(p.Labels)
	intern.Map(p.Annotations)
	p.Labels = intern.Share(shared.metadata, p, p.Labels)
	p.Annotations = intern.Share(shared.metadata, p, p.Annotations)
	p.ManagedFields = shared.managedFields.Intern(ownManagedFields(p.ManagedFields))
	p.Spec.DisplayName = intern.String(p.Spec.DisplayName)
	p.Spec.ClusterManager.Name = intern.String(p.Spec.ClusterManager.Name)
	compactStatus(&p.Status, shared)
}

// ownManagedFields keeps this project's entries, compacted.
func ownManagedFields(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var own []metav1.ManagedFieldsEntry
	for _, entry := range entries {
		if strings.HasPrefix(entry.Manager, fieldmanager.Prefix) {
			own = append(own, profilewrite.CompactEntry(entry))
		}
	}
	return own
}

func compactStatus(s *cpv1alpha1.ClusterProfileStatus, shared *Shared) {
	for i := range s.Conditions {
		c := &s.Conditions[i]
		c.Type, c.Reason, c.Message = intern.String(c.Type), intern.String(c.Reason), intern.String(c.Message)
		c.Status = metav1.ConditionStatus(intern.String(string(c.Status)))
	}
	s.Conditions = shared.conditions.Intern(s.Conditions)
	for i := range s.Properties {
		s.Properties[i].Name, s.Properties[i].Value = intern.String(s.Properties[i].Name), intern.String(s.Properties[i].Value)
	}
	s.Properties = shared.properties.Intern(s.Properties)
	s.Version.Kubernetes = intern.String(s.Version.Kubernetes)
	s.AccessProviders = compactProviders(s.AccessProviders, shared)
	s.CredentialProviders = compactProviders(s.CredentialProviders, shared)
}

func compactProviders(providers []cpv1alpha1.AccessProvider, shared *Shared) []cpv1alpha1.AccessProvider {
	for i := range providers {
		entry := &providers[i]
		entry.Name, entry.Cluster.Server = intern.String(entry.Name), intern.String(entry.Cluster.Server)
		entry.Cluster.CertificateAuthorityData = shared.Bytes.Intern(entry.Cluster.CertificateAuthorityData)
		for j := range entry.Cluster.Extensions {
			extension := &entry.Cluster.Extensions[j]
			extension.Name = intern.String(extension.Name)
			extension.Extension.Raw = shared.Bytes.Intern(extension.Extension.Raw)
		}
	}
	return shared.providers.Intern(providers)
}

// hashProviders hashes what tells access entries apart (equal entries must
// hash equal; the table compares them whole).
func hashProviders(h *maphash.Hash, providers []cpv1alpha1.AccessProvider) {
	for _, p := range providers {
		_, _ = h.WriteString(p.Name)
		_, _ = h.WriteString(p.Cluster.Server)
		_, _ = h.Write(p.Cluster.CertificateAuthorityData)
		for _, extension := range p.Cluster.Extensions {
			_, _ = h.Write(extension.Extension.Raw)
		}
	}
}

func equalProviders(a, b []cpv1alpha1.AccessProvider) bool { return reflect.DeepEqual(a, b) }
