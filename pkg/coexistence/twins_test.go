package coexistence

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
)

func TestFeatureGates(t *testing.T) {
	cases := map[string]struct {
		argv []string
		want map[string]bool
	}{
		"none":                           {argv: []string{"/manager", "--leader-elect=true"}, want: map[string]bool{}},
		"one flag":                       {argv: []string{"--feature-gates=ClusterProfileAccessProvider=true"}, want: map[string]bool{"ClusterProfileAccessProvider": true}},
		"several, with space":            {argv: []string{"--feature-gates", "EphemeralIdentity=false, ClusterProfileCredSyncer=True"}, want: map[string]bool{"EphemeralIdentity": false, "ClusterProfileCredSyncer": true}},
		"later flags add":                {argv: []string{"--feature-gates=A=true", "--feature-gates=B=true,A=false"}, want: map[string]bool{"A": false, "B": true}},
		"what does not parse is ignored": {argv: []string{"--feature-gates=A,B=maybe,C=1"}, want: map[string]bool{"C": true}},
		"a trailing flag without value":  {argv: []string{"--feature-gates"}, want: map[string]bool{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FeatureGates(tc.argv)); diff != "" {
				t.Errorf("gates (-want +got):\n%s", diff)
			}
		})
	}
}

// deployment is an upstream manager Deployment whose one container runs
// with args.
func deployment(namespace, name string, args ...string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "manager", Command: []string{"/manager"}, Args: args}}}}}}
}

func TestEnabledBy(t *testing.T) {
	scaledDown := deployment("addons", "cluster-proxy-addon-manager", "--feature-gates=ClusterProfileAccessProvider=true")
	scaledDown.Spec.Replicas = ptr.To[int32](0)
	deleting := deployment("addons", "cluster-proxy-addon-manager", "--feature-gates=ClusterProfileAccessProvider=true")
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	cases := map[string]struct {
		twin Twin
		d    *appsv1.Deployment
		want bool
	}{
		"cluster-proxy, the guide's gate": {twin: ClusterProxyWriter, d: deployment("addons", "cluster-proxy-addon-manager",
			"--leader-elect=true", "--feature-gates=ClusterProfileAccessProvider=true"), want: true},
		"cluster-proxy, the newer gate": {twin: ClusterProxyWriter, d: deployment("ocm", "cluster-proxy-addon-manager",
			"--feature-gates=ClusterProfile=true"), want: true},
		"cluster-proxy, gate off": {twin: ClusterProxyWriter, d: deployment("addons", "cluster-proxy-addon-manager",
			"--feature-gates=ClusterProfileAccessProvider=false"), want: false},
		"cluster-proxy, no gate":                        {twin: ClusterProxyWriter, d: deployment("addons", "cluster-proxy-addon-manager"), want: false},
		"scaled to zero":                                {twin: ClusterProxyWriter, d: scaledDown, want: false},
		"being deleted":                                 {twin: ClusterProxyWriter, d: deleting, want: false},
		"another Deployment":                            {twin: ClusterProxyWriter, d: deployment("addons", "lookalike", "--feature-gates=ClusterProfileAccessProvider=true"), want: false},
		"managed-serviceaccount":                        {twin: ManagedServiceAccountSyncer, d: deployment("addons", "managed-serviceaccount-addon-manager", "manager", "--feature-gates=EphemeralIdentity=false,ClusterProfileCredSyncer=true"), want: true},
		"managed-serviceaccount, the other twin's gate": {twin: ManagedServiceAccountSyncer, d: deployment("addons", "managed-serviceaccount-addon-manager", "--feature-gates=ClusterProfileAccessProvider=true"), want: false},
		"nil": {twin: ClusterProxyWriter, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.twin.EnabledBy(tc.d); got != tc.want {
				t.Errorf("EnabledBy = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestYieldingReportsEachChangeOnce: the answer follows the Deployments,
// and each change is an Event on them, once.
func TestYieldingReportsEachChangeOnce(t *testing.T) {
	ctx := context.Background()
	on := deployment("addons", "cluster-proxy-addon-manager", "--feature-gates=ClusterProfileAccessProvider=true")
	c := fakeclient.New(on, deployment("addons", "lookalike", "--feature-gates=ClusterProfileAccessProvider=true"))
	recorder := events.NewFakeRecorder(10)
	w := NewTwinWatchReading(ClusterProxyWriter, c)
	w.recorder = recorder
	steps := []struct {
		change     func()
		want       bool
		wantEvents []string
	}{
		{want: true, wantEvents: []string{"Warning YieldingToUpstream cluster-proxy's ClusterProfile writer is enabled here (ClusterProfileAccessProvider or ClusterProfile); clusterprofile-manager's access-proxy yields to it and takes over when it is turned off. Enable only one of them."}},
		{want: true},
		{change: func() {
			on.Spec.Template.Spec.Containers[0].Args = nil
			if err := c.Update(ctx, on); err != nil {
				t.Fatal(err)
			}
		}, want: false, wantEvents: []string{"Normal TakingOverFromUpstream cluster-proxy's ClusterProfile writer is off; clusterprofile-manager's access-proxy writes in its place."}},
		{change: func() {
			if err := c.Delete(ctx, on); err != nil {
				t.Fatal(err)
			}
		}, want: false},
	}
	for i, step := range steps {
		if step.change != nil {
			step.change()
		}
		got, err := w.Yielding(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != step.want {
			t.Errorf("step %d: yielding = %v, want %v", i, got, step.want)
		}
		var events []string
		for len(recorder.Events) > 0 {
			events = append(events, <-recorder.Events)
		}
		if diff := cmp.Diff(step.wantEvents, events); diff != "" {
			t.Errorf("step %d: events (-want +got):\n%s", i, diff)
		}
	}
}

func TestANilWatchNeverYields(t *testing.T) {
	var w *TwinWatch
	if got, err := w.Yielding(context.Background()); got || err != nil {
		t.Errorf("Yielding = %v, %v", got, err)
	}
	if err := w.Start(nil); err != nil {
		t.Error(err)
	}
}
