package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKeysQueued: the keys a restart queued are every queue's adds, the
// queues of the controllers that own objects and the addon framework's
// included, by queue name.
func TestKeysQueued(t *testing.T) {
	set, err := parseExposition(strings.NewReader(`# TYPE workqueue_adds_total counter
workqueue_adds_total{controller="clusterprofile-mirror",name="clusterprofile-mirror"} 40
workqueue_adds_total{controller="clusterprofile-multikueue",name="clusterprofile-multikueue"} 160
workqueue_adds_total{controller="clusterprofile-placement-decisions",name="clusterprofile-placement-decisions"} 4
workqueue_adds_total{name="addon-deploy-controller"} 0
workqueue_depth{controller="clusterprofile-mirror",name="clusterprofile-mirror"} 3
`))
	if err != nil {
		t.Fatal(err)
	}
	total, byQueue := set.keysQueued()
	want := map[string]int{"clusterprofile-mirror": 40, "clusterprofile-multikueue": 160, "clusterprofile-placement-decisions": 4,
		"addon-deploy-controller": 0}
	if diff := cmp.Diff(want, byQueue); diff != "" || total != 204 {
		t.Errorf("keys queued %d, want 204; by queue (-want +got):\n%s", total, diff)
	}
	if got := byName(byQueue); got != "clusterprofile-mirror 40, clusterprofile-multikueue 160, clusterprofile-placement-decisions 4" {
		t.Errorf("reported as %q", got)
	}
}
