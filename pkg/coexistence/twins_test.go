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
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// clusterProxyAddOn is the ClusterManagementAddOn cluster-proxy's install creates.
func clusterProxyAddOn() *addonv1beta1.ClusterManagementAddOn {
	return &addonv1beta1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "cluster-proxy"}}
}

func TestJudge(t *testing.T) {
	trust := Trust{Namespaces: []string{"open-cluster-management-addon", "ocm-addons"}}
	on := func(namespace string) *appsv1.Deployment {
		return deployment(namespace, "cluster-proxy-addon-manager", "--feature-gates=ClusterProfileAccessProvider=true")
	}
	cases := map[string]struct {
		d         *appsv1.Deployment
		trust     Trust
		installed bool
		want      Verdict
	}{
		"installed by a hub admin":              {d: on("open-cluster-management-addon"), trust: trust, installed: true, want: Running},
		"in another upstream namespace":         {d: on("ocm-addons"), trust: trust, installed: true, want: Running},
		"the default upstream namespace":        {d: on(DefaultUpstreamNamespace), installed: true, want: Running},
		"in a tenant's namespace":               {d: on("team-a"), trust: trust, installed: true, want: DecoyNamespace},
		"outside the default namespace":         {d: on("ocm-addons"), installed: true, want: DecoyNamespace},
		"in a tenant's, no addon either":        {d: on("team-a"), trust: trust, want: DecoyNamespace},
		"no ClusterManagementAddOn":             {d: on("open-cluster-management-addon"), trust: trust, want: DecoyNoAddOn},
		"gate off, anywhere":                    {d: deployment("team-a", "cluster-proxy-addon-manager"), trust: trust, installed: true, want: NotRunning},
		"gate off in an upstream namespace":     {d: deployment("ocm-addons", "cluster-proxy-addon-manager"), trust: trust, installed: true, want: NotRunning},
		"another name in an upstream namespace": {d: deployment("ocm-addons", "lookalike", "--feature-gates=ClusterProfile=true"), trust: trust, installed: true, want: NotRunning},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ClusterProxyWriter.Judge(tc.d, tc.trust, tc.installed); got != tc.want {
				t.Errorf("Judge = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestYieldingReportsEachChangeOnce: the answer follows the Deployments a
// hub admin installed, each change is an Event on them, once, and each
// decoy is an Event on it, once.
func TestYieldingReportsEachChangeOnce(t *testing.T) {
	ctx := context.Background()
	on := deployment("addons", "cluster-proxy-addon-manager", "--feature-gates=ClusterProfileAccessProvider=true")
	decoy := deployment("team-a", "cluster-proxy-addon-manager", "--feature-gates=ClusterProfile=true")
	addOn := clusterProxyAddOn()
	c := fakeclient.New(on, addOn, deployment("addons", "lookalike", "--feature-gates=ClusterProfileAccessProvider=true"))
	recorder := events.NewFakeRecorder(10)
	w := NewTwinWatchReading(ClusterProxyWriter, Trust{Namespaces: []string{"addons"}}, c, recorder)
	const decoyNote = "Warning TwinDecoyIgnored This Deployment turns on cluster-proxy's ClusterProfile writer (ClusterProfileAccessProvider or ClusterProfile), " +
		"but namespace team-a is not one that hub admins install upstream components into (the chart's coexistence.upstreamNamespaces: addons); " +
		"if it is cluster-proxy's real manager, add its namespace there. clusterprofile-manager ignores it: its access-proxy neither yields to it nor stops revoking."
	steps := []struct {
		change     func()
		want       bool
		wantEvents []string
	}{
		{want: true, wantEvents: []string{"Warning YieldingToUpstream cluster-proxy's ClusterProfile writer is enabled here (ClusterProfileAccessProvider or ClusterProfile); clusterprofile-manager's access-proxy yields to it and takes over when it is turned off. Enable only one of them."}},
		{want: true},
		{change: func() { create(t, c, decoy) }, want: true, wantEvents: []string{decoyNote}},
		{want: true},
		{change: func() {
			on.Spec.Template.Spec.Containers[0].Args = nil
			if err := c.Update(ctx, on); err != nil {
				t.Fatal(err)
			}
		}, want: false, wantEvents: []string{"Normal TakingOverFromUpstream cluster-proxy's ClusterProfile writer is off; clusterprofile-manager's access-proxy writes in its place."}},
		{change: func() {
			on.Spec.Template.Spec.Containers[0].Args = []string{"--feature-gates=ClusterProfile=true"}
			if err := c.Update(ctx, on); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, addOn); err != nil {
				t.Fatal(err)
			}
		}, want: false, wantEvents: []string{"Warning TwinDecoyIgnored This Deployment turns on cluster-proxy's ClusterProfile writer (ClusterProfileAccessProvider or ClusterProfile), " +
			"but ClusterManagementAddOn cluster-proxy does not exist, so no installation of cluster-proxy made it. clusterprofile-manager ignores it: its access-proxy neither yields to it nor stops revoking."}},
		{change: func() {
			if err := c.Delete(ctx, on); err != nil {
				t.Fatal(err)
			}
		}, want: false},
		// A decoy that goes and comes back is reported again.
		{change: func() {
			if err := c.Delete(ctx, decoy); err != nil {
				t.Fatal(err)
			}
		}, want: false},
		{change: func() {
			create(t, c, deployment("team-a", "cluster-proxy-addon-manager", "--feature-gates=ClusterProfile=true"))
		},
			want: false, wantEvents: []string{decoyNote}},
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

// TestADecoyAloneNeverYields: a Deployment named like the twin's manager,
// with its gate on, in a namespace a tenant controls, changes nothing, even
// with the twin's ClusterManagementAddOn installed.
func TestADecoyAloneNeverYields(t *testing.T) {
	ctx := context.Background()
	c := fakeclient.New(clusterProxyAddOn(),
		deployment("team-a", "cluster-proxy-addon-manager", "--feature-gates=ClusterProfileAccessProvider=true"),
		deployment("team-b", "cluster-proxy-addon-manager", "--feature-gates=ClusterProfile=true"))
	w := NewTwinWatchReading(ClusterProxyWriter, Trust{}, c, nil)
	if got, err := w.Yielding(ctx); got || err != nil {
		t.Errorf("Yielding = %v, %v; want false", got, err)
	}
}

func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
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
