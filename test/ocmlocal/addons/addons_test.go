//go:build linux

package addons

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWithFeatureGates(t *testing.T) {
	base := []string{"--leader-elect=false", "--feature-gates=Old=true", "--agent-install-namespace=x"}
	for name, tc := range map[string]struct {
		gates map[string]bool
		want  []string
	}{
		"set, in name order": {gates: map[string]bool{"ClusterProfileCredSyncer": true, "B": false},
			want: []string{"--leader-elect=false", "--agent-install-namespace=x", "--feature-gates=B=false,ClusterProfileCredSyncer=true"}},
		"none: the flag goes": {want: []string{"--leader-elect=false", "--agent-install-namespace=x"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, withFeatureGates(base, tc.gates)); diff != "" {
				t.Errorf("withFeatureGates (-want +got):\n%s", diff)
			}
		})
	}
}
