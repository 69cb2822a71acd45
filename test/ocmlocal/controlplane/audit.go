//go:build linux

package controlplane

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// watchAuditPolicy records every watch a control plane's API server opens,
// once, when its response starts, and nothing else: a consumer that
// rebuilds its client for a cluster opens its watches again, and the count
// is read from here rather than from the consumer's own account.
const watchAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseComplete, Panic]
rules:
- level: Metadata
  verbs: [watch]
- level: None
`

func (cp *ControlPlane) auditLogPath() string { return filepath.Join(cp.dir, "audit", "watches.log") }

// auditArgs turns on the watch audit log.
func (cp *ControlPlane) auditArgs() ([]string, error) {
	dir := filepath.Dir(cp.auditLogPath())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(watchAuditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("writing the audit policy: %w", err)
	}
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + cp.auditLogPath(),
		"--audit-log-format=json", "--audit-log-mode=blocking"}, nil
}

// WatchesOpened counts the watches of resource in API group group (""
// for the core group) that the API server has opened for user since it
// started (a worker's own Kueue watches its Workloads too).
func (cp *ControlPlane) WatchesOpened(user, group, resource string) (int, error) {
	f, err := os.Open(cp.auditLogPath())
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 64*1024), 1024*1024)
	for lines.Scan() {
		var event struct {
			Verb string `json:"verb"`
			User struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef *struct {
				APIGroup string `json:"apiGroup"`
				Resource string `json:"resource"`
			} `json:"objectRef"`
		}
		if json.Unmarshal(lines.Bytes(), &event) != nil {
			continue // the line the API server is writing now
		}
		if event.Verb == "watch" && event.User.Username == user && event.ObjectRef != nil &&
			event.ObjectRef.APIGroup == group && event.ObjectRef.Resource == resource {
			n++
		}
	}
	return n, lines.Err()
}
