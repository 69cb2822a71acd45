package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// examplesDir holds the files docs/consumers.md ("Argo CD") tells a user to
// apply.
var examplesDir = filepath.Join("..", "..", "docs", "examples", "argocd")

// patchCommand is the command each patch file's comment tells the user to
// run: the kind and name of the Argo CD workload it patches.
var patchCommand = regexp.MustCompile(`kubectl -n argocd patch (statefulset|deployment) (\S+) --patch-file (\S+)`)

// TestDocsPatchesMountCpCredsInArgoCD runs the docs' cp-creds patches as the
// user does (kubectl patch's strategic merge, on a real API server) on the
// workloads of Argo CD's own install.yaml, at the version the end-to-end test
// runs: each Argo CD container keeps its image and gains the bundle's cp-creds
// at the chart's default argocd.cpCredsPath, copied from the chart's default
// image by an initContainer.
func TestDocsPatchesMountCpCredsInArgoCD(t *testing.T) {
	patches, err := filepath.Glob(filepath.Join(examplesDir, "*-cp-creds.yaml"))
	if err != nil || len(patches) != 2 {
		t.Fatalf("want the application-controller's and the server's patches in %s, got %v (%v)", examplesDir, patches, err)
	}
	image, cpCredsPath := chartDefaults(t)
	install := argoCDInstall(t)
	dyn := startAPIServer(t)
	for _, file := range patches {
		t.Run(filepath.Base(file), func(t *testing.T) {
			patched := applyPatchFile(t, dyn, install, file)
			checkPatched(t, patched, image, cpCredsPath)
		})
	}
}

// chartDefaults are the chart's default image (repository and appVersion)
// and argocd.cpCredsPath.
func chartDefaults(t *testing.T) (string, string) {
	t.Helper()
	chartDir := filepath.Join("..", "..", "charts", "clusterprofile-manager")
	var values struct {
		Image struct {
			Repository string `json:"repository"`
		} `json:"image"`
		ArgoCD struct {
			CpCredsPath string `json:"cpCredsPath"`
		} `json:"argocd"`
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	readYAML(t, filepath.Join(chartDir, "values.yaml"), &values)
	readYAML(t, filepath.Join(chartDir, "Chart.yaml"), &chart)
	if values.Image.Repository == "" || chart.AppVersion == "" || values.ArgoCD.CpCredsPath == "" {
		t.Fatalf("the chart names no default image or argocd.cpCredsPath: %+v %+v", values, chart)
	}
	return values.Image.Repository + ":" + chart.AppVersion, values.ArgoCD.CpCredsPath
}

func readYAML(t *testing.T, file string, into any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// argoCDInstall is Argo CD's install.yaml from the module this probe links,
// as one document per object.
func argoCDInstall(t *testing.T) [][]byte {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-cd/v3").Output()
	if err != nil {
		t.Fatalf("finding Argo CD's module: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "manifests", "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return docs
		}
		if err != nil {
			t.Fatalf("install.yaml: %v", err)
		}
		docs = append(docs, doc)
	}
}

func startAPIServer(t *testing.T) dynamic.Interface {
	t.Helper()
	env := &envtest.Environment{BinaryAssetsDirectory: envtestAssets(t)}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argoNS}}
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return dynamic.NewForConfigOrDie(cfg)
}

// workloads are the kinds kubectl's patch commands name, by resource.
var workloads = map[string]schema.GroupVersionKind{
	"statefulset": appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
	"deployment":  appsv1.SchemeGroupVersion.WithKind("Deployment"),
}

// applyPatchFile creates the workload the file's kubectl command names, as
// install.yaml has it, and patches it with the file (a strategic merge
// patch, kubectl patch's default); the pod template after.
func applyPatchFile(t *testing.T, dyn dynamic.Interface, install [][]byte, file string) corev1.PodTemplateSpec {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	command := patchCommand.FindStringSubmatch(string(data))
	if command == nil || command[3] != filepath.Base(file) {
		t.Fatalf("%s tells no `kubectl -n argocd patch <kind> <name> --patch-file %s`", file, filepath.Base(file))
	}
	gvk, name := workloads[command[1]], command[2]
	patch, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resource := dyn.Resource(gvk.GroupVersion().WithResource(command[1] + "s")).Namespace(argoNS)
	if _, err := resource.Create(ctx, installed(t, install, gvk.Kind, name), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patched, err := resource.Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("kubectl patch %s %s: %v", command[1], name, err)
	}
	raw, _, err := unstructured.NestedMap(patched.Object, "spec", "template")
	if err != nil {
		t.Fatal(err)
	}
	var template corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &template); err != nil {
		t.Fatal(err)
	}
	return template
}

// installed is install.yaml's object of that kind and name, in argocd.
func installed(t *testing.T, install [][]byte, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, doc := range install {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil || u.GetKind() != kind || u.GetName() != name {
			continue
		}
		u.SetNamespace(argoNS)
		return u
	}
	t.Fatalf("Argo CD's install.yaml has no %s %s", kind, name)
	return nil
}

// checkPatched: every container install.yaml had is there with its image,
// the patched one mounts the plugin directory, and an initContainer from the
// chart's default image copies cp-creds there.
func checkPatched(t *testing.T, template corev1.PodTemplateSpec, image, cpCredsPath string) {
	t.Helper()
	dir := path.Dir(cpCredsPath)
	var copier *corev1.Container
	for i, c := range template.Spec.InitContainers {
		if c.Image == image {
			copier = &template.Spec.InitContainers[i]
		}
	}
	if copier == nil {
		t.Fatalf("no initContainer from the chart's default image %s: %+v", image, template.Spec.InitContainers)
	}
	if want := []string{"cp", "/cp-creds", cpCredsPath}; strings.Join(copier.Command, " ") != strings.Join(want, " ") {
		t.Errorf("the initContainer runs %q, want %q", copier.Command, want)
	}
	volume := mountedAt(*copier, dir)
	if volume == "" {
		t.Errorf("the initContainer mounts nothing at %s: %+v", dir, copier.VolumeMounts)
	}
	mounted := 0
	for _, c := range template.Spec.Containers {
		if !strings.HasPrefix(c.Image, "quay.io/argoproj/argocd:") {
			t.Errorf("container %s runs %s: the patch named no container of Argo CD's", c.Name, c.Image)
		}
		if volume != "" && mountedAt(c, dir) == volume {
			mounted++
		}
	}
	if mounted != 1 {
		t.Errorf("want Argo CD's container to mount %s (volume %s), %d do: %+v", dir, volume, mounted, template.Spec.Containers)
	}
}

// mountedAt is the volume a container mounts at dir.
func mountedAt(c corev1.Container, dir string) string {
	for _, m := range c.VolumeMounts {
		if m.MountPath == dir {
			return m.Name
		}
	}
	return ""
}
