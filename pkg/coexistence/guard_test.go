package coexistence

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
)

func clusterManager(gates ...operatorv1.FeatureGate) *operatorv1.ClusterManager {
	cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: "cluster-manager"}}
	if gates != nil {
		cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{FeatureGates: gates}
	}
	return cm
}

func TestEnablesBuiltInMirror(t *testing.T) {
	now := metav1.Now()
	deleting := clusterManager(operatorv1.FeatureGate{Feature: "ClusterProfile", Mode: operatorv1.FeatureGateModeTypeEnable})
	deleting.DeletionTimestamp = &now
	cases := map[string]struct {
		cm   *operatorv1.ClusterManager
		want bool
	}{
		"no registration configuration": {cm: clusterManager(), want: false},
		"gate enabled":                  {cm: clusterManager(operatorv1.FeatureGate{Feature: "ClusterProfile", Mode: operatorv1.FeatureGateModeTypeEnable}), want: true},
		"gate disabled":                 {cm: clusterManager(operatorv1.FeatureGate{Feature: "ClusterProfile", Mode: operatorv1.FeatureGateModeTypeDisable}), want: false},
		"gate without mode is disabled": {cm: clusterManager(operatorv1.FeatureGate{Feature: "ClusterProfile"}), want: false},
		"another gate enabled":          {cm: clusterManager(operatorv1.FeatureGate{Feature: "ManagedClusterAutoApproval", Mode: operatorv1.FeatureGateModeTypeEnable}), want: false},
		"ClusterManager being deleted":  {cm: deleting, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := EnablesBuiltInMirror(tc.cm); got != tc.want {
				t.Errorf("EnablesBuiltInMirror = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestEnablesBuiltInPlacementDecisions: only the placement controller's
// gate counts, not the same name among the registration hub's gates.
func TestEnablesBuiltInPlacementDecisions(t *testing.T) {
	enable := operatorv1.FeatureGate{Feature: "SIGPlacementDecision", Mode: operatorv1.FeatureGateModeTypeEnable}
	placement := func(gates ...operatorv1.FeatureGate) *operatorv1.ClusterManager {
		cm := clusterManager()
		cm.Spec.PlacementConfiguration = &operatorv1.PlacementConfiguration{FeatureGates: gates}
		return cm
	}
	now := metav1.Now()
	deleting := placement(enable)
	deleting.DeletionTimestamp = &now
	cases := map[string]struct {
		cm   *operatorv1.ClusterManager
		want bool
	}{
		"no placement configuration":            {cm: clusterManager(), want: false},
		"gate enabled":                          {cm: placement(enable), want: true},
		"gate disabled":                         {cm: placement(operatorv1.FeatureGate{Feature: "SIGPlacementDecision", Mode: operatorv1.FeatureGateModeTypeDisable})},
		"the name among the registration gates": {cm: clusterManager(enable)},
		"ClusterManager being deleted":          {cm: deleting},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := EnablesBuiltInPlacementDecisions(tc.cm); got != tc.want {
				t.Errorf("EnablesBuiltInPlacementDecisions = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGuardWithoutTheOperatorAPIIsNeverPassive(t *testing.T) {
	var nilGuard *Guard
	for name, g := range map[string]*Guard{"nil guard": nilGuard, "no reader": {}} {
		if passive, err := g.Passive(context.Background()); passive || err != nil {
			t.Errorf("%s: Passive = %v, %v; want false, nil", name, passive, err)
		}
	}
}

func TestGuardFollowsTheClusterManager(t *testing.T) {
	enabled := clusterManager(operatorv1.FeatureGate{Feature: "ClusterProfile", Mode: operatorv1.FeatureGateModeTypeEnable})
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(enabled).Build()
	g := &Guard{Reader: c}
	if passive, err := g.Passive(context.Background()); !passive || err != nil {
		t.Fatalf("Passive = %v, %v; want true, nil", passive, err)
	}
	enabled.Spec.RegistrationConfiguration.FeatureGates[0].Mode = operatorv1.FeatureGateModeTypeDisable
	if err := c.Update(context.Background(), enabled); err != nil {
		t.Fatal(err)
	}
	if passive, err := g.Passive(context.Background()); passive || err != nil {
		t.Fatalf("Passive = %v, %v; want false, nil", passive, err)
	}
}

// TestGuardReportsEachSwitchOfItsBuiltIn: a Guard follows the one built-in
// writer it is given (another's gate changes nothing) and reports each
// switch once, with that writer's reason and note, on the ClusterManager
// that turns it on, then on every ClusterManager once none does.
func TestGuardReportsEachSwitchOfItsBuiltIn(t *testing.T) {
	writer := BuiltIn{
		Capability: "slices",
		Enables:    func(cm *operatorv1.ClusterManager) bool { return cm.Labels["writer"] == "on" },
		On:         Report{Log: "on", Reason: "WriterOn", Note: "the writer is on"},
		Off:        Report{Log: "off", Reason: "WriterOff", Note: "the writer is off"},
		Action:     "Publish",
	}
	cm := clusterManager(operatorv1.FeatureGate{Feature: "ClusterProfile", Mode: operatorv1.FeatureGateModeTypeEnable})
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(cm).Build()
	recorder := events.NewFakeRecorder(10)
	g := &Guard{Reader: c, Recorder: recorder, BuiltIn: &writer}
	step := func(labels map[string]string) (bool, []string) {
		t.Helper()
		cm.Labels = labels
		if err := c.Update(context.Background(), cm); err != nil {
			t.Fatal(err)
		}
		passive, err := g.Passive(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for len(recorder.Events) > 0 {
			got = append(got, <-recorder.Events)
		}
		return passive, got
	}
	steps := []struct {
		name       string
		labels     map[string]string
		wantOn     bool
		wantEvents []string
	}{
		{name: "the mirror's gate alone", labels: nil},
		{name: "turned on", labels: map[string]string{"writer": "on"}, wantOn: true, wantEvents: []string{"Warning WriterOn the writer is on"}},
		{name: "still on", labels: map[string]string{"writer": "on"}, wantOn: true},
		{name: "turned off", labels: map[string]string{"writer": "off"}, wantEvents: []string{"Normal WriterOff the writer is off"}},
	}
	for _, s := range steps {
		on, got := step(s.labels)
		if on != s.wantOn {
			t.Errorf("%s: Passive = %v, want %v", s.name, on, s.wantOn)
		}
		if diff := cmp.Diff(s.wantEvents, got); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", s.name, diff)
		}
	}
}
