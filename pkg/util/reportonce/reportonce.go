// Package reportonce remembers what a controller last reported about each
// object, so that a problem is reported (log line, Event, metric) when it
// appears or changes rather than on every reconcile.
package reportonce

import "sync"

// Memory holds, per subject (a cluster, a namespace/name), the findings last
// reported: topic → description.
type Memory struct {
	mu        sync.Mutex
	bySubject map[string]map[string]string
}

// New returns an empty memory.
func New() *Memory {
	return &Memory{bySubject: map[string]map[string]string{}}
}

// Update stores the subject's current findings and returns the topics that
// are new or whose description changed. Findings no longer present are
// forgotten, so a problem that comes back is reported again.
func (m *Memory) Update(subject string, findings map[string]string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	previous := m.bySubject[subject]
	var fresh []string
	for topic, description := range findings {
		if previous[topic] != description {
			fresh = append(fresh, topic)
		}
	}
	if len(findings) == 0 {
		delete(m.bySubject, subject)
	} else {
		m.bySubject[subject] = findings
	}
	return fresh
}
