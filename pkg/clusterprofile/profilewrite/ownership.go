package profilewrite

import (
	"bytes"
	"fmt"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Ownership is what one field manager owns on a ClusterProfile, as the API
// server recorded it in managedFields. A writer compares it with what it would
// apply: an apply is a no-op only when the values are already there *and* the
// writer owns exactly those entries (owning one more means the apply would
// remove it; owning one less means a later removal would not take effect).
type Ownership struct {
	Labels          sets.Set[string]
	Annotations     sets.Set[string]
	Spec            sets.Set[string] // field paths such as "displayName", "clusterManager.name"
	Version         bool
	Conditions      sets.Set[string] // by type
	Properties      sets.Set[string] // by name
	AccessProviders sets.Set[string] // by name
}

// OwnershipOf reads the Apply entries of manager for the main resource
// (subresource "") and for the status subresource. The sets it returns may
// be shared with other callers: read them, never change them.
func OwnershipOf(obj metav1.Object, manager string) (Ownership, error) {
	var owns []Ownership
	for _, entry := range obj.GetManagedFields() {
		if entry.Manager != manager || entry.Operation != metav1.ManagedFieldsOperationApply || entry.FieldsV1 == nil {
			continue
		}
		entryOwn, err := ownerships.get(entry, func() (Ownership, error) { return entryOwnership(entry) })
		if err != nil {
			return newOwnership(), fmt.Errorf("reading managedFields of %s for %s: %w", manager, obj.GetName(), err)
		}
		owns = append(owns, entryOwn)
	}
	switch len(owns) {
	case 0:
		return newOwnership(), nil
	case 1:
		return owns[0], nil
	}
	own := owns[0]
	for _, other := range owns[1:] {
		own = own.union(other)
	}
	return own, nil
}

// ownerships and compacted remember entryOwnership's and CompactEntry's
// answers (see entryMemo).
var (
	ownerships = newEntryMemo[Ownership]()
	compacted  = newEntryMemo[*metav1.FieldsV1]()
)

func newOwnership() Ownership {
	return Ownership{
		Labels: sets.New[string](), Annotations: sets.New[string](), Spec: sets.New[string](),
		Conditions: sets.New[string](), Properties: sets.New[string](), AccessProviders: sets.New[string](),
	}
}

func (o Ownership) union(other Ownership) Ownership {
	return Ownership{
		Labels: o.Labels.Union(other.Labels), Annotations: o.Annotations.Union(other.Annotations),
		Spec: o.Spec.Union(other.Spec), Version: o.Version || other.Version,
		Conditions: o.Conditions.Union(other.Conditions), Properties: o.Properties.Union(other.Properties),
		AccessProviders: o.AccessProviders.Union(other.AccessProviders),
	}
}

// without is o less the status entries want holds.
func (o Ownership) without(want StatusApply) Ownership {
	out := newOwnership()
	out.Version = o.Version && want.Version == ""
	out.Conditions = o.Conditions.Difference(conditionTypes(want.Conditions))
	out.Properties = o.Properties.Difference(propertyNames(want.Properties))
	out.AccessProviders = o.AccessProviders.Difference(accessProviderNames(want.AccessProviders))
	return out
}

// empty tells whether o holds no status entry.
func (o Ownership) empty() bool {
	return !o.Version && o.ownsNoListEntries()
}

// ownsNoListEntries tells whether o holds no entry of a status list. An
// apply the API server merged as list-maps owns its entries by key; one it
// merged atomically owns whole lists, read as no entries.
func (o Ownership) ownsNoListEntries() bool {
	return o.Conditions.Len() == 0 && o.Properties.Len() == 0 && o.AccessProviders.Len() == 0
}

// entryOwnership reads one entry of the main resource or of status.
func entryOwnership(entry metav1.ManagedFieldsEntry) (Ownership, error) {
	own := newOwnership()
	set := &fieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader(entry.FieldsV1.Raw)); err != nil {
		return own, err
	}
	switch entry.Subresource {
	case "":
		metadata := child(set, "metadata")
		own.Labels = fieldNames(child(metadata, "labels"))
		own.Annotations = fieldNames(child(metadata, "annotations"))
		spec := child(set, "spec")
		if has(spec, "displayName") {
			own.Spec.Insert("displayName")
		}
		if has(child(spec, "clusterManager"), "name") {
			own.Spec.Insert("clusterManager.name")
		}
	case "status":
		status := child(set, "status")
		own.Version = has(child(status, "version"), "kubernetes")
		own.Conditions = listMapKeys(child(status, "conditions"), "type")
		own.Properties = listMapKeys(child(status, "properties"), "name")
		own.AccessProviders = listMapKeys(child(status, "accessProviders"), "name")
	}
	return own, nil
}

// CompactEntry rewrites a managedFields entry to hold only what this
// package reads of it: who wrote, how, to which subresource and, of an Apply
// entry, which labels, annotations and spec fields, and which status entries
// (by key, without their subfields) it owns. The time and API version go.
// The cache keeps this project's own entries so: a fraction of the memory,
// the same answers from OwnershipOf and WrittenBy. A set that cannot be read
// is kept whole, for OwnershipOf to report.
func CompactEntry(entry metav1.ManagedFieldsEntry) metav1.ManagedFieldsEntry {
	out := metav1.ManagedFieldsEntry{
		Manager:   unique.Make(entry.Manager).Value(),
		Operation: metav1.ManagedFieldsOperationType(unique.Make(string(entry.Operation)).Value()),
		// Interned: every profile carries the same few managers and subresources.
		Subresource: unique.Make(entry.Subresource).Value(),
	}
	if entry.Operation != metav1.ManagedFieldsOperationApply || entry.FieldsV1 == nil {
		return out // OwnershipOf reads Apply entries only
	}
	// Profiles whose entries were equal share one compacted set.
	fields, err := compacted.get(entry, func() (*metav1.FieldsV1, error) {
		own, err := entryOwnership(entry)
		if err != nil {
			return nil, err
		}
		raw, err := own.fieldSet().ToJSON()
		return &metav1.FieldsV1{Raw: raw}, err
	})
	if err != nil {
		return entry
	}
	out.FieldsType, out.FieldsV1 = "FieldsV1", fields
	return out
}

// fieldSet is the smallest field set OwnershipOf reads o from.
func (o Ownership) fieldSet() *fieldpath.Set {
	var paths []fieldpath.Path
	add := func(parts ...any) { paths = append(paths, fieldpath.MakePathOrDie(parts...)) }
	for _, name := range sets.List(o.Labels) {
		add("metadata", "labels", name)
	}
	for _, name := range sets.List(o.Annotations) {
		add("metadata", "annotations", name)
	}
	if o.Spec.Has("displayName") {
		add("spec", "displayName")
	}
	if o.Spec.Has("clusterManager.name") {
		add("spec", "clusterManager", "name")
	}
	if o.Version {
		add("status", "version", "kubernetes")
	}
	for _, t := range sets.List(o.Conditions) {
		add("status", "conditions", fieldpath.KeyByFields("type", t))
	}
	for _, name := range sets.List(o.Properties) {
		add("status", "properties", fieldpath.KeyByFields("name", name))
	}
	for _, name := range sets.List(o.AccessProviders) {
		add("status", "accessProviders", fieldpath.KeyByFields("name", name))
	}
	return fieldpath.NewSet(paths...)
}

func fieldElement(name string) fieldpath.PathElement {
	return fieldpath.PathElement{FieldName: &name}
}

// child descends into a named field; the empty set stands in for "not owned".
func child(s *fieldpath.Set, name string) *fieldpath.Set {
	if s == nil {
		return &fieldpath.Set{}
	}
	if c, ok := s.Children.Get(fieldElement(name)); ok {
		return c
	}
	return &fieldpath.Set{}
}

func has(s *fieldpath.Set, name string) bool {
	pe := fieldElement(name)
	if s.Members.Has(pe) {
		return true
	}
	_, ok := s.Children.Get(pe)
	return ok
}

func fieldNames(s *fieldpath.Set) sets.Set[string] {
	out := sets.New[string]()
	collect := func(pe fieldpath.PathElement) {
		if pe.FieldName != nil {
			out.Insert(*pe.FieldName)
		}
	}
	s.Members.Iterate(collect)
	s.Children.Iterate(collect)
	return out
}

// listMapKeys returns the key values of a list-map's owned elements. A list
// that is atomic in the installed schema has none: it is owned whole.
func listMapKeys(s *fieldpath.Set, key string) sets.Set[string] {
	out := sets.New[string]()
	collect := func(pe fieldpath.PathElement) {
		if pe.Key == nil {
			return
		}
		for _, field := range *pe.Key {
			if field.Name == key && field.Value.IsString() {
				out.Insert(field.Value.AsString())
			}
		}
	}
	s.Members.Iterate(collect)
	s.Children.Iterate(collect)
	return out
}

// EntryServerWriters are the field managers owning the server of obj's
// access provider entry name: whoever last set it, which is who publishes
// the entry, whoever else keeps fields of it. The CRD leaves the list
// atomic, so its last writer owns it whole; a schema that keys the list by
// name records the server itself.
func EntryServerWriters(obj metav1.Object, name string) []string {
	list := fieldpath.MakePathOrDie("status", "accessProviders")
	server := fieldpath.MakePathOrDie("status", "accessProviders", fieldpath.KeyByFields("name", name), "cluster", "server")
	var writers []string
	for _, entry := range obj.GetManagedFields() {
		if entry.Subresource != "status" || entry.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(entry.FieldsV1.Raw)); err == nil && (set.Has(list) || set.Has(server)) {
			writers = append(writers, entry.Manager)
		}
	}
	return writers
}
