package multikueue

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const testManager = "open-cluster-management"

func TestDesiredCluster(t *testing.T) {
	cases := map[string]struct {
		served bool
		want   *unstructured.Unstructured
	}{
		"a published profile gets a MultiKueueCluster of its name pointing at it": {
			served: true,
			want: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "kueue.x-k8s.io/v1beta2",
				"kind":       "MultiKueueCluster",
				"metadata": map[string]any{
					"name":   "c1",
					"labels": map[string]any{"clusterprofile.open-cluster-management.io/multikueue": testManager},
				},
				"spec": map[string]any{"clusterSource": map[string]any{"clusterProfileRef": map[string]any{"name": "c1"}}},
			}},
		},
		"a profile that is not published (or gone) gets none": {served: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DesiredCluster("c1", tc.served, testManager)); diff != "" {
				t.Errorf("MultiKueueCluster (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredConfig(t *testing.T) {
	many := make([]string, 0, 22)
	for i := 21; i >= 0; i-- {
		many = append(many, fmt.Sprintf("c%02d", i))
	}
	cases := map[string]struct {
		clusters     []string
		wantClusters []any
		wantLeft     int
	}{
		"sorted":                                {clusters: []string{"c2", "c1"}, wantClusters: []any{"c1", "c2"}},
		"none: no config, the schema wants one": {},
		"more than the schema allows: the first 20": {clusters: many, wantLeft: 2, wantClusters: func() []any {
			out := []any{}
			for i := range 20 {
				out = append(out, fmt.Sprintf("c%02d", i))
			}
			return out
		}()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, left := DesiredConfig("fleet", tc.clusters, testManager)
			var want *unstructured.Unstructured
			if tc.wantClusters != nil {
				want = &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueConfig",
					"metadata": map[string]any{"name": "fleet",
						"labels": map[string]any{"clusterprofile.open-cluster-management.io/multikueue": testManager}},
					"spec": map[string]any{"clusters": tc.wantClusters},
				}}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("MultiKueueConfig (-want +got):\n%s", diff)
			}
			if left != tc.wantLeft {
				t.Errorf("left out %d, want %d", left, tc.wantLeft)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	wanted := DesiredCluster("c1", true, testManager)
	ours := func() *unstructured.Unstructured { return DesiredCluster("c1", true, testManager) }
	otherRef := ours()
	otherRef.Object["spec"] = map[string]any{"clusterSource": map[string]any{"clusterProfileRef": map[string]any{"name": "elsewhere"}}}
	handWritten := ours()
	handWritten.SetLabels(nil)
	otherManager := DesiredCluster("c1", true, "fleet-manager")
	deleting := ours()
	deleting.SetDeletionTimestamp(&metav1.Time{})
	cases := map[string]struct {
		current, desired *unstructured.Unstructured
		want             action
	}{
		"nothing, nothing wanted":                       {want: actionNone},
		"missing: create":                               {desired: wanted, want: actionApply},
		"ours and in line: nothing":                     {current: ours(), desired: wanted, want: actionNone},
		"ours, changed by someone: restore":             {current: otherRef, desired: wanted, want: actionApply},
		"ours, no longer wanted: delete":                {current: ours(), want: actionDelete},
		"ours, being deleted: wait for it to go":        {current: deleting, desired: wanted, want: actionNone},
		"written by hand under the name: clash":         {current: handWritten, desired: wanted, want: actionClash},
		"another manager's: clash":                      {current: otherManager, desired: wanted, want: actionClash},
		"written by hand, not wanted by us: left alone": {current: handWritten, want: actionNone},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := plan(tc.current, tc.desired, testManager); got != tc.want {
				t.Errorf("plan = %s, want %s", got, tc.want)
			}
		})
	}
}
