package hubmanager

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
)

func TestControllerOptions(t *testing.T) {
	cases := map[string]struct {
		given, want config.Controller
	}{
		"the priority queue is off by default (it can deadlock on shutdown)": {
			given: config.Controller{SkipNameValidation: ptr.To(true)},
			want:  config.Controller{SkipNameValidation: ptr.To(true), UsePriorityQueue: ptr.To(false)},
		},
		"asked for, it is kept": {
			given: config.Controller{UsePriorityQueue: ptr.To(true)},
			want:  config.Controller{UsePriorityQueue: ptr.To(true)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, controllerOptions(tc.given), cmpopts.IgnoreFields(config.Controller{}, "Logger")); diff != "" {
				t.Errorf("controller options (-want +got):\n%s", diff)
			}
		})
	}
}
