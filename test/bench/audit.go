package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"

	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/argocd"
	"open-cluster-management.io/clusterprofile-bundle/pkg/multikueue"
)

// auditWriteVerbs are the verbs of the writes the audit log records.
var auditWriteVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// auditPolicy is the API server's audit policy (audit.k8s.io/v1, as JSON,
// which the API server reads as YAML): one event per write, when it is
// answered, to what the capabilities that own objects write, with the
// request's body (to name what a second write of an object changed);
// nothing else.
// Only the API server tells those writes apart by capability: the manager
// counts none of them in its metrics, and Argo CD's cluster Secrets are
// Secrets like the token copies.
type auditPolicy struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	OmitStages []string    `json:"omitStages"`
	Rules      []auditRule `json:"rules"`
}

type auditRule struct {
	Level      string           `json:"level"`
	Verbs      []string         `json:"verbs,omitempty"`
	Namespaces []string         `json:"namespaces,omitempty"`
	Resources  []auditResources `json:"resources,omitempty"`
}

type auditResources struct {
	Group     string   `json:"group"`
	Resources []string `json:"resources"`
}

// auditPolicy audits the writes to the owned objects of the run's
// capabilities: every MultiKueueCluster (and MultiKueueConfig), every
// Cluster Inventory PlacementDecision, and the Secrets of Argo CD's
// namespace.
func (w *world) auditPolicy() auditPolicy {
	var rules []auditRule
	write := func(namespace, group string, resources ...string) {
		rule := auditRule{Level: "Request", Verbs: auditWriteVerbs, Resources: []auditResources{{Group: group, Resources: resources}}}
		if namespace != "" {
			rule.Namespaces = []string{namespace}
		}
		rules = append(rules, rule)
	}
	for _, k := range w.owned.ownedKindsOn() {
		switch k.gate {
		case "multikueue":
			write("", multikueue.GroupVersion.Group, "multikueueclusters", "multikueueconfigs")
		case "argocd":
			write(w.namespaces[w.owned.argoCD], "", "secrets")
		case "placementdecision":
			write("", cpv1alpha1.GroupVersion.Group, "placementdecisions")
		}
	}
	return auditPolicy{APIVersion: "audit.k8s.io/v1", Kind: "Policy", OmitStages: []string{"RequestReceived"},
		Rules: append(rules, auditRule{Level: "None"})}
}

// auditEvent is what the benchmark reads of an audit event.
type auditEvent struct {
	Verb          string          `json:"verb"`
	RequestURI    string          `json:"requestURI"`
	RequestObject json.RawMessage `json:"requestObject"`
	ObjectRef     *struct {
		APIGroup  string `json:"apiGroup"`
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"objectRef"`
}

// auditOwners tells which capability an audited write was for.
type auditOwners struct {
	// argoCDNamespace is Argo CD's namespace ("" when the integration does
	// not run), and argoCDSecrets the names of its cluster Secrets there.
	argoCDNamespace string
	argoCDSecrets   map[string]bool
}

func (w *world) auditOwners() auditOwners {
	o := auditOwners{argoCDSecrets: map[string]bool{}}
	if w.owned.argoCD >= 0 {
		o.argoCDNamespace = w.namespaces[w.owned.argoCD]
		for _, c := range w.clusters {
			o.argoCDSecrets[argocd.SecretName(c.Name)] = true
		}
	}
	return o
}

// ownerOf is the gate of the capability a write was for, or "": only the
// MultiKueue integration writes MultiKueueClusters and only the placement
// decisions write the Cluster Inventory's slices; a Secret in Argo CD's
// namespace is the integration's when it wrote it (its field manager) or
// it bears one of its cluster Secrets' names (a delete names no field
// manager; the token copies there are the syncer's).
func (o auditOwners) ownerOf(e auditEvent) string {
	r := e.ObjectRef
	if r == nil || !slices.Contains(auditWriteVerbs, e.Verb) {
		return ""
	}
	switch {
	case r.APIGroup == multikueue.GroupVersion.Group:
		return "multikueue"
	case r.APIGroup == cpv1alpha1.GroupVersion.Group && r.Resource == "placementdecisions":
		return "placementdecision"
	case r.APIGroup == "" && r.Resource == "secrets" && r.Namespace != "" && r.Namespace == o.argoCDNamespace &&
		(fieldManagerOf(e.RequestURI) == argocd.FieldManager || o.argoCDSecrets[r.Name]):
		return "argocd"
	}
	return ""
}

// fieldManagerOf is the field manager a request names in its query.
func fieldManagerOf(requestURI string) string {
	u, err := url.Parse(requestURI)
	if err != nil {
		return ""
	}
	return u.Query().Get("fieldManager")
}

// ownedWrites are write requests the API server took, by the gate of the
// capability whose objects they wrote.
type ownedWrites map[string]int

// minus is the writes taken between an earlier count and this one.
func (w ownedWrites) minus(earlier ownedWrites) ownedWrites {
	out := ownedWrites{}
	for gate, n := range w {
		out[gate] = n - earlier[gate]
	}
	return out
}

// auditLog is the API server's audit log, tallied by capability as it is
// read. A nil auditLog (no capability owns objects) reads no writes.
type auditLog struct {
	path, policyPath string
	owners           auditOwners

	mu     sync.Mutex
	offset int64
	// partial is a line the API server had not finished writing.
	partial []byte
	writes  ownedWrites
	written writtenFields
}

// newAuditLog writes the audit policy into dir; nil when the run has no
// capability that owns objects.
func newAuditLog(dir string, w *world) (*auditLog, error) {
	if len(w.owned.ownedKindsOn()) == 0 {
		return nil, nil
	}
	a := &auditLog{path: filepath.Join(dir, "audit.log"), policyPath: filepath.Join(dir, "audit-policy.json"),
		owners: w.auditOwners(), writes: ownedWrites{}}
	policy, err := json.Marshal(w.auditPolicy())
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(a.policyPath, policy, 0o600); err != nil {
		return nil, fmt.Errorf("writing the audit policy: %w", err)
	}
	return a, nil
}

// apiServerFlags turn the audit log on (none without one). The log backend blocks each
// request until its event is written, so a write the manager saw answered
// is in the log.
func (a *auditLog) apiServerFlags() map[string]string {
	if a == nil {
		return nil
	}
	return map[string]string{"audit-policy-file": a.policyPath, "audit-log-path": a.path,
		"audit-log-format": "json", "audit-log-mode": "blocking", "audit-log-maxsize": "0"}
}

// read tallies the events written since the last read and returns the
// writes so far.
func (a *auditLog) read() (ownedWrites, error) {
	if a == nil {
		return ownedWrites{}, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := os.Open(a.path)
	if os.IsNotExist(err) {
		return maps.Clone(a.writes), nil // nothing audited yet
	}
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(a.offset, io.SeekStart); err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	a.offset += int64(len(data))
	data = append(a.partial, data...)
	end := bytes.LastIndexByte(data, '\n') + 1
	a.partial = slices.Clone(data[end:])
	if err := a.tally(data[:end]); err != nil {
		return nil, err
	}
	return maps.Clone(a.writes), nil
}

// tally counts the events of whole lines.
func (a *auditLog) tally(lines []byte) error {
	for line := range bytes.Lines(lines) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e auditEvent
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("parsing an audit event: %w", err)
		}
		if e.Verb == "deletecollection" && e.ObjectRef != nil {
			a.written.forget(e.ObjectRef.Namespace)
		}
		if gate := a.owners.ownerOf(e); gate != "" {
			a.writes[gate]++
			if err := a.written.record(gate, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// rewriteCount is how many rewrites the log has shown so far (read first).
func (a *auditLog) rewriteCount() int {
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.written.rewrites)
}

// rewritesSince are the rewrites the log showed after the first n.
func (a *auditLog) rewritesSince(n int) []rewrite {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.written.rewrites[n:])
}
