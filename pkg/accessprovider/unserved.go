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
