// Package chart_test tests the clusterprofile-manager Helm chart with Helm's
// own library: lint, every combination of the feature gates, the values
// schema, and, against a real kube-apiserver, the rendered objects, the RBAC
// of each gate (by impersonating the manager's ServiceAccount), the Secret
// admission policy, `helm install`/`uninstall` over an existing CRD, Helm 4's
// CLI installing, upgrading and uninstalling the chart from an OCI registry,
// and the manager binary running with exactly the chart's arguments and RBAC.
package chart_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var (
	env *framework.Env
	// managerBinary is cmd/clusterprofile-manager, built once for the suite.
	managerBinary string
)

func TestMain(m *testing.M) {
	flag.Parse()
	// The parallel subtests mostly wait: on the API server's RBAC and
	// admission policy caches, on manager processes taking their Lease. Run
	// more of them at once than the default (GOMAXPROCS) unless -parallel says.
	if !flagGiven("test.parallel") {
		_ = flag.Set("test.parallel", "8")
	}
	os.Exit(run(m))
}

func flagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "chart-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Build the manager while the control plane starts.
	managerBinary = filepath.Join(dir, "clusterprofile-manager")
	build := exec.Command("go", "build", "-o", managerBinary, "./cmd/clusterprofile-manager")
	build.Dir = framework.RepoRoot()
	var output bytes.Buffer
	build.Stdout, build.Stderr = &output, &output
	if err := build.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "building clusterprofile-manager:", err)
		return 1
	}
	built := make(chan error, 1)
	go func() { built <- build.Wait() }()
	e, err := framework.Start(framework.Options{KueueCRDs: true})
	if err == nil {
		defer func() {
			if err := e.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "stopping control plane:", err)
			}
		}()
	}
	if buildErr := <-built; buildErr != nil {
		fmt.Fprintf(os.Stderr, "building clusterprofile-manager: %v\n%s", buildErr, &output)
		return 1
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env = e
	// Argo CD's namespace, where the Argo CD integration's Role goes
	// (it must exist at install, as the chart's values say).
	if err := e.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "argocd"}}); err != nil {
		fmt.Fprintln(os.Stderr, "creating namespace argocd:", err)
		return 1
	}
	return m.Run()
}
