//go:build linux

package ocm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	operatorv1 "open-cluster-management.io/api/operator/v1"
)

func TestSetFeatureGates(t *testing.T) {
	enable := func(name string) operatorv1.FeatureGate {
		return operatorv1.FeatureGate{Feature: name, Mode: operatorv1.FeatureGateModeTypeEnable}
	}
	disable := func(name string) operatorv1.FeatureGate {
		return operatorv1.FeatureGate{Feature: name, Mode: operatorv1.FeatureGateModeTypeDisable}
	}
	cases := map[string]struct {
		list  []operatorv1.FeatureGate
		gates map[string]bool
		want  []operatorv1.FeatureGate
	}{
		"clusteradm init --feature-gates=ClusterProfile=true": {
			gates: map[string]bool{"ClusterProfile": true},
			want:  []operatorv1.FeatureGate{enable("ClusterProfile")},
		},
		"new gates in name order": {
			gates: map[string]bool{"ManagedClusterAutoApproval": false, "ClusterProfile": true},
			want:  []operatorv1.FeatureGate{enable("ClusterProfile"), disable("ManagedClusterAutoApproval")},
		},
		"a named gate changes its mode in place, others are kept": {
			list:  []operatorv1.FeatureGate{enable("DefaultClusterSet"), enable("ClusterProfile")},
			gates: map[string]bool{"ClusterProfile": false},
			want:  []operatorv1.FeatureGate{enable("DefaultClusterSet"), disable("ClusterProfile")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, setFeatureGates(tc.list, tc.gates)); diff != "" {
				t.Errorf("feature gates (-want +got):\n%s", diff)
			}
		})
	}
}
