package hubmanager

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

func conditionsList(description string) apiextensionsv1.JSONSchemaProps {
	return apiextensionsv1.JSONSchemaProps{Type: "array", Description: description, XListType: ptr.To("map"), XListMapKeys: []string{"type"}}
}

func TestTrimObjects(t *testing.T) {
	fields := func(manager string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply}
	}
	meta := func(managers ...string) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: "c1", Annotations: map[string]string{
			lastAppliedAnnotation: `{"a whole":"object"}`, "kept": "yes"}}
		for _, manager := range managers {
			m.ManagedFields = append(m.ManagedFields, fields(manager))
		}
		return m
	}
	kept := metav1.ObjectMeta{Name: "c1", Annotations: map[string]string{"kept": "yes"}}
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	cases := map[string]struct{ in, want any }{
		"a profile keeps this project's managedFields only": {
			in: &cpv1alpha1.ClusterProfile{ObjectMeta: meta("clusterprofile-mirror", "kubectl")},
			want: &cpv1alpha1.ClusterProfile{ObjectMeta: func() metav1.ObjectMeta {
				m := kept
				m.ManagedFields = []metav1.ManagedFieldsEntry{fields("clusterprofile-mirror")}
				return m
			}()},
		},
		"a cluster loses managedFields, capacity and allocatable, keeps the rest": {
			in: &clusterv1.ManagedCluster{ObjectMeta: meta("registration-controller"), Status: clusterv1.ManagedClusterStatus{
				Capacity: clusterv1.ResourceList{"cpu": resource.MustParse("4")}, Allocatable: clusterv1.ResourceList{"cpu": resource.MustParse("4")},
				Version: clusterv1.ManagedClusterVersion{Kubernetes: "v1.35.4"}}},
			want: &clusterv1.ManagedCluster{ObjectMeta: kept, Status: clusterv1.ManagedClusterStatus{
				Version: clusterv1.ManagedClusterVersion{Kubernetes: "v1.35.4"}}},
		},
		"the ClusterProfile CRD keeps only its status list types": {
			in: &apiextensionsv1.CustomResourceDefinition{ObjectMeta: meta("kube-apiserver"), Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Schema: &apiextensionsv1.CustomResourceValidation{
					OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Description: "dropped", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", Description: "dropped"},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"conditions": conditionsList("dropped")}},
					}},
				}}}}},
			want: &apiextensionsv1.CustomResourceDefinition{ObjectMeta: kept, Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Schema: &apiextensionsv1.CustomResourceValidation{
					OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"conditions": conditionsList("")}},
					}},
				}}}}},
		},
		"any other object loses managedFields and the last-applied annotation": {
			in:   &corev1.Node{ObjectMeta: meta("kubelet"), Status: corev1.NodeStatus{Capacity: cpu}},
			want: &corev1.Node{ObjectMeta: kept, Status: corev1.NodeStatus{Capacity: cpu}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := trimObjects(clusterprofile.NewShared())(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("trimmed (-want +got):\n%s", diff)
			}
		})
	}
}
