package mirror

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

const testManager = "open-cluster-management"

var testStatus = Status{
	Version:    "v1.31.0",
	Properties: []cpv1alpha1.Property{{Name: "region", Value: "eu"}},
	Conditions: []metav1.Condition{{Type: "Joined", Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined",
		LastTransitionTime: utiltesting.ConditionTime}},
}

// mirrored builds the profile exactly as the mirror would have written it,
// managedFields included, in namespace ns for set.
func mirrored(ns, set string, status Status) *cpv1alpha1.ClusterProfile {
	profile := utiltesting.MakeClusterProfile(ns, "c1", testManager).Obj()
	profile.Labels = profileMeta(types.NamespacedName{Namespace: ns, Name: "c1"}, set, testManager).Labels
	profile.Status.Version.Kubernetes = status.Version
	profile.Status.Properties = append([]cpv1alpha1.Property(nil), status.Properties...)
	profile.Status.Conditions = append([]metav1.Condition(nil), status.Conditions...)
	labelFields := []string{}
	for k := range profile.Labels {
		labelFields = append(labelFields, fmt.Sprintf("%q:{}", "f:"+k))
	}
	own(profile, "", `{"f:metadata":{"f:labels":{`+strings.Join(labelFields, ",")+`}},"f:spec":{"f:displayName":{},"f:clusterManager":{"f:name":{}}}}`)
	statusFields := []string{}
	if status.Version != "" {
		statusFields = append(statusFields, `"f:version":{"f:kubernetes":{}}`)
	}
	if len(status.Conditions) > 0 {
		keys := []string{}
		for _, c := range status.Conditions {
			keys = append(keys, fmt.Sprintf(`%q:{".":{},"f:type":{},"f:status":{}}`, `k:{"type":"`+c.Type+`"}`))
		}
		statusFields = append(statusFields, `"f:conditions":{`+strings.Join(keys, ",")+`}`)
	}
	if len(status.Properties) > 0 {
		keys := []string{}
		for _, prop := range status.Properties {
			keys = append(keys, fmt.Sprintf(`%q:{".":{},"f:name":{},"f:value":{}}`, `k:{"name":"`+prop.Name+`"}`))
		}
		statusFields = append(statusFields, `"f:properties":{`+strings.Join(keys, ",")+`}`)
	}
	if len(statusFields) > 0 {
		own(profile, "status", `{"f:status":{`+strings.Join(statusFields, ",")+`}}`)
	}
	return profile
}

func own(p *cpv1alpha1.ClusterProfile, subresource, fields string) {
	if !json.Valid([]byte(fields)) {
		panic("invalid fields JSON: " + fields)
	}
	p.ManagedFields = append(p.ManagedFields, metav1.ManagedFieldsEntry{
		Manager: clusterprofile.MirrorFieldManager, Operation: metav1.ManagedFieldsOperationApply, Subresource: subresource,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)},
	})
}

// planView reduces steps to what a reader checks: per namespace, which writes.
func planView(steps []step) map[string]string {
	out := map[string]string{}
	for _, s := range steps {
		var parts []string
		switch {
		case s.clashWith != "":
			parts = append(parts, "clash:"+s.clashWith)
		case s.delete:
			parts = append(parts, "delete")
		case s.current == nil:
			parts = append(parts, "create")
		}
		if s.write != nil && s.write.Status != nil {
			if s.write.Status.Merged != nil {
				parts = append(parts, "merge-status")
			} else {
				parts = append(parts, "status")
			}
		}
		// An existing profile's status is written before its metadata.
		if s.current != nil && s.write != nil && s.write.Meta != nil {
			parts = append(parts, "meta")
		}
		out[s.key.Namespace] = strings.Join(parts, "+")
	}
	return out
}

func TestPlan(t *testing.T) {
	now := metav1.Now()
	deleting := mirrored("a", "dev", testStatus)
	deleting.DeletionTimestamp = &now
	relabelled := mirrored("a", "dev", testStatus)
	relabelled.Labels[clusterprofile.LabelClusterSet] = "old"
	otherVersion := mirrored("a", "dev", testStatus)
	otherVersion.Status.Version.Kubernetes = "v1.30.0"
	notOwned := mirrored("a", "dev", testStatus)
	notOwned.ManagedFields = notOwned.ManagedFields[:1] // the same values, written by someone else
	extraOwned := mirrored("a", "dev", Status{Version: testStatus.Version, Conditions: testStatus.Conditions,
		Properties: append([]cpv1alpha1.Property{{Name: "gone", Value: "x"}}, testStatus.Properties...)})

	cases := map[string]struct {
		desired    map[string]string
		status     Status
		existing   []*cpv1alpha1.ClusterProfile
		namespaces map[string]membership.NamespaceState
		want       map[string]string
	}{
		"creates with one apply each for metadata and status": {
			desired: map[string]string{"a": "dev", "b": "dev"}, status: testStatus,
			want: map[string]string{"a": "create+status", "b": "create+status"},
		},
		"creates without a status write when there is no status": {
			desired: map[string]string{"a": "dev"},
			want:    map[string]string{"a": "create"},
		},
		"nothing to do when up to date": {
			desired: map[string]string{"a": "dev"}, status: testStatus,
			existing: []*cpv1alpha1.ClusterProfile{mirrored("a", "dev", testStatus)},
			want:     map[string]string{},
		},
		"label drift is a metadata apply only": {
			desired: map[string]string{"a": "dev"}, status: testStatus,
			existing: []*cpv1alpha1.ClusterProfile{relabelled},
			want:     map[string]string{"a": "meta"},
		},
		"status drift is a status apply only": {
			desired: map[string]string{"a": "dev"}, status: testStatus,
			existing: []*cpv1alpha1.ClusterProfile{otherVersion},
			want:     map[string]string{"a": "status"},
		},
		"equal values the mirror does not own are applied, to own them": {
			desired: map[string]string{"a": "dev"}, status: testStatus,
			existing: []*cpv1alpha1.ClusterProfile{notOwned},
			want:     map[string]string{"a": "status"},
		},
		"an owned entry that is no longer wanted is applied away": {
			desired: map[string]string{"a": "dev"}, status: testStatus,
			existing: []*cpv1alpha1.ClusterProfile{extraOwned},
			want:     map[string]string{"a": "status"},
		},
		"another manager's profile under the name is a clash, never a write": {
			desired: map[string]string{"a": "dev"}, status: testStatus,
			existing: []*cpv1alpha1.ClusterProfile{utiltesting.MakeClusterProfile("a", "c1", "fleet").Obj()},
			want:     map[string]string{"a": "clash:fleet"},
		},
		"unwanted profiles are deleted unless foreign, terminating or already deleting": {
			desired: map[string]string{}, status: testStatus,
			existing: []*cpv1alpha1.ClusterProfile{
				mirrored("gone", "dev", testStatus),
				mirrored("terminating", "dev", testStatus),
				utiltesting.MakeClusterProfile("foreign", "c1", "fleet").Obj(),
				deleting,
			},
			namespaces: map[string]membership.NamespaceState{"gone": membership.NamespaceActive, "terminating": membership.NamespaceTerminating, "foreign": membership.NamespaceActive},
			want:       map[string]string{"gone": "delete"},
		},
		"a wanted profile that is being deleted waits for its deletion": {
			desired: map[string]string{"a": "dev"}, status: testStatus,
			existing: []*cpv1alpha1.ClusterProfile{deleting},
			want:     map[string]string{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			planned, err := plan(planInput{
				clusterName: "c1", managerName: testManager,
				desired:  Desired{SetByNamespace: tc.desired, Status: tc.status},
				existing: tc.existing, namespaces: tc.namespaces, listMaps: true,
			})
			if err != nil {
				t.Fatal(err)
			}
			steps := planned.steps
			if diff := cmp.Diff(tc.want, planView(steps)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanOnAtomicStatusLists(t *testing.T) {
	thirdParty := metav1.Condition{Type: "ThirdPartyReady", Status: metav1.ConditionTrue, Reason: "Checked", LastTransitionTime: utiltesting.ConditionTime}
	withOthers := func(ownedProperties string, properties ...cpv1alpha1.Property) *cpv1alpha1.ClusterProfile {
		p := mirrored("a", "dev", testStatus)
		p.ManagedFields = nil
		p.Annotations = map[string]string{AnnotationMirroredProperties: ownedProperties}
		p.Status.Properties = properties
		p.Status.Conditions = append(p.Status.Conditions, thirdParty)
		return p
	}
	region := cpv1alpha1.Property{Name: "region", Value: "eu"}
	costCenter := cpv1alpha1.Property{Name: "cost-center", Value: "42"}

	cases := map[string]struct {
		existing       *cpv1alpha1.ClusterProfile
		wantSteps      map[string]string
		wantProperties []cpv1alpha1.Property
		wantConditions []string
	}{
		"create writes the merged status": {
			wantSteps:      map[string]string{"a": "create+merge-status"},
			wantProperties: []cpv1alpha1.Property{region},
			wantConditions: []string{"Joined"},
		},
		"up to date, with another writer's entries": {
			existing:  withOthers(`["region"]`, region, costCenter),
			wantSteps: map[string]string{"a": "meta"}, // only the annotation is not owned yet
		},
		"a property the mirror wrote before is dropped, another writer's is kept": {
			existing:       withOthers(`["old","region"]`, costCenter, cpv1alpha1.Property{Name: "old", Value: "x"}, region),
			wantSteps:      map[string]string{"a": "merge-status+meta"},
			wantProperties: []cpv1alpha1.Property{costCenter, region},
			wantConditions: []string{"Joined", "ThirdPartyReady"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var existing []*cpv1alpha1.ClusterProfile
			if tc.existing != nil {
				existing = append(existing, tc.existing)
			}
			planned, err := plan(planInput{
				clusterName: "c1", managerName: testManager,
				desired:  Desired{SetByNamespace: map[string]string{"a": "dev"}, Status: testStatus},
				existing: existing, listMaps: false,
			})
			if err != nil {
				t.Fatal(err)
			}
			steps := planned.steps
			if diff := cmp.Diff(tc.wantSteps, planView(steps)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if tc.wantProperties == nil {
				return
			}
			merged := steps[0].write.Status.Merged
			if diff := cmp.Diff(tc.wantProperties, merged.Properties); diff != "" {
				t.Errorf("merged properties (-want +got):\n%s", diff)
			}
			var types []string
			for _, c := range merged.Conditions {
				types = append(types, c.Type)
			}
			if diff := cmp.Diff(tc.wantConditions, types); diff != "" {
				t.Errorf("merged condition types (-want +got):\n%s", diff)
			}
			if meta := steps[0].write.Meta; meta == nil || meta.Annotations[AnnotationMirroredProperties] != `["region"]` {
				t.Errorf("the metadata must record the mirrored property names, got %+v", meta)
			}
		})
	}
}

// TestPlanHoldsChangedFactsWithinTheBudget: properties made of claims go out
// at most once per minimum interval, and only when significant or at the
// refresh; anything else the mirror writes goes out at once and takes the
// changed facts with it.
func TestPlanHoldsChangedFactsWithinTheBudget(t *testing.T) {
	now := utiltesting.ConditionTime.Add(24 * time.Hour)
	region := cpv1alpha1.Property{Name: "region", Value: "eu"}
	nodes := func(n string) cpv1alpha1.Property { return cpv1alpha1.Property{Name: "nodes", Value: n} }
	statusWith := func(conditionStatus metav1.ConditionStatus, properties ...cpv1alpha1.Property) Status {
		s := testStatus
		s.Conditions = []metav1.Condition{{Type: "Joined", Status: conditionStatus, Reason: "ManagedClusterJoined",
			LastTransitionTime: utiltesting.ConditionTime}}
		s.Properties = properties
		return s
	}
	published := mirrored("a", "dev", statusWith(metav1.ConditionTrue, nodes("10"), region))

	settling := damping.Default()
	settling.Settle = damping.DefaultSettle
	cases := map[string]struct {
		rule          damping.Rule
		publications  []time.Duration // ago, one each; none: never
		created       bool            // no profile yet
		desired       Status
		wantSteps     map[string]string
		wantFacts     []cpv1alpha1.Property // sent, when a step is planned
		wantPublishes bool
		wantCarries   bool
		wantHeldFor   time.Duration
	}{
		"noise inside the interval waits for the refresh": {
			rule: damping.Default(), publications: []time.Duration{10 * time.Second}, desired: statusWith(metav1.ConditionTrue, nodes("11"), region),
			wantSteps: map[string]string{}, wantHeldFor: time.Hour - 10*time.Second,
		},
		"a significant change right after a quiet spell's publication goes out on the slack": {
			rule: damping.Default(), publications: []time.Duration{10 * time.Second}, desired: statusWith(metav1.ConditionTrue, nodes("20"), region),
			wantSteps: map[string]string{"a": "status"}, wantFacts: []cpv1alpha1.Property{nodes("20"), region}, wantPublishes: true,
		},
		"a significant change with the slack spent waits for the interval": {
			rule: damping.Default(), publications: []time.Duration{11 * time.Second, 10 * time.Second}, desired: statusWith(metav1.ConditionTrue, nodes("20"), region),
			wantSteps: map[string]string{}, wantHeldFor: 19 * time.Second,
		},
		"a new fact with the slack spent waits for the interval": {
			rule: damping.Default(), publications: []time.Duration{11 * time.Second, 10 * time.Second},
			desired:   statusWith(metav1.ConditionTrue, nodes("10"), region, cpv1alpha1.Property{Name: "gpus", Value: "8"}),
			wantSteps: map[string]string{}, wantHeldFor: 19 * time.Second,
		},
		"a significant change after the interval goes out": {
			rule: damping.Default(), publications: []time.Duration{6 * time.Minute}, desired: statusWith(metav1.ConditionTrue, nodes("20"), region),
			wantSteps: map[string]string{"a": "status"}, wantFacts: []cpv1alpha1.Property{nodes("20"), region}, wantPublishes: true,
		},
		"a condition change goes out at once and takes held facts along, spending none of the budget": {
			rule: damping.Default(), publications: []time.Duration{time.Minute}, desired: statusWith(metav1.ConditionFalse, nodes("11"), region),
			wantSteps: map[string]string{"a": "status"}, wantFacts: []cpv1alpha1.Property{nodes("11"), region}, wantCarries: true,
		},
		"a significant change with a condition change spends none of the budget": {
			rule: damping.Default(), desired: statusWith(metav1.ConditionFalse, nodes("20"), region),
			wantSteps: map[string]string{"a": "status"}, wantFacts: []cpv1alpha1.Property{nodes("20"), region}, wantCarries: true,
		},
		"a withdrawn fact goes at once": {
			rule: damping.Default(), publications: []time.Duration{time.Minute}, desired: statusWith(metav1.ConditionTrue, nodes("10")),
			wantSteps: map[string]string{"a": "status"}, wantFacts: []cpv1alpha1.Property{nodes("10")},
		},
		"the first change since the start goes out at once": {
			rule: damping.Default(), desired: statusWith(metav1.ConditionTrue, nodes("11"), region),
			wantSteps: map[string]string{"a": "status"}, wantFacts: []cpv1alpha1.Property{nodes("11"), region}, wantPublishes: true,
		},
		"a created profile carries the facts without spending the budget": {
			rule: damping.Default(), publications: []time.Duration{11 * time.Second, 10 * time.Second}, created: true,
			desired:   statusWith(metav1.ConditionTrue, nodes("20"), region),
			wantSteps: map[string]string{"a": "create+status"}, wantFacts: []cpv1alpha1.Property{nodes("20"), region},
		},
		"a change first seen waits to settle, so the rest of its report comes along": {
			rule: settling, desired: statusWith(metav1.ConditionTrue, nodes("20"), region),
			wantSteps: map[string]string{}, wantHeldFor: damping.DefaultSettle,
		},
		"a change first seen rides along at once with a condition change": {
			rule: settling, desired: statusWith(metav1.ConditionFalse, nodes("20"), region),
			wantSteps: map[string]string{"a": "status"}, wantFacts: []cpv1alpha1.Property{nodes("20"), region}, wantCarries: true,
		},
		"without damping every change goes out": {
			rule: damping.Off(), publications: []time.Duration{time.Second}, desired: statusWith(metav1.ConditionTrue, nodes("11"), region),
			wantSteps: map[string]string{"a": "status"}, wantFacts: []cpv1alpha1.Property{nodes("11"), region}, wantPublishes: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			budget := factsBudget{rule: tc.rule, now: now}
			for _, ago := range tc.publications {
				budget.budget = tc.rule.Spend(budget.budget, now.Add(-ago))
			}
			existing := []*cpv1alpha1.ClusterProfile{published.DeepCopy()}
			if tc.created {
				existing = nil
			}
			planned, err := plan(planInput{
				clusterName: "c1", managerName: testManager, listMaps: true, facts: budget,
				desired:  Desired{SetByNamespace: map[string]string{"a": "dev"}, Status: tc.desired},
				existing: existing,
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantSteps, planView(planned.steps)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantHeldFor, planned.factsHeldFor); diff != "" {
				t.Errorf("held for (-want +got):\n%s", diff)
			}
			if len(planned.steps) == 0 {
				return
			}
			s := planned.steps[0]
			if diff := cmp.Diff(tc.wantFacts, s.write.Status.Apply.Properties); diff != "" {
				t.Errorf("properties sent (-want +got):\n%s", diff)
			}
			if s.publishesFacts != tc.wantPublishes || s.carriesFacts != tc.wantCarries {
				t.Errorf("publishesFacts, carriesFacts = %v, %v, want %v, %v", s.publishesFacts, s.carriesFacts, tc.wantPublishes, tc.wantCarries)
			}
		})
	}
}
