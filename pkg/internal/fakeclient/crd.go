package fakeclient

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// chartCRDFile is the ClusterProfile CRD the chart installs, a copy of
// cluster-inventory-api's (make chart-crd).
const chartCRDFile = "charts/clusterprofile-manager/files/multicluster.x-k8s.io_clusterprofiles.yaml"

// ChartCRD returns the ClusterProfile CRD the chart ships, whose status
// lists are list-maps (cluster-inventory-api v0.1.2 and later): what the
// fake of New serves.
func ChartCRD() *apiextensionsv1.CustomResourceDefinition {
	return loaded().listMaps.crd.DeepCopy()
}

// AtomicCRD returns ChartCRD with its status lists atomic, as in copies
// older than cluster-inventory-api v0.1.2 (OCM's operator installs one):
// what the fake of NewAtomic serves.
func AtomicCRD() *apiextensionsv1.CustomResourceDefinition {
	return loaded().atomic.crd.DeepCopy()
}

// servedCRD is a ClusterProfile CRD and the type converter its API server
// would apply with.
type servedCRD struct {
	crd       *apiextensionsv1.CustomResourceDefinition
	converter managedfields.TypeConverter
}

type crds struct{ listMaps, atomic servedCRD }

// loaded reads the chart's CRD once for the test binary; both converters
// are safe for concurrent use.
var loaded = sync.OnceValue(func() crds {
	listMaps, err := readChartCRD()
	if err != nil {
		panic(err) // a broken checkout
	}
	atomic := listMaps.DeepCopy()
	utiltesting.StripStatusListMaps(atomic)
	return crds{listMaps: mustServe(listMaps), atomic: mustServe(atomic)}
})

func mustServe(crd *apiextensionsv1.CustomResourceDefinition) servedCRD {
	converter, err := typeConverter(crd)
	if err != nil {
		panic(fmt.Errorf("building the type converter of CRD %s: %w", crd.Name, err))
	}
	return servedCRD{crd: crd, converter: converter}
}

// readChartCRD reads chartCRDFile from the repository this file is in.
func readChartCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "..", filepath.FromSlash(chartCRDFile))
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return crd, nil
}

// typeConverter is the type converter the API server's field manager
// uses for crd's custom resources, built as its CRD handler builds it with
// k8s.io/apiextensions-apiserver's builder.BuildOpenAPIV3 (whose package
// would pull CEL and more into the module graph), less what this CRD does
// not use (embedded resources): each served version's structural schema as
// OpenAPI, with metadata the ObjectMeta of the API machinery's generated
// definitions, under the version's group-version-kind.
func typeConverter(crd *apiextensionsv1.CustomResourceDefinition) (managedfields.TypeConverter, error) {
	const prefix = "#/components/schemas/"
	ref := func(name string) spec.Ref { return spec.MustCreateRef(prefix + name) }
	models := map[string]*spec.Schema{}
	for name, def := range generatedopenapi.GetOpenAPIDefinitions(ref) {
		models[name] = &def.Schema
	}
	for _, version := range crd.Spec.Versions {
		if !version.Served || version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(version.Schema, internal, nil); err != nil {
			return nil, err
		}
		structural, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if err != nil {
			return nil, err
		}
		if errs := structuralschema.ValidateStructural(nil, structural); len(errs) > 0 {
			return nil, errs.ToAggregate()
		}
		root := structural.Unfold().ToKubeOpenAPI()
		root.SetProperty("metadata", *spec.RefSchema(prefix + metav1.ObjectMeta{}.OpenAPIModelName()))
		root.AddExtension("x-kubernetes-group-version-kind", []any{
			map[string]any{"group": crd.Spec.Group, "version": version.Name, "kind": crd.Spec.Names.Kind},
		})
		models[modelName(crd.Spec.Group, version.Name, crd.Spec.Names.Kind)] = root
	}
	return managedfields.NewTypeConverter(models, crd.Spec.PreserveUnknownFields)
}

// modelName names a custom resource's model as the API server's OpenAPI
// does: io.x-k8s.multicluster.v1alpha1.ClusterProfile.
func modelName(group, version, kind string) string {
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + version + "." + kind
}
