package multikueue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"open-cluster-management.io/clusterprofile-bundle/pkg/multikueue"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// kueueModule is the Kueue release whose CRDs the tests install. Kueue is
// not a dependency of this module (its types are not imported), so the
// module is fetched into the module cache by version.
const kueueModule = "sigs.k8s.io/kueue@v0.16.1"

var env *framework.Env

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	crds, err := kueueCRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	e, err := framework.Start(framework.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = e.Stop() }()
	if _, err := envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{Paths: crds, ErrorIfPathMissing: true}); err != nil {
		fmt.Fprintln(os.Stderr, "installing Kueue's CRDs:", err)
		return 1
	}
	env = e
	return m.Run()
}

// kueueCRDs are the MultiKueue CRDs of the pinned Kueue release.
func kueueCRDs() ([]string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", kueueModule)
	cmd.Dir = framework.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download %s: %w", kueueModule, err)
	}
	var module struct{ Dir, Error string }
	if err := json.Unmarshal(out, &module); err != nil || module.Dir == "" {
		return nil, fmt.Errorf("go mod download %s: no module directory (%v) %s", kueueModule, err, module.Error)
	}
	bases := filepath.Join(module.Dir, "config", "components", "crd", "bases")
	return []string{
		filepath.Join(bases, "kueue.x-k8s.io_multikueueclusters.yaml"),
		filepath.Join(bases, "kueue.x-k8s.io_multikueueconfigs.yaml"),
	}, nil
}

// kueueView is what Kueue reads of one of its objects.
type kueueView struct {
	Labels map[string]string
	Spec   any
}

// kueueObjects lists the objects of kind whose names start with prefix
// (each test names its clusters with its own prefix), by name.
func kueueObjects(g Gomega, ctx context.Context, kind, prefix string) map[string]kueueView {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(multikueue.GroupVersion.WithKind(kind + "List"))
	g.Expect(env.Client.List(ctx, list)).To(Succeed())
	out := map[string]kueueView{}
	for _, item := range list.Items {
		if !strings.HasPrefix(item.GetName(), prefix) {
			continue
		}
		out[item.GetName()] = kueueView{Labels: item.GetLabels(), Spec: item.Object["spec"]}
	}
	return out
}

// expectKueueObjects waits until the objects of kind whose names start with
// prefix are exactly want.
func expectKueueObjects(t *testing.T, ctx context.Context, kind, prefix string, want map[string]kueueView) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) map[string]kueueView {
		return kueueObjects(g, ctx, kind, prefix)
	}, framework.Timeout, framework.Interval).Should(Equal(want), "%ss", kind)
}

// ours is the view of a MultiKueueCluster we keep for a profile.
func ours(name string) kueueView {
	return kueueView{Labels: map[string]string{multikueue.LabelCreatedBy: "open-cluster-management"},
		Spec: map[string]any{"clusterSource": map[string]any{"clusterProfileRef": map[string]any{"name": name}}}}
}

// ourConfig is the view of the MultiKueueConfig listing clusters.
func ourConfig(clusters ...any) kueueView {
	return kueueView{Labels: map[string]string{multikueue.LabelCreatedBy: "open-cluster-management"},
		Spec: map[string]any{"clusters": clusters}}
}

// eventsAbout lists the events.k8s.io Events with reason about one object.
func eventsAbout(g Gomega, ctx context.Context, kind, name, reason string) []eventsv1.Event {
	list := &eventsv1.EventList{}
	g.Expect(env.Client.List(ctx, list)).To(Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}
