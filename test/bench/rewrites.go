package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// maxRewritesShown caps the second writes a result lists per capability.
const maxRewritesShown = 5

// rewrite is a write of an owned object after the first one the audit log
// saw, and the fields it changed. In a cold start such a write is either a
// change of what the capability wants (a profile's label arriving late, an
// entry's CA) or a wasted one; the fields tell which.
type rewrite struct {
	Gate   string   `json:"gate"`
	Object string   `json:"object"`
	Fields []string `json:"fields"`
}

func (r rewrite) String() string {
	return fmt.Sprintf("%s (%s)", r.Object, strings.Join(r.Fields, ", "))
}

// writtenFields remembers what the last audited write of each owned object
// set (audit level Request), and records each later write as a rewrite.
type writtenFields struct {
	last     map[string]map[string]string
	rewrites []rewrite
}

// record reads the request body of an owned object's create, update or
// apply. A delete forgets the object (the floor's, before the manager
// writes its own of the same name); an event without a body records
// nothing.
func (w *writtenFields) record(gate string, e auditEvent) error {
	switch {
	case e.Verb == "delete":
		delete(w.last, gate+" "+e.ObjectRef.Namespace+"/"+e.ObjectRef.Name)
		return nil
	case len(e.RequestObject) == 0:
		return nil
	}
	var body map[string]any
	if err := json.Unmarshal(e.RequestObject, &body); err != nil {
		return fmt.Errorf("parsing the request body of an audit event: %w", err)
	}
	fields := map[string]string{}
	flattenWritten("", body, fields)
	key := gate + " " + e.ObjectRef.Namespace + "/" + objectName(e.ObjectRef.Name, body)
	if w.last == nil {
		w.last = map[string]map[string]string{}
	}
	if before, ok := w.last[key]; ok {
		w.rewrites = append(w.rewrites, rewrite{Gate: gate, Object: strings.TrimPrefix(key, gate+" "), Fields: changedFields(before, fields)})
	}
	w.last[key] = fields
	return nil
}

// forget forgets every object of namespace ("": cluster-scoped ones), as a
// delete of the collection there deletes them; the event names no owner.
func (w *writtenFields) forget(namespace string) {
	maps.DeleteFunc(w.last, func(key string, _ map[string]string) bool {
		_, object, _ := strings.Cut(key, " ")
		return strings.HasPrefix(object, namespace+"/")
	})
}

// objectName is the name the event's object reference gives, or for a
// create (whose reference has none) the body's.
func objectName(name string, body map[string]any) string {
	if name != "" {
		return name
	}
	metadata, _ := body["metadata"].(map[string]any)
	name, _ = metadata["name"].(string)
	return name
}

// writtenIgnored are the fields a write carries that are not what the
// writer wants of the object: identity, and what a create's body holds
// empty or the API server sets.
var writtenIgnored = []string{"apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.creationTimestamp",
	"metadata.resourceVersion", "metadata.uid", "metadata.managedFields", "status"}

// flattenWritten sets into out each leaf of v by its dotted path (list
// items by index), as JSON.
func flattenWritten(path string, v any, out map[string]string) {
	if slices.Contains(writtenIgnored, path) {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			flattenWritten(strings.TrimPrefix(path+"."+k, "."), child, out)
		}
	case []any:
		for i, child := range v {
			flattenWritten(fmt.Sprintf("%s[%d]", path, i), child, out)
		}
	default:
		value, _ := json.Marshal(v)
		out[path] = string(value)
	}
}

// changedFields are the paths set to another value, or set by one write
// and not the other, sorted; "nothing" when the writes were the same.
func changedFields(before, after map[string]string) []string {
	var changed []string
	for path := range maps.Keys(before) {
		if v, ok := after[path]; !ok || v != before[path] {
			changed = append(changed, path)
		}
	}
	for path := range maps.Keys(after) {
		if _, ok := before[path]; !ok {
			changed = append(changed, path)
		}
	}
	if len(changed) == 0 {
		return []string{"nothing"}
	}
	slices.Sort(changed)
	return changed
}

// rewritesOf are the first maxRewritesShown of gate's rewrites.
func rewritesOf(rewrites []rewrite, gate string) []rewrite {
	var out []rewrite
	for _, r := range rewrites {
		if r.Gate == gate && len(out) < maxRewritesShown {
			out = append(out, r)
		}
	}
	return out
}
