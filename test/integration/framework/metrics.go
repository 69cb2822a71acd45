package framework

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// MetricValue reads, from the managers' metrics registry, the value of the
// counter or gauge name whose labels include labels, and whether such a
// series exists (a counter's series may not, before its first count).
func MetricValue(name string, labels map[string]string) (float64, bool, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return 0, false, fmt.Errorf("gathering metrics: %w", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m.GetLabel(), labels) {
				continue
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue(), true, nil
			}
			return m.GetGauge().GetValue(), true, nil
		}
	}
	return 0, false, nil
}

// KeysQueued is, per controller, how many keys its work queue has taken in
// (workqueue_adds_total).
func KeysQueued(t testing.TB, controllers ...string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, name := range controllers {
		v, _, err := MetricValue("workqueue_adds_total", map[string]string{"name": name})
		if err != nil {
			t.Fatal(err)
		}
		out[name] = v
	}
	return out
}

// ExpectKeysQueued waits until the controllers' queues have taken in want
// keys each since before (KeysQueued's), and checks that no more come.
func ExpectKeysQueued(t testing.TB, before, want map[string]float64) {
	t.Helper()
	keys := func() map[string]float64 {
		now := KeysQueued(t, slices.Collect(maps.Keys(want))...)
		for name := range now {
			now[name] -= before[name]
		}
		return now
	}
	gomega.NewWithT(t).Eventually(keys, Timeout, Interval).Should(gomega.Equal(want), "keys queued")
	gomega.NewWithT(t).Consistently(keys, 2*time.Second, Interval).Should(gomega.Equal(want), "keys queued")
}

func hasLabels[P interface {
	GetName() string
	GetValue() string
}](pairs []P, want map[string]string) bool {
	found := 0
	for _, p := range pairs {
		if v, ok := want[p.GetName()]; ok && v == p.GetValue() {
			found++
		}
	}
	return found == len(want)
}
