package chart_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestHelmInstallUpgradesAnOlderCRD runs Helm itself (install, uninstall)
// against the API server, over a ClusterProfile CRD as OCM's operator
// installs it: older (atomic status lists) and without Helm's ownership
// metadata. Each way the chart's README gives to take it over must end with
// the list-map CRD, existing profiles intact, and the CRD kept on uninstall.
// Every gate is on, so the release also installs the PlacementDecision CRD,
// which it keeps on uninstall too; each case starts without it, so that its
// release installs it afresh, and the test leaves it as it found it.
func TestHelmInstallUpgradesAnOlderCRD(t *testing.T) {
	cases := map[string]struct {
		// namespace is the release namespace; the release is "helm".
		namespace string
		// prepare runs before `helm install`, as the user would.
		prepare       func(ctx context.Context, t *testing.T, rel chartrender.Release)
		takeOwnership bool
		values        map[string]any
		wantErr       string
		// releaseOwnsCRD: the CRD is part of the release (installCRD).
		releaseOwnsCRD bool
	}{
		"plain install is refused": {
			namespace: "chart-helm-refused",
			wantErr:   `CustomResourceDefinition "clusterprofiles.multicluster.x-k8s.io" in namespace "" exists and cannot be imported into the current release: invalid ownership metadata`,
		},
		"kubectl annotate and label the CRD first": {
			namespace: "chart-helm-annotated",
			prepare: func(ctx context.Context, t *testing.T, rel chartrender.Release) {
				patch := `{"metadata":{"labels":{"app.kubernetes.io/managed-by":"Helm"},` +
					`"annotations":{"meta.helm.sh/release-name":"` + rel.Name + `","meta.helm.sh/release-namespace":"` + rel.Namespace + `"}}}`
				crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: profileCRD}}
				if err := env.Client.Patch(ctx, crd, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
					t.Fatal(err)
				}
			},
			releaseOwnsCRD: true,
		},
		"helm install --take-ownership": {
			namespace:      "chart-helm-take-ownership",
			takeOwnership:  true,
			releaseOwnsCRD: true,
		},
		"kubectl apply --server-side the CRD, then installCRD=false": {
			namespace: "chart-helm-applied",
			prepare: func(ctx context.Context, t *testing.T, _ chartrender.Release) {
				data, err := os.ReadFile(filepath.Join(chartrender.ChartDir(chartName), "files", "multicluster.x-k8s.io_clusterprofiles.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				body, err := yaml.YAMLToJSON(data)
				if err != nil {
					t.Fatal(err)
				}
				crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: profileCRD}}
				apply := client.RawPatch(types.ApplyPatchType, body)
				if err := env.Client.Patch(ctx, crd, apply, client.FieldOwner("kubectl"), client.ForceOwnership); err != nil {
					t.Fatal(err)
				}
			},
			values: map[string]any{"installCRD": false},
		},
	}
	// Leave the chart's CRD behind for the other tests, whichever case ran last.
	decisionsCRDWasThere := crdExists(framework.ContextFor(t), t, placementDecisionCRD)
	t.Cleanup(func() {
		crd := find(render(t, defaultRelease, nil), "CustomResourceDefinition", profileCRD)
		createOrReplace(context.Background(), t, env.Client, crd)
		if decisionsCRDWasThere {
			crd := find(render(t, defaultRelease, gates{placementDecision: true}.values(false)), "CustomResourceDefinition", placementDecisionCRD)
			createOrReplace(context.Background(), t, env.Client, crd)
			waitForEstablished(context.Background(), t, placementDecisionCRD)
		} else {
			removeCRD(context.Background(), t, placementDecisionCRD)
		}
	})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := framework.ContextFor(t)
			rel := chartrender.Release{Name: "helm", Namespace: tc.namespace}
			framework.CreateNamespace(ctx, t, env.Client, rel.Namespace)
			installOlderCRD(ctx, t)
			removeCRD(ctx, t, placementDecisionCRD)
			survivor := utiltesting.MakeClusterProfile(rel.Namespace, "survivor", "someone-else").Obj()
			if err := env.Client.Create(ctx, survivor); err != nil {
				t.Fatal(err)
			}
			if tc.prepare != nil {
				tc.prepare(ctx, t, rel)
			}

			cfg := helmConfiguration(t, rel.Namespace)
			install := action.NewInstall(cfg)
			install.ReleaseName, install.Namespace = rel.Name, rel.Namespace
			install.TakeOwnership = tc.takeOwnership
			values := allOn().values(false)
			for k, v := range tc.values {
				values[k] = v
			}
			_, err := install.RunWithContext(ctx, loadChart(t), values)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("helm install: got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("helm install: %v", err)
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: profileCRD}, crd); err != nil {
				t.Fatal(err)
			}
			if !profilewrite.StatusListsAreMaps(crd) {
				t.Error("after helm install the CRD still has atomic status lists")
			}
			if got := crd.Annotations["meta.helm.sh/release-name"] == rel.Name; got != tc.releaseOwnsCRD {
				t.Errorf("the release owns the CRD: %v, want %v (annotations %v)", got, tc.releaseOwnsCRD, crd.Annotations)
			}
			decisions := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: placementDecisionCRD}, decisions); err != nil {
				t.Fatalf("helm install with the placement decisions gate on: %v", err)
			}
			if decisions.Annotations["meta.helm.sh/release-name"] != rel.Name || decisions.Annotations["helm.sh/resource-policy"] != "keep" {
				t.Errorf("the PlacementDecision CRD is not the release's, kept: annotations %v", decisions.Annotations)
			}

			uninstall := action.NewUninstall(cfg)
			if _, err := uninstall.Run(rel.Name); err != nil {
				t.Fatalf("helm uninstall: %v", err)
			}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: profileCRD}, crd); err != nil {
				t.Errorf("the CRD did not survive helm uninstall: %v", err)
			}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: placementDecisionCRD}, decisions); err != nil {
				t.Errorf("the PlacementDecision CRD did not survive helm uninstall: %v", err)
			}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(survivor), survivor); err != nil {
				t.Errorf("profile %s/%s did not survive: %v", survivor.Namespace, survivor.Name, err)
			}
			deployment := &unstructured.Unstructured{}
			deployment.SetAPIVersion("apps/v1")
			deployment.SetKind("Deployment")
			err = env.Client.Get(ctx, types.NamespacedName{Namespace: rel.Namespace, Name: "helm-clusterprofile-manager"}, deployment)
			if !apierrors.IsNotFound(err) {
				t.Errorf("helm uninstall left the Deployment (%v)", err)
			}
		})
	}
}

// installOlderCRD replaces the installed ClusterProfile CRD with the copy an
// older installer (OCM's operator) leaves: atomic status lists, no Helm
// labels or annotations.
func installOlderCRD(ctx context.Context, t *testing.T) {
	t.Helper()
	crds, err := framework.CRDs(framework.Options{AtomicClusterProfileCRD: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, older := range crds {
		if older.Name != profileCRD {
			continue
		}
		current := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, types.NamespacedName{Name: profileCRD}, current); err != nil {
			t.Fatal(err)
		}
		older.ResourceVersion = current.ResourceVersion
		older.Labels, older.Annotations = nil, map[string]string{"operator.open-cluster-management.io/version": "1.2.0"}
		if err := env.Client.Update(ctx, older); err != nil {
			t.Fatal(err)
		}
		if profilewrite.StatusListsAreMaps(older) {
			t.Fatal("the older CRD has list-map status lists")
		}
		return
	}
	t.Fatalf("no %s among the suite's CRDs", profileCRD)
}

// crdExists tells whether the CRD of that name is installed.
func crdExists(ctx context.Context, t testing.TB, name string) bool {
	t.Helper()
	err := env.Client.Get(ctx, types.NamespacedName{Name: name}, &apiextensionsv1.CustomResourceDefinition{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// waitForEstablished waits until the CRD of that name is established (its
// API served).
func waitForEstablished(ctx context.Context, t testing.TB, name string) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	for deadline := time.Now().Add(framework.Timeout); ; time.Sleep(framework.Interval) {
		if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, crd); err == nil {
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s is not established: %+v", name, crd.Status.Conditions)
		}
	}
}

// removeCRD deletes the CRD of that name, if there, and waits until it is
// gone.
func removeCRD(ctx context.Context, t testing.TB, name string) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Delete(ctx, crd); client.IgnoreNotFound(err) != nil {
		t.Fatalf("deleting CRD %s: %v", name, err)
	}
	for deadline := time.Now().Add(framework.Timeout); ; time.Sleep(framework.Interval) {
		err := env.Client.Get(ctx, types.NamespacedName{Name: name}, crd)
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s is still there (%v)", name, err)
		}
	}
}

// helmConfiguration is Helm's action configuration for the test's API
// server as cluster admin, storing releases in Secrets as helm does.
func helmConfiguration(t *testing.T, namespace string) *action.Configuration {
	t.Helper()
	kubeconfig, err := env.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &action.Configuration{}
	if err := cfg.Init(kube.GetConfig(path, "", namespace), namespace, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	return cfg
}
