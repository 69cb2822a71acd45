//go:build linux

package controlplane

import (
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

// AuditLogPath is the API server's audit log: one JSON line per watch it
// opened (watchAuditPolicy), which a test reads to count a consumer's
// watches.
func (cp *ControlPlane) AuditLogPath() string { return filepath.Join(cp.dir, "audit", "watches.log") }

// auditArgs turns on the watch audit log.
func (cp *ControlPlane) auditArgs() ([]string, error) {
	dir := filepath.Dir(cp.AuditLogPath())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(watchAuditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("writing the audit policy: %w", err)
	}
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + cp.AuditLogPath(),
		"--audit-log-format=json", "--audit-log-mode=blocking"}, nil
}
