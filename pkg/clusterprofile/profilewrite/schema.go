package profilewrite

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// statusLists are the status fields several writers share.
var statusLists = []string{"conditions", "properties", "accessProviders"}

// StatusListsAreMaps tells whether the CRD declares every shared status list
// of the served version as a list-map. Copies older than cluster-inventory-api
// v0.1.2 (such as the one OCM's operator installs) do not, and there a
// Server-Side Apply of a list replaces it whole.
func StatusListsAreMaps(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, version := range crd.Spec.Versions {
		if version.Name != cpv1alpha1.GroupVersion.Version {
			continue
		}
		if version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
			return false
		}
		status, ok := version.Schema.OpenAPIV3Schema.Properties["status"]
		if !ok {
			return false
		}
		for _, name := range statusLists {
			list, ok := status.Properties[name]
			if ok && (list.XListType == nil || *list.XListType != "map") {
				return false
			}
		}
		return true
	}
	return false
}

// TrimSchema keeps, of a ClusterProfile CRD's schemas, only what
// StatusListsAreMaps reads: each version's name and, under status, the list
// type of the shared lists. The whole schema is tens of kilobytes, and the
// answer is read before every status write, so the cache holds this instead.
func TrimSchema(crd *apiextensionsv1.CustomResourceDefinition) {
	for i, version := range crd.Spec.Versions {
		trimmed := apiextensionsv1.CustomResourceDefinitionVersion{
			Name: version.Name, Served: version.Served, Storage: version.Storage,
		}
		if version.Schema != nil && version.Schema.OpenAPIV3Schema != nil {
			trimmed.Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: trimStatus(*version.Schema.OpenAPIV3Schema)}
		}
		crd.Spec.Versions[i] = trimmed
	}
}

func trimStatus(root apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	out := &apiextensionsv1.JSONSchemaProps{Type: root.Type}
	status, ok := root.Properties["status"]
	if !ok {
		return out
	}
	lists := map[string]apiextensionsv1.JSONSchemaProps{}
	for _, name := range statusLists {
		if list, ok := status.Properties[name]; ok {
			lists[name] = apiextensionsv1.JSONSchemaProps{Type: list.Type, XListType: list.XListType, XListMapKeys: list.XListMapKeys}
		}
	}
	out.Properties = map[string]apiextensionsv1.JSONSchemaProps{"status": {Type: status.Type, Properties: lists}}
	return out
}
