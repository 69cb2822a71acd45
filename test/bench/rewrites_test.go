package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRewrites: a second write of an owned object is named with the fields
// it changed, whatever the first write's verb; a delete, one object at a
// time or a collection, forgets what was written, so the manager's create
// of a name the floor wrote is a first write; another capability's object
// of the same name is another object.
func TestRewrites(t *testing.T) {
	const argo, argoURI = "bench-008", "/api/v1/namespaces/bench-008/secrets?fieldManager=clusterprofile-argocd"
	secret := func(verb, name, server string, labels map[string]string) auditEvent {
		e := event(verb, argoURI, "", "secrets", argo, name)
		if verb == "create" {
			e.ObjectRef.Name = "" // a create's reference names no object
		}
		body := map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
			"metadata": map[string]any{"name": name, "namespace": argo, "labels": labels, "creationTimestamp": nil},
			"data":     map[string]any{"name": "ZWFzdA==", "server": server}}
		e.RequestObject, _ = json.Marshal(body)
		return e
	}
	var w writtenFields
	for _, step := range []struct {
		gate string
		e    auditEvent
	}{
		{"argocd", secret("create", "cluster-east", "czE=", map[string]string{"a": "1"})},
		{"argocd", event("deletecollection", "/x", "", "secrets", argo, "")},
		{"argocd", secret("create", "cluster-east", "czE=", map[string]string{"a": "1"})},
		{"argocd", secret("patch", "cluster-east", "czI=", map[string]string{"a": "1", "b": "2"})},
		{"argocd", secret("patch", "cluster-east", "czI=", map[string]string{"a": "1", "b": "2"})},
		{"argocd", secret("create", "cluster-west", "czE=", nil)},
		{"argocd", event("delete", argoURI, "", "secrets", argo, "cluster-west")},
		{"argocd", secret("create", "cluster-west", "czE=", nil)},
		{"multikueue", secret("create", "cluster-east", "czE=", nil)},
	} {
		if err := w.record(step.gate, step.e); err != nil {
			t.Fatal(err)
		}
		if step.e.Verb == "deletecollection" {
			w.forget(step.e.ObjectRef.Namespace)
		}
	}
	want := []rewrite{
		{Gate: "argocd", Object: "bench-008/cluster-east", Fields: []string{"data.server", "metadata.labels.b"}},
		{Gate: "argocd", Object: "bench-008/cluster-east", Fields: []string{"nothing"}},
	}
	if diff := cmp.Diff(want, w.rewrites); diff != "" {
		t.Errorf("rewrites (-want +got):\n%s", diff)
	}
	if got := rewritesOf(append(want, want[0], want[0], want[0], want[0]), "argocd"); len(got) != maxRewritesShown {
		t.Errorf("rewrites shown: %d, want %d", len(got), maxRewritesShown)
	}
	if got := rewritesOf(want, "multikueue"); got != nil {
		t.Errorf("another gate's rewrites: %v, want none", got)
	}
}

// TestAuditLogRewrites: the audit log records the rewrites of what it
// tallies, and a phase reads those after its start.
func TestAuditLogRewrites(t *testing.T) {
	a := &auditLog{path: filepath.Join(t.TempDir(), "audit.log"), owners: auditOwners{}, writes: ownedWrites{}}
	mk := func(verb string, spec string) []byte {
		e := event(verb, "/x", "kueue.x-k8s.io", "multikueueclusters", "", "c")
		e.RequestObject = json.RawMessage(`{"metadata":{"name":"c"},"spec":` + spec + `}`)
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return append(line, '\n')
	}
	var log []byte
	for _, line := range [][]byte{mk("patch", `{"a":1}`), mk("patch", `{"a":2}`)} {
		log = append(log, line...)
	}
	if err := os.WriteFile(a.path, log, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.read(); err != nil {
		t.Fatal(err)
	}
	want := []rewrite{{Gate: "multikueue", Object: "/c", Fields: []string{"spec.a"}}}
	if diff := cmp.Diff(want, a.rewritesSince(0)); diff != "" {
		t.Errorf("rewrites (-want +got):\n%s", diff)
	}
	if got := a.rewritesSince(a.rewriteCount()); len(got) != 0 {
		t.Errorf("rewrites after the last: %v, want none", got)
	}
}
