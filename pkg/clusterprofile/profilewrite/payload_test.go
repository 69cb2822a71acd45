package profilewrite

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

func TestApplyBodiesCarryOnlyWhatTheWriterOwns(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "c1"}
	cases := map[string]struct {
		build func() ([]byte, error)
		want  string
	}{
		"metadata and spec": {
			build: func() ([]byte, error) {
				u, err := MetaApply{NamespacedName: key, Labels: map[string]string{"a": "1"},
					Spec: &cpv1alpha1.ClusterProfileSpec{DisplayName: "c1", ClusterManager: cpv1alpha1.ClusterManager{Name: "m"}}}.Body()
				if err != nil {
					return nil, err
				}
				return u, nil
			},
			want: `{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ClusterProfile","metadata":{"labels":{"a":"1"},"name":"c1","namespace":"ns"},"spec":{"clusterManager":{"name":"m"},"displayName":"c1"}}`,
		},
		"labels only, no spec": {
			build: func() ([]byte, error) {
				u, err := MetaApply{NamespacedName: key, Labels: map[string]string{"a": "1"}}.Body()
				if err != nil {
					return nil, err
				}
				return u, nil
			},
			want: `{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ClusterProfile","metadata":{"labels":{"a":"1"},"name":"c1","namespace":"ns"}}`,
		},
		"status without lastObservedTime nulls": {
			build: func() ([]byte, error) {
				u, err := StatusApply{NamespacedName: key, Version: "v1",
					Properties: []cpv1alpha1.Property{{Name: "p", Value: "v"}},
					Conditions: []metav1.Condition{{Type: "Joined", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: transition}}}.Body()
				if err != nil {
					return nil, err
				}
				return u, nil
			},
			want: `{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ClusterProfile","metadata":{"name":"c1","namespace":"ns"},"status":{"conditions":[{"lastTransitionTime":"2026-01-02T03:04:05Z","message":"","reason":"R","status":"True","type":"Joined"}],"properties":[{"name":"p","value":"v"}],"version":{"kubernetes":"v1"}}}`,
		},
		"an empty status gives everything up as an empty list-map": {
			build: func() ([]byte, error) {
				u, err := StatusApply{NamespacedName: key}.Body()
				if err != nil {
					return nil, err
				}
				return u, nil
			},
			want: `{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ClusterProfile","metadata":{"name":"c1","namespace":"ns"},"status":{"conditions":[]}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.build()
			if err != nil {
				t.Fatal(err)
			}
			var gotV, wantV any
			if err := json.Unmarshal(got, &gotV); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &wantV); err != nil {
				t.Fatal(err)
			}
			g, _ := json.Marshal(gotV)
			w, _ := json.Marshal(wantV)
			if string(g) != string(w) {
				t.Errorf("body\n got: %s\nwant: %s", g, w)
			}
		})
	}
}
