package testing

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// StripStatusListMaps turns the status lists of a ClusterProfile CRD into
// atomic lists, as in copies older than cluster-inventory-api v0.1.2 (the
// one OCM's operator installs): the unit tests' atomic fake and the
// integration suite's atomic API server serve such a CRD.
func StripStatusListMaps(crd *apiextensionsv1.CustomResourceDefinition) {
	for i := range crd.Spec.Versions {
		schema := crd.Spec.Versions[i].Schema
		if schema == nil || schema.OpenAPIV3Schema == nil {
			continue
		}
		status := schema.OpenAPIV3Schema.Properties["status"]
		for name, list := range status.Properties {
			if list.Type == "array" {
				list.XListType, list.XListMapKeys = nil, nil
				status.Properties[name] = list
			}
		}
		schema.OpenAPIV3Schema.Properties["status"] = status
	}
}
