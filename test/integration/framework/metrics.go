package framework

import (
	"fmt"

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
