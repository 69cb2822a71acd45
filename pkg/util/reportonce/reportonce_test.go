package reportonce

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReportsAreNewsOnlyWhenSomethingChanges(t *testing.T) {
	r := New()
	steps := []struct {
		cluster  string
		findings map[string]string
		want     []string
	}{
		{"c1", map[string]string{"claims": "a", "clash/ns": "fleet"}, []string{"claims", "clash/ns"}},
		{"c1", map[string]string{"claims": "a", "clash/ns": "fleet"}, nil},
		{"c2", map[string]string{"claims": "a"}, []string{"claims"}},
		{"c1", map[string]string{"claims": "a, b"}, []string{"claims"}},
		{"c1", nil, nil},
		// Solved and back again: reported again.
		{"c1", map[string]string{"clash/ns": "fleet"}, []string{"clash/ns"}},
	}
	for i, s := range steps {
		got := r.Update(s.cluster, s.findings)
		sort.Strings(got)
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("step %d: new findings (-want +got):\n%s", i, diff)
		}
	}
}
