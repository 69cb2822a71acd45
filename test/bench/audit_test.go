package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// event is an audit event line of a write.
func event(verb, uri, group, resource, namespace, name string) auditEvent {
	e := auditEvent{Verb: verb, RequestURI: uri}
	e.ObjectRef = &struct {
		APIGroup  string `json:"apiGroup"`
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	}{group, resource, namespace, name}
	return e
}

// TestOwnerOf: a write to a MultiKueueCluster is the MultiKueue
// integration's, one to a Cluster Inventory PlacementDecision the placement
// decisions'; a Secret in Argo CD's namespace is the integration's when it
// wrote it or bears one of its Secrets' names, not when it is a token copy.
func TestOwnerOf(t *testing.T) {
	argoCD := auditOwners{argoCDNamespace: "argocd", argoCDSecrets: map[string]bool{"cluster-cluster-00001": true}}
	cases := map[string]struct {
		owners auditOwners
		event  auditEvent
		want   string
	}{
		"a MultiKueueCluster applied": {event: event("patch", "/apis/kueue.x-k8s.io/v1beta2/multikueueclusters/c?fieldManager=clusterprofile-multikueue&force=true",
			"kueue.x-k8s.io", "multikueueclusters", "", "c"), want: "multikueue"},
		"a MultiKueueCluster deleted": {event: event("delete", "/apis/kueue.x-k8s.io/v1beta2/multikueueclusters/c",
			"kueue.x-k8s.io", "multikueueclusters", "", "c"), want: "multikueue"},
		"a slice applied": {event: event("patch", "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/team/placementdecisions/p-decision-1?fieldManager=clusterprofile-placement-decisions",
			"multicluster.x-k8s.io", "placementdecisions", "team", "p-decision-1"), want: "placementdecision"},
		"one of OCM's PlacementDecisions": {event: event("update", "/apis/cluster.open-cluster-management.io/v1beta1/namespaces/team/placementdecisions/p-decision-1/status",
			"cluster.open-cluster-management.io", "placementdecisions", "team", "p-decision-1")},
		"a cluster Secret created": {owners: argoCD, event: event("create", "/api/v1/namespaces/argocd/secrets?fieldManager=clusterprofile-argocd",
			"", "secrets", "argocd", "cluster-cluster-00002"), want: "argocd"},
		"a cluster Secret deleted": {owners: argoCD, event: event("delete", "/api/v1/namespaces/argocd/secrets/cluster-cluster-00001",
			"", "secrets", "argocd", "cluster-cluster-00001"), want: "argocd"},
		"a token copy in Argo CD's namespace": {owners: argoCD, event: event("create", "/api/v1/namespaces/argocd/secrets?fieldManager=clusterprofile-credsync",
			"", "secrets", "argocd", "cluster-00001-bench-msa-0")},
		"a cluster Secret's name elsewhere": {owners: argoCD, event: event("delete", "/api/v1/namespaces/team/secrets/cluster-cluster-00001",
			"", "secrets", "team", "cluster-cluster-00001")},
		"a read":    {event: event("get", "/apis/kueue.x-k8s.io/v1beta2/multikueueclusters/c", "kueue.x-k8s.io", "multikueueclusters", "", "c")},
		"no object": {event: auditEvent{Verb: "create", RequestURI: "/apis"}},
		"Argo CD's Secret without the integration": {event: event("delete", "/api/v1/namespaces/argocd/secrets/cluster-cluster-00001", "", "secrets", "argocd", "cluster-cluster-00001")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.owners.ownerOf(tc.event); got != tc.want {
				t.Errorf("ownerOf = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestAuditLogReadsWholeLines: the log is tallied as the API server writes
// it, a line it has not finished with at the next read.
func TestAuditLogReadsWholeLines(t *testing.T) {
	dir := t.TempDir()
	a := &auditLog{path: filepath.Join(dir, "audit.log"), owners: auditOwners{}, writes: ownedWrites{}}
	if got, err := a.read(); err != nil || len(got) != 0 {
		t.Fatalf("before the API server wrote: %v, %v; want nothing", got, err)
	}
	line := func(e auditEvent) []byte {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return append(data, '\n')
	}
	mk := line(event("patch", "/x", "kueue.x-k8s.io", "multikueueclusters", "", "c"))
	slice := line(event("patch", "/x", "multicluster.x-k8s.io", "placementdecisions", "team", "p-decision-1"))
	other := line(event("create", "/x", "", "configmaps", "team", "cm"))
	var reads []ownedWrites
	for _, written := range [][]byte{
		append(append([]byte{}, mk...), slice[:10]...),
		append(append(append([]byte{}, slice[10:]...), other...), mk...),
		nil,
	} {
		f, err := os.OpenFile(a.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(written); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
		got, err := a.read()
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, got)
	}
	want := []ownedWrites{{"multikueue": 1}, {"multikueue": 2, "placementdecision": 1}, {"multikueue": 2, "placementdecision": 1}}
	if diff := cmp.Diff(want, reads); diff != "" {
		t.Errorf("writes read (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ownedWrites{"multikueue": 1, "placementdecision": 1}, reads[1].minus(reads[0])); diff != "" {
		t.Errorf("writes between the reads (-want +got):\n%s", diff)
	}
}

// TestAuditPolicy: only the writes of the owned objects of the capabilities
// that run are audited, Secrets in Argo CD's namespace only.
func TestAuditPolicy(t *testing.T) {
	g, err := parseGates("argocd,placementdecision")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(config{clusters: 3, namespaces: 4, gates: g})
	want := auditPolicy{APIVersion: "audit.k8s.io/v1", Kind: "Policy", OmitStages: []string{"RequestReceived"}, Rules: []auditRule{
		{Level: "Request", Verbs: auditWriteVerbs, Namespaces: []string{"bench-002"}, Resources: []auditResources{{Group: "", Resources: []string{"secrets"}}}},
		{Level: "Request", Verbs: auditWriteVerbs, Resources: []auditResources{{Group: "multicluster.x-k8s.io", Resources: []string{"placementdecisions"}}}},
		{Level: "None"},
	}}
	if diff := cmp.Diff(want, w.auditPolicy()); diff != "" {
		t.Errorf("audit policy (-want +got):\n%s", diff)
	}
	if a, err := newAuditLog(t.TempDir(), newWorld(config{clusters: 3, namespaces: 4, gates: gates{"mirror": true}})); a != nil || err != nil {
		t.Errorf("without owned objects: audit log %v, %v; want none", a, err)
	}
}
