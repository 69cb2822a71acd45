//go:build linux

package ocm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/binaries"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
)

// installOperator installs one of OCM's operators as clusteradm does (init
// for the cluster-manager, join for the klusterlet): its CRD, then its
// namespace, service account, RBAC and Deployment, from the manifests in
// OCM's module at the release the binaries were built from
// (deploy/<name>/config). The Deployment's image is set to the release's
// registration-operator image, which the kubelet maps to the local binary.
func (h *Hub) installOperator(ctx context.Context, cp *controlplane.ControlPlane, name string) error {
	dir, err := h.Modules.File(binaries.OCMModule, filepath.Join("deploy", name, "config"))
	if err != nil {
		return err
	}
	crds, err := filepath.Glob(filepath.Join(dir, "crds", "*.crd.yaml"))
	if err != nil || len(crds) == 0 {
		return fmt.Errorf("no CRD of the %s operator in %s: %v", name, dir, err)
	}
	if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{Paths: crds, ErrorIfPathMissing: true}); err != nil {
		return fmt.Errorf("installing the %s CRD on %s: %w", name, cp.Name, err)
	}
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		return err
	}
	image := h.ocmImage("registration-operator")
	for _, file := range []string{"operator/namespace.yaml", "operator/service_account.yaml", "rbac/cluster_role.yaml", "rbac/cluster_role_binding.yaml", "operator/operator.yaml"} {
		err := applyFile(ctx, c, filepath.Join(dir, file), func(obj *unstructured.Unstructured) error {
			if obj.GetKind() != "Deployment" {
				return nil
			}
			// One replica: the kubelet runs one pod per Deployment.
			if err := unstructured.SetNestedField(obj.Object, int64(1), "spec", "replicas"); err != nil {
				return err
			}
			containers, _, err := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			if err != nil {
				return err
			}
			for _, c := range containers {
				c.(map[string]any)["image"] = image
			}
			return unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers")
		})
		if err != nil {
			return fmt.Errorf("installing the %s operator on %s: %w", name, cp.Name, err)
		}
	}
	return nil
}

// applyFile creates every object of a YAML file (several documents allowed),
// after mutate; objects that exist are left as they are.
func applyFile(ctx context.Context, c client.Client, path string, mutate func(*unstructured.Unstructured) error) error {
	objects, err := ObjectsOfFile(path)
	if err != nil {
		return err
	}
	for _, obj := range objects {
		if err := mutate(obj); err != nil {
			return err
		}
		if err := client.IgnoreAlreadyExists(c.Create(ctx, obj)); err != nil {
			return fmt.Errorf("creating %s %s from %s: %w", obj.GetKind(), obj.GetName(), path, err)
		}
	}
	return nil
}

// ObjectsOfFile decodes the objects of a YAML file (several documents
// allowed, empty ones skipped).
func ObjectsOfFile(path string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objects, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(obj.Object) > 0 {
			objects = append(objects, obj)
		}
	}
}
