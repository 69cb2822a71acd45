package profilewrite

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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

// The cache keeps the trimmed CRD; it must give the same answer as the
// whole one, for list-map and atomic CRDs alike.
func TestTrimSchemaKeepsOnlyTheStatusListTypes(t *testing.T) {
	crd := crdWithLists("v1alpha1", ptr.To("map"))
	withKeys := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	conditions := withKeys.Properties["conditions"]
	conditions.XListMapKeys = []string{"type"}
	conditions.Description = "long text the cache does not need"
	conditions.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}
	withKeys.Properties["conditions"] = conditions
	crd.Spec.Versions[0].Served, crd.Spec.Versions[0].Storage = true, true
	crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1beta1"})

	TrimSchema(crd)

	list := func(keys ...string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "array", XListType: ptr.To("map"), XListMapKeys: keys}
	}
	want := []apiextensionsv1.CustomResourceDefinitionVersion{
		{Name: "v1alpha1", Served: true, Storage: true, Schema: &apiextensionsv1.CustomResourceValidation{
			OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"conditions": list("type"), "properties": list(), "accessProviders": list(),
				}},
			}},
		}},
		{Name: "v1beta1"},
	}
	if diff := cmp.Diff(want, crd.Spec.Versions); diff != "" {
		t.Errorf("trimmed versions (-want +got):\n%s", diff)
	}
	for name, listType := range map[string]*string{"list-maps": ptr.To("map"), "atomic": nil} {
		whole := crdWithLists("v1alpha1", listType)
		trimmed := whole.DeepCopy()
		TrimSchema(trimmed)
		if StatusListsAreMaps(trimmed) != StatusListsAreMaps(whole) {
			t.Errorf("%s: StatusListsAreMaps differs after trimming", name)
		}
	}
}
