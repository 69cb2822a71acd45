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
