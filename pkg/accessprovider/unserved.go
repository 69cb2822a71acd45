package accessprovider

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// withdrawGrace is how long a source leaves its entry on a profile that no
// namespace serves any more while this process's mirror is about to delete
// it. Withdrawing first would cost a write on every profile of an unbound
// namespace, racing the deletion, and at the API server's pace a large
// namespace takes a while to delete. Past the grace (the mirror failing),
// the entry is withdrawn all the same; an entry holds no credential, and
// the syncer revokes the token copies at once.
const withdrawGrace = 2 * time.Minute

// unservedSince remembers when each profile was first found unserved.
type unservedSince struct {
	mu    sync.Mutex
	since map[types.NamespacedName]time.Time
}

func newUnservedSince() *unservedSince {
	return &unservedSince{since: map[types.NamespacedName]time.Time{}}
}

// wait is how much longer to leave the entry on the profile; 0 means
// withdraw now.
func (u *unservedSince) wait(key types.NamespacedName, now time.Time) time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	since, seen := u.since[key]
	if !seen {
		u.since[key] = now
		return withdrawGrace
	}
	return max(withdrawGrace-now.Sub(since), 0)
}

// forget drops a profile that is served again, withdrawn from or gone.
func (u *unservedSince) forget(key types.NamespacedName) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.since, key)
}

// Pauses between revocations of an entry another writer puts back:
// cluster-proxy's own writer puts its entry on every profile that carries
// the cluster manager's labels, on every change of the profile, so revoking
// at once each time would be a loop of two writers. The first revocation is
// immediate; each one after the entry came back waits twice as long as the
// last, up to revokeAgainMax.
const (
	revokeAgainAfter = 10 * time.Second
	revokeAgainMax   = 10 * time.Minute
)

// revocations remembers, per profile, how often the entry was revoked
// since the profile stopped being published, and when last.
type revocations struct {
	mu   sync.Mutex
	last map[types.NamespacedName]revocation
}

type revocation struct {
	times int
	at    time.Time
}

func newRevocations() *revocations {
	return &revocations{last: map[types.NamespacedName]revocation{}}
}

// wait is how long to wait before revoking the entry again; 0 means now.
func (r *revocations) wait(key types.NamespacedName, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	last, ok := r.last[key]
	if !ok {
		return 0
	}
	pause := revokeAgainMax
	if last.times <= 10 {
		pause = min(revokeAgainAfter<<(last.times-1), revokeAgainMax)
	}
	return max(pause-now.Sub(last.at), 0)
}

// revoked records a revocation done.
func (r *revocations) revoked(key types.NamespacedName, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last[key] = revocation{times: r.last[key].times + 1, at: now}
}

// times is how many revocations were done: each after the first is an
// entry put back.
func (r *revocations) times(key types.NamespacedName) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[key].times
}

// forget drops a profile that is published again or gone.
func (r *revocations) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, key)
}
