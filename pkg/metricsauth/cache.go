package metricsauth

import (
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// maxDecisions bounds the cache: requests with ever new tokens (an
// attacker's, or many scrapers') cannot grow it past this.
const maxDecisions = 1024

// decision is the answer to one (token, verb, path): 200, 401 or 403.
type decision struct {
	status  int
	message string
}

type cachedDecision struct {
	decision
	expires time.Time
}

// decisionCache keeps decisions until they expire (allowedFor, refusedFor).
type decisionCache struct {
	clock clock.PassiveClock

	mu      sync.Mutex
	entries map[string]cachedDecision
}

func newDecisionCache(c clock.PassiveClock) *decisionCache {
	return &decisionCache{clock: c, entries: map[string]cachedDecision{}}
}

func (c *decisionCache) get(key string) (decision, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	entry, ok := c.entries[key]
	if !ok || !c.clock.Now().Before(entry.expires) {
		return decision{}, false
	}
	return entry.decision, true
}

func (c *decisionCache) put(key string, d decision) {
	ttl := refusedFor
	if d.status == http.StatusOK {
		ttl = allowedFor
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	if len(c.entries) >= maxDecisions {
		c.dropExpired(now)
	}
	if len(c.entries) >= maxDecisions {
		// Still full of live entries: start over rather than grow.
		clear(c.entries)
	}
	c.entries[key] = cachedDecision{decision: d, expires: now.Add(ttl)}
}

func (c *decisionCache) dropExpired(now time.Time) {
	for key, entry := range c.entries {
		if !now.Before(entry.expires) {
			delete(c.entries, key)
		}
	}
}
