package chart_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/go-containerregistry/pkg/registry"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestHelm4InstallsUpgradesAndUninstallsFromARegistry runs what a new user
// runs: the Helm 4 CLI (bin/helm4; Helm 4's k8s.io modules are newer than
// this module's, so not its library) with the chart from an OCI registry.
// It installs the previous release (bin/previous) over the ClusterProfile
// CRD already there (--take-ownership), upgrades it to this version and
// uninstalls it. The CRD, a profile and a token copy are the same objects
// (UIDs) throughout; the uninstall removes the release's own objects.
func TestHelm4InstallsUpgradesAndUninstallsFromARegistry(t *testing.T) {
	helm := newHelm4(t)
	previous, previousArchive := previousRelease(t)
	current := readVersion(t)
	ctx := framework.ContextFor(t)
	rel := chartrender.Release{Name: "helm4", Namespace: "chart-helm4"}
	ref := pushCharts(ctx, t, helm, previousArchive)
	// Every gate the previous release knows (it has no Argo CD or placement
	// decisions gate, and its values schema refuses keys it does not know).
	every := allOn().values(false)
	delete(every["featureGates"].(map[string]any), "clusterProfileArgoCD")
	delete(every["featureGates"].(map[string]any), "clusterProfilePlacementDecision")
	// The image as the current chart names it: the previous release's chart
	// may name another repository, and checkRelease compares with this one.
	every["image"] = map[string]any{"repository": loadChart(t).Values["image"].(map[string]any)["repository"]}
	values := valuesFile(t, every)
	// As the Helm 3 test does: leave the chart's CRD as the other tests expect it.
	t.Cleanup(func() {
		crd := find(render(t, defaultRelease, nil), "CustomResourceDefinition", profileCRD)
		createOrReplace(context.Background(), t, env.Client, crd)
	})
	kept := []client.Object{&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: profileCRD}}}
	want := uidsOf(ctx, t, kept...)

	helm.run(ctx, t, "install", rel.Name, ref, "--version", previous, "--plain-http", "-n", rel.Namespace,
		"--create-namespace", "--take-ownership", "-f", values)
	checkRelease(ctx, t, helm, rel, previous, 1)
	if diff := cmp.Diff(want, uidsOf(ctx, t, kept...)); diff != "" {
		t.Errorf("helm install --take-ownership replaced objects instead of taking them over, UIDs (-want +got):\n%s", diff)
	}

	// What the manager would have written by the time of the upgrade.
	consumer := "chart-helm4-consumer"
	framework.CreateNamespace(ctx, t, env.Client, consumer)
	profile := utiltesting.MakeClusterProfile(consumer, "cluster1", "open-cluster-management").Obj()
	framework.CreateProfile(ctx, t, env.Client, profile)
	tokenCopy := framework.TokenCopy(consumer, "cluster1", "msa", "token", time.Now().Add(time.Hour))
	if err := env.Client.Create(ctx, tokenCopy); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, profile, tokenCopy)
	want = uidsOf(ctx, t, kept...)

	helm.run(ctx, t, "upgrade", rel.Name, ref, "--version", current, "--plain-http", "-n", rel.Namespace, "-f", values)
	checkRelease(ctx, t, helm, rel, current, 2)
	if diff := cmp.Diff(want, uidsOf(ctx, t, kept...)); diff != "" {
		t.Errorf("helm upgrade deleted and recreated objects, UIDs (-want +got):\n%s", diff)
	}

	helm.run(ctx, t, "uninstall", rel.Name, "-n", rel.Namespace, "--wait")
	if diff := cmp.Diff([]helm4Release{}, helm.list(ctx, t, rel.Namespace)); diff != "" {
		t.Errorf("helm list after uninstall (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{}, releaseLeftovers(ctx, t, rel)); diff != "" {
		t.Errorf("objects of the release left after helm uninstall (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, uidsOf(ctx, t, kept...)); diff != "" {
		t.Errorf("helm uninstall did not keep the CRD, the profile and the token copy, UIDs (-want +got):\n%s", diff)
	}
}

// helm4 runs bin/helm4 as cluster admin of the suite's API server, with
// Helm's and the registry client's configuration, cache and data in the
// test's own directories, never the user's.
type helm4 struct {
	path string
	env  []string
}

func newHelm4(t *testing.T) helm4 {
	t.Helper()
	path := filepath.Join(framework.RepoRoot(), "bin", "helm4")
	if _, err := os.Stat(path); err != nil {
		missing(t, "make helm4", err)
	}
	dir := t.TempDir()
	kubeconfig, err := env.WriteAdminKubeconfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := helm4{path: path, env: []string{"KUBECONFIG=" + kubeconfig}}
	for _, v := range []string{"HELM_CONFIG_HOME", "HELM_CACHE_HOME", "HELM_DATA_HOME", "DOCKER_CONFIG"} {
		h.env = append(h.env, v+"="+filepath.Join(dir, strings.ToLower(v)))
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HELM_") && !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "DOCKER_CONFIG=") {
			h.env = append(h.env, kv)
		}
	}
	return h
}

// run runs helm with args and returns its output; the test stops on a
// failure, showing the output.
func (h helm4) run(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, h.path, args...)
	cmd.Env = h.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// helm4Release is a row of `helm list -o json`.
type helm4Release struct {
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	Revision   string `json:"revision"`
	Updated    string `json:"updated"`
	Status     string `json:"status"`
	Chart      string `json:"chart"`
	AppVersion string `json:"app_version"`
}

func (h helm4) list(ctx context.Context, t *testing.T, namespace string) []helm4Release {
	t.Helper()
	out := h.run(ctx, t, "list", "-n", namespace, "-o", "json")
	releases := []helm4Release{}
	if err := json.Unmarshal([]byte(out), &releases); err != nil {
		t.Fatalf("helm list -o json: %v\n%s", err, out)
	}
	return releases
}

// missing skips the test for want of something a make target builds, or
// fails it in CI (CI set), which must run it.
func missing(t *testing.T, target string, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%v; CI must run this test: run `%s`", err, target)
	}
	t.Skipf("%v (`%s` builds it)", err, target)
}

// previousRelease is the previous release's version label and chart archive
// (make previous).
func previousRelease(t *testing.T) (label, archive string) {
	t.Helper()
	previous, err := chartrender.ReadPreviousRelease(filepath.Join(framework.RepoRoot(), "bin", "previous"), chartName)
	if err != nil {
		missing(t, "make previous", err)
	}
	return previous.Version, previous.Chart
}

func readVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// pushCharts starts a registry, pushes the previous chart and this one,
// packaged by helm, to it, and returns the chart's oci:// reference.
func pushCharts(ctx context.Context, t *testing.T, helm helm4, previousArchive string) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repo := "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/charts"
	dir := t.TempDir()
	helm.run(ctx, t, "package", chartrender.ChartDir(chartName), "--destination", dir)
	archives, err := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if err != nil || len(archives) != 1 {
		t.Fatalf("helm package wrote %v (%v), want one archive", archives, err)
	}
	for _, archive := range []string{previousArchive, archives[0]} {
		helm.run(ctx, t, "push", archive, repo, "--plain-http")
	}
	return repo + "/" + chartName
}

func valuesFile(t *testing.T, values map[string]any) string {
	t.Helper()
	data, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkRelease checks that helm lists the release at revision, deployed from
// the chart of version, and that the manager's Deployment is that version's:
// its image tag (the appVersion) and its chart and version labels.
func checkRelease(ctx context.Context, t *testing.T, helm helm4, rel chartrender.Release, version string, revision int) {
	t.Helper()
	wantReleases := []helm4Release{{Name: rel.Name, Namespace: rel.Namespace, Revision: fmt.Sprint(revision),
		Status: "deployed", Chart: chartName + "-" + version, AppVersion: version}}
	if diff := cmp.Diff(wantReleases, helm.list(ctx, t, rel.Namespace), cmpopts.IgnoreFields(helm4Release{}, "Updated")); diff != "" {
		t.Errorf("helm list at revision %d (-want +got):\n%s", revision, diff)
	}
	image, _ := loadChart(t).Values["image"].(map[string]any)
	deployment := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: rel.Namespace, Name: rel.Name + "-" + chartName}}
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: profileCRD}}
	marks := releaseMarks{Chart: chartName + "-" + version, AppVersion: version, Release: rel.Name}
	withImage := marks
	withImage.Image = fmt.Sprint(image["repository"]) + ":" + version
	want := map[string]releaseMarks{"Deployment": withImage, "CRD": marks}
	got := map[string]releaseMarks{}
	for name, o := range map[string]client.Object{"Deployment": deployment, "CRD": crd} {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatalf("the release's %s at revision %d: %v", name, revision, err)
		}
		got[name] = marksOf(o)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the release's objects at revision %d (-want +got):\n%s", revision, diff)
	}
}

// releaseMarks are what says which release and chart version wrote an object.
type releaseMarks struct {
	Image      string // the manager container's, for the Deployment
	Chart      string // label helm.sh/chart
	AppVersion string // label app.kubernetes.io/version
	Release    string // annotation meta.helm.sh/release-name
}

func marksOf(o client.Object) releaseMarks {
	m := releaseMarks{Chart: o.GetLabels()["helm.sh/chart"], AppVersion: o.GetLabels()["app.kubernetes.io/version"],
		Release: o.GetAnnotations()["meta.helm.sh/release-name"]}
	if d, ok := o.(*appsv1.Deployment); ok {
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name == "manager" {
				m.Image = c.Image
			}
		}
	}
	return m
}

// uidsOf reads each object and returns its UID by kind and name ("" for
// one that does not exist).
func uidsOf(ctx context.Context, t *testing.T, objects ...client.Object) map[string]types.UID {
	t.Helper()
	uids := map[string]types.UID{}
	for _, o := range objects {
		name := fmt.Sprintf("%T %s", o, client.ObjectKeyFromObject(o))
		current := o.DeepCopyObject().(client.Object)
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), current)
		switch {
		case apierrors.IsNotFound(err):
			uids[name] = ""
		case err != nil:
			t.Fatal(err)
		default:
			uids[name] = current.GetUID()
		}
	}
	return uids
}

// releaseLeftovers lists the release's objects of the kinds it renders
// beside the CRD (which it keeps), by its instance label.
func releaseLeftovers(ctx context.Context, t *testing.T, rel chartrender.Release) []string {
	t.Helper()
	kinds := []schema.GroupVersionKind{
		appsv1.SchemeGroupVersion.WithKind("Deployment"),
		corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
		corev1.SchemeGroupVersion.WithKind("Service"),
		rbacv1.SchemeGroupVersion.WithKind("ClusterRole"),
		rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"),
		rbacv1.SchemeGroupVersion.WithKind("Role"),
		rbacv1.SchemeGroupVersion.WithKind("RoleBinding"),
		admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicy"),
		admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingAdmissionPolicyBinding"),
	}
	left := []string{}
	for _, gvk := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := env.Client.List(ctx, list, client.MatchingLabels{"app.kubernetes.io/instance": rel.Name}); err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			left = append(left, objectKey(&list.Items[i]))
		}
	}
	return left
}
