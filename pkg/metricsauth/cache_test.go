package metricsauth

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	allowed = decision{status: http.StatusOK}
	refused = decision{status: http.StatusForbidden, message: "Authorization denied for user someone"}
)

// An allowed decision is reused for a minute, a refusal for 30 s.
func TestDecisionsExpire(t *testing.T) {
	cases := map[string]struct {
		stored   decision
		after    time.Duration
		want     decision
		wantSeen bool
	}{
		"allowed, just before a minute":  {stored: allowed, after: allowedFor - time.Second, want: allowed, wantSeen: true},
		"allowed, after a minute":        {stored: allowed, after: allowedFor},
		"refused, just before 30 s":      {stored: refused, after: refusedFor - time.Second, want: refused, wantSeen: true},
		"refused, after 30 s":            {stored: refused, after: refusedFor},
		"refused, not kept for a minute": {stored: refused, after: allowedFor - time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clock := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
			c := newDecisionCache(clock)
			c.put("key", tc.stored)
			clock.SetTime(clock.Now().Add(tc.after))
			got, seen := c.get("key")
			if seen != tc.wantSeen {
				t.Fatalf("found = %v, want %v", seen, tc.wantSeen)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(decision{})); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// A flood of new tokens cannot grow the cache past maxDecisions: expired
// entries go first, and a cache full of live ones starts over.
func TestTheCacheStaysBounded(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	c := newDecisionCache(clock)
	for i := range maxDecisions {
		c.put(fmt.Sprint("old", i), refused)
	}
	clock.SetTime(clock.Now().Add(refusedFor))
	c.put("allowed", allowed)
	if len(c.entries) != 1 {
		t.Fatalf("after the refusals expired: %d entries, want 1", len(c.entries))
	}
	for i := range maxDecisions {
		c.put(fmt.Sprint("new", i), refused)
	}
	if len(c.entries) > maxDecisions {
		t.Fatalf("%d entries, want at most %d", len(c.entries), maxDecisions)
	}
	if _, ok := c.get(fmt.Sprint("new", maxDecisions-1)); !ok {
		t.Error("the newest decision is not kept")
	}
}

func TestBearerToken(t *testing.T) {
	cases := map[string]struct {
		header string
		want   string
		wantOK bool
	}{
		"bearer":             {header: "Bearer abc", want: "abc", wantOK: true},
		"any case":           {header: "bEaReR abc", want: "abc", wantOK: true},
		"spaces around":      {header: "  Bearer   abc  ", want: "abc", wantOK: true},
		"none":               {header: ""},
		"basic":              {header: "Basic YTpi"},
		"bearer, no token":   {header: "Bearer "},
		"no scheme":          {header: "abc"},
		"bearer glued token": {header: "Bearerabc"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Authorization", tc.header)
			got, ok := bearerToken(req)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("bearerToken(%q) = %q, %v; want %q, %v", tc.header, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// The cache key never carries the token.
func TestCacheKeyHidesTheToken(t *testing.T) {
	key := cacheKey("secret-token", "get", "/metrics")
	if want := fmt.Sprintf("%x get /metrics", sha256.Sum256([]byte("secret-token"))); key != want {
		t.Errorf("cacheKey = %q, want %q", key, want)
	}
}
