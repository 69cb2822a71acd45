package clusterprofile

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/intern"
)

// FieldManagerPrefix starts the field manager name of every writer in this
// project (clusterprofile-mirror, clusterprofile-access-proxy, ...).
const FieldManagerPrefix = profilewrite.FieldManagerPrefix

// CacheTransform is the manager's cache transform for every type. Of a
// ClusterProfile it keeps this project's own managedFields entries (the
// no-op check reads them), compacted (profilewrite.CompactEntry), and shares
// equal strings and certificates between profiles (see Compact). Of any
// other object it drops managedFields. One transform for all types, rather
// than one per type, because a per-type cache option makes the manager
// resolve the ClusterProfile API at start, and it may not be installed yet.
func CacheTransform(shared *intern.Bytes) toolscache.TransformFunc {
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
// and the strings and byte slices that repeat across profiles (label keys,
// condition types and reasons, a cluster's facts in every namespace,
// certificates) are shared through intern. A hub with tens of thousands of
// profiles holds them all in memory.
func Compact(p *cpv1alpha1.ClusterProfile, shared *intern.Bytes) {
	p.ManagedFields = ownManagedFields(p.ManagedFields)
	p.Name, p.Namespace = intern.String(p.Name), intern.String(p.Namespace)
	intern.Map(p.Labels)
	intern.Map(p.Annotations)
	p.Spec.DisplayName = intern.String(p.Spec.DisplayName)
	p.Spec.ClusterManager.Name = intern.String(p.Spec.ClusterManager.Name)
	compactStatus(&p.Status, shared)
}

// ownManagedFields keeps this project's entries, compacted.
func ownManagedFields(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var own []metav1.ManagedFieldsEntry
	for _, entry := range entries {
		if strings.HasPrefix(entry.Manager, FieldManagerPrefix) {
			own = append(own, profilewrite.CompactEntry(entry))
		}
	}
	return own
}

func compactStatus(s *cpv1alpha1.ClusterProfileStatus, shared *intern.Bytes) {
	for i := range s.Conditions {
		c := &s.Conditions[i]
		c.Type, c.Reason, c.Message = intern.String(c.Type), intern.String(c.Reason), intern.String(c.Message)
		c.Status = metav1.ConditionStatus(intern.String(string(c.Status)))
	}
	for i := range s.Properties {
		s.Properties[i].Name, s.Properties[i].Value = intern.String(s.Properties[i].Name), intern.String(s.Properties[i].Value)
	}
	s.Version.Kubernetes = intern.String(s.Version.Kubernetes)
	for i := range s.AccessProviders {
		entry := &s.AccessProviders[i]
		entry.Name, entry.Cluster.Server = intern.String(entry.Name), intern.String(entry.Cluster.Server)
		entry.Cluster.CertificateAuthorityData = shared.Intern(entry.Cluster.CertificateAuthorityData)
		for j := range entry.Cluster.Extensions {
			extension := &entry.Cluster.Extensions[j]
			extension.Name = intern.String(extension.Name)
			extension.Extension.Raw = shared.Intern(extension.Extension.Raw)
		}
	}
}
