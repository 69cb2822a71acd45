package agent

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent/agenttest"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

var testNow = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

func leaseRenewed(component string, ago time.Duration) *coordinationv1.Lease {
	return agenttest.MakeLease(LeaseNamespace, component, testNow.Add(-ago))
}

func TestControlPlaneCondition(t *testing.T) {
	ready := ReadyzResult{Observed: true, Ready: true, Passed: []string{"ping", "etcd", "informer-sync"}}
	fresh := map[string]*coordinationv1.Lease{
		ControllerManager: leaseRenewed(ControllerManager, 2*time.Second),
		Scheduler:         leaseRenewed(Scheduler, 5*time.Second),
	}
	cases := map[string]struct {
		readyz ReadyzResult
		leases map[string]*coordinationv1.Lease
		want   metav1.Condition
	}{
		"all fresh": {
			readyz: ready, leases: fresh,
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: agentapi.ReasonAgentChecksPassed,
				Message: "API server ready (etcd ok), kube-controller-manager leader Lease fresh, kube-scheduler leader Lease fresh"},
		},
		"scheduler stale": {
			readyz: ready,
			leases: map[string]*coordinationv1.Lease{
				ControllerManager: fresh[ControllerManager],
				Scheduler:         leaseRenewed(Scheduler, 61*time.Second),
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: agentapi.ReasonAgentChecksFailed,
				Message: "Failing: kube-scheduler (leader Lease last renewed 2026-05-06T07:07:08Z, stale after 1m0s)"},
		},
		"renewed exactly at the limit is fresh": {
			readyz: ready,
			leases: map[string]*coordinationv1.Lease{
				ControllerManager: fresh[ControllerManager],
				Scheduler:         leaseRenewed(Scheduler, time.Minute),
			},
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: agentapi.ReasonAgentChecksPassed,
				Message: "API server ready (etcd ok), kube-controller-manager leader Lease fresh, kube-scheduler leader Lease fresh"},
		},
		"lease never renewed": {
			readyz: ready,
			leases: map[string]*coordinationv1.Lease{
				ControllerManager: agenttest.MakeLease(LeaseNamespace, ControllerManager, time.Time{}),
				Scheduler:         fresh[Scheduler],
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: agentapi.ReasonAgentChecksFailed,
				Message: "Failing: kube-controller-manager (leader Lease never renewed)"},
		},
		"controller-manager absent": {
			readyz: ready,
			leases: map[string]*coordinationv1.Lease{Scheduler: fresh[Scheduler]},
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: agentapi.ReasonAgentChecksPartiallyObserved,
				Message: "API server ready (etcd ok), kube-scheduler leader Lease fresh. " +
					"Not observed: kube-controller-manager (no Lease kube-system/kube-controller-manager)"},
		},
		"managed control plane without leases": {
			readyz: ready, leases: nil,
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: agentapi.ReasonAgentChecksPartiallyObserved,
				Message: "API server ready (etcd ok). Not observed: kube-controller-manager (no Lease kube-system/kube-controller-manager); " +
					"kube-scheduler (no Lease kube-system/kube-scheduler)"},
		},
		"readyz failing": {
			readyz: ReadyzResult{Observed: true, Passed: []string{"ping"}, Failed: []string{"etcd", "poststarthook/start-apiextensions-informers"}},
			leases: fresh,
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: agentapi.ReasonAgentChecksFailed,
				Message: "Failing: API server readyz checks etcd, poststarthook/start-apiextensions-informers"},
		},
		"readyz failing without naming checks": {
			readyz: ReadyzResult{Observed: true},
			leases: fresh,
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: agentapi.ReasonAgentChecksFailed,
				Message: "Failing: API server not ready"},
		},
		"readyz failing, scheduler stale, controller-manager absent": {
			readyz: ReadyzResult{Observed: true, Failed: []string{"etcd"}},
			leases: map[string]*coordinationv1.Lease{Scheduler: leaseRenewed(Scheduler, time.Hour)},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: agentapi.ReasonAgentChecksFailed,
				Message: "Failing: API server readyz checks etcd; kube-scheduler (leader Lease last renewed 2026-05-06T06:08:09Z, stale after 1m0s). " +
					"Not observed: kube-controller-manager (no Lease kube-system/kube-controller-manager)"},
		},
		"readyz forbidden": {
			readyz: ReadyzResult{Problem: "/readyz answered HTTP 403"},
			leases: fresh,
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: agentapi.ReasonAgentChecksPartiallyObserved,
				Message: "kube-controller-manager leader Lease fresh, kube-scheduler leader Lease fresh. " +
					"Not observed: API server (/readyz answered HTTP 403)"},
		},
		"nothing observed is unknown": {
			readyz: ReadyzResult{Problem: "/readyz answered HTTP 403"},
			want: metav1.Condition{Status: metav1.ConditionUnknown, Reason: agentapi.ReasonAgentChecksPartiallyObserved,
				Message: "Not observed: API server (/readyz answered HTTP 403); kube-controller-manager (no Lease kube-system/kube-controller-manager); " +
					"kube-scheduler (no Lease kube-system/kube-scheduler)"},
		},
		"ready without a report of its checks": {
			readyz: ReadyzResult{Observed: true, Ready: true},
			leases: fresh,
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: agentapi.ReasonAgentChecksPassed,
				Message: "API server ready, kube-controller-manager leader Lease fresh, kube-scheduler leader Lease fresh"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.want.Type = agentapi.ConditionControlPlaneHealthy
			got := ControlPlaneCondition(tc.readyz, tc.leases, testNow, time.Minute)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ControlPlaneCondition (-want +got):\n%s", diff)
			}
		})
	}
}
