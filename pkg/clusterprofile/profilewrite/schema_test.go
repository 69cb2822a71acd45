package profilewrite

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

func crdWithLists(version string, listType *string) *apiextensionsv1.CustomResourceDefinition {
	list := apiextensionsv1.JSONSchemaProps{Type: "array", XListType: listType}
	status := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"conditions": list, "properties": list, "accessProviders": list,
		"version": {Type: "object"},
	}}
	return &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: version, Schema: &apiextensionsv1.CustomResourceValidation{
			OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"status": status}},
		}}},
	}}
}

func TestStatusListsAreMaps(t *testing.T) {
	cases := map[string]struct {
		crd  *apiextensionsv1.CustomResourceDefinition
		want bool
	}{
		"list-maps":                {crd: crdWithLists("v1alpha1", ptr.To("map")), want: true},
		"atomic lists":             {crd: crdWithLists("v1alpha1", nil), want: false},
		"explicitly atomic":        {crd: crdWithLists("v1alpha1", ptr.To("atomic")), want: false},
		"served version not there": {crd: crdWithLists("v1beta1", ptr.To("map")), want: false},
		"no schema":                {crd: &apiextensionsv1.CustomResourceDefinition{}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := StatusListsAreMaps(tc.crd); got != tc.want {
				t.Errorf("StatusListsAreMaps = %v, want %v", got, tc.want)
			}
		})
	}
}
