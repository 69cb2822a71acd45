//go:build linux

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/test/docsrun"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
)

const (
	// docsRelease and docsNamespace are the release the docs install.
	docsRelease   = "clusterprofile-manager"
	docsNamespace = "open-cluster-management"
)

// TestTheDocsInstallUseAndUninstall types the docs' commands (the blocks
// docsrun.Run names) into a shell on the hub, with kubectl and Helm 4
// built from their own code, in a clone of this repository: the chart
// README's taking over of an existing CRD, the README's install from the
// clone, install.md's check, two runbook reads of operations.md, the chart
// README's turning the syncer off (its copies revoked), install.md's
// uninstall (every profile and copy gone, then the release; the CRD kept),
// and the README's install from the release's registry. The edits are the
// ones the docs name (the image mirror, Helm 4's --force-conflicts over a
// CRD another manager wrote) and the local registry in place of the
// release's, which is not reachable here. The suite's own release steps
// aside first and comes back last.
func TestTheDocsInstallUseAndUninstall(t *testing.T) {
	ctx, g := begin(t)
	shell := docsShellFor(t)

	g.Expect(env.UninstallChart(ctx, releaseName, releaseNamespace)).To(Succeed())
	t.Cleanup(func() { restoreSuiteRelease(t) })
	// The hub has the CRD (the suite's release kept it,
	// helm.sh/resource-policy: keep): as on a hub where OCM's operator
	// installed it, without Helm's metadata, which the chart README's first
	// way to take it over adds.
	g.Expect(forgetCRDOwner(ctx)).To(Succeed())
	shell.run(t, docsrun.AdoptCRD, nil)

	// The edits the docs name: install.md's image mirror, and, the CRD
	// being another manager's, Helm 4's --force-conflicts (the chart
	// README's "The ClusterProfile CRD").
	shell.run(t, docsrun.InstallFromClone, installFromCloneWithMirror("--force-conflicts"))
	g.Expect(env.WaitDeploymentAvailable(ctx, docsNamespace, docsRelease)).To(Succeed())
	g.Eventually(func(g Gomega) { publishedByTheDocsRelease(ctx, g, consumerNS) }).Should(Succeed(),
		"the documented install publishes every profile, entry and copy")
	reachesEveryCluster(ctx, g, "the documented install", consumerNS)
	out := shell.run(t, docsrun.Check, nil)[0]
	for _, cluster := range fleetClusters {
		g.Expect(out).To(MatchRegexp(`(?m)^`+consumerNS+`\s+`+cluster+`\s`), "install.md's check lists the profiles")
	}

	g.Expect(shell.run(t, docsrun.NameClashEvents, nil)).To(Equal([]string{""}), "operations.md's NameClash runbook: no clash")
	g.Expect(shell.run(t, docsrun.MirrorGates, nil)[0]).To(HavePrefix("cluster-manager: "), "operations.md's MirrorPassive runbook")

	shell.run(t, docsrun.SyncerOff, nil)
	g.Expect(allCopies(ctx, g)).To(BeEmpty(), "the syncer turned off revokes every copy")
	for _, cluster := range fleetClusters {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(hub.Get(ctx, key(consumerNS, cluster), p)).To(Succeed(), "the profiles stay")
	}

	shell.run(t, docsrun.Uninstall, nil)
	profiles := &cpv1alpha1.ClusterProfileList{}
	g.Expect(hub.List(ctx, profiles, client.MatchingLabels{cpv1alpha1.LabelClusterManagerKey: clusterprofile.DefaultManagerName})).To(Succeed())
	g.Expect(profiles.Items).To(BeEmpty(), "the uninstall removes the profiles")
	g.Expect(allCopies(ctx, g)).To(BeEmpty(), "the uninstall removes the copies")
	g.Eventually(func() error {
		return hub.Get(ctx, key(docsNamespace, docsRelease), &appsv1.Deployment{})
	}).Should(Satisfy(apierrors.IsNotFound), "helm uninstall removes the manager")
	roles := &rbacv1.ClusterRoleList{}
	g.Expect(hub.List(ctx, roles, client.MatchingLabels{"app.kubernetes.io/instance": docsRelease})).To(Succeed())
	g.Expect(roles.Items).To(BeEmpty(), "helm uninstall removes the ClusterRoles")
	g.Expect(hub.Get(ctx, client.ObjectKey{Name: clusterprofile.CRDName}, &apiextensionsv1.CustomResourceDefinition{})).
		To(Succeed(), "the CRD stays")

	// The release's install, from the local registry, which holds this
	// release's chart and image, in place of the release's (plain HTTP).
	shell.run(t, docsrun.InstallFromRelease, strings.NewReplacer(releaseCharts,
		env.Registry.ChartReference+" --plain-http --set image.repository="+env.Registry.BundleRepository))
	g.Expect(env.WaitDeploymentAvailable(ctx, docsNamespace, docsRelease)).To(Succeed())
	g.Eventually(func(g Gomega) { publishedByTheDocsRelease(ctx, g, consumerNS) }).Should(Succeed(),
		"the install from the release's registry publishes every profile, entry and copy again")
}

// installFromCloneWithMirror is the edit install.md names for a helm
// install from a clone with an image mirror (the local registry's), plus
// flags.
func installFromCloneWithMirror(flags ...string) *strings.Replacer {
	const install = "helm install clusterprofile-manager charts/clusterprofile-manager "
	return strings.NewReplacer(install, install+strings.Join(append(flags, "--set image.repository="+env.Registry.BundleRepository), " ")+" ")
}

// releaseCharts is the chart's repository in the release's registry, as the
// docs name it.
const releaseCharts = "oci://ghcr.io/open-cluster-management-io/charts/clusterprofile-manager"

// publishedByTheDocsRelease: every profile of namespace has the bundle's
// cluster-proxy entry at the chart's default user server (the Service), and
// every copy is the bundle's, recording that server.
func publishedByTheDocsRelease(ctx context.Context, g Gomega, namespace string) {
	for _, cluster := range fleetClusters {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(hub.Get(ctx, key(namespace, cluster), p)).To(Succeed())
		g.Expect(proxyEntry(g, p).Cluster.Server).To(Equal(
			"https://cluster-proxy-addon-user.open-cluster-management-addon:9092/"+cluster), "the entry of %s", cluster)
		copy := &corev1.Secret{}
		g.Expect(hub.Get(ctx, key(namespace, cpcreds.SecretName(cluster, msaName)), copy)).To(Succeed())
		g.Expect(copy.Annotations).NotTo(HaveKey(cpcreds.AnnotationUpstreamCopy), "copy of %s", cluster)
		g.Expect(copy.Annotations[cpcreds.AnnotationPublishedServers]).To(
			ContainSubstring("cluster-proxy-addon-user.open-cluster-management-addon:9092/"+cluster), "copy of %s", cluster)
	}
}

// allCopies lists the token copies on the hub.
func allCopies(ctx context.Context, g Gomega) []string {
	return copies(ctx, g, client.HasLabels{credsync.LabelSyncedFrom})
}

// copies lists the token copies on the hub that opts select, as
// namespace/name.
func copies(ctx context.Context, g Gomega, opts ...client.ListOption) []string {
	secrets := &corev1.SecretList{}
	g.Expect(hub.List(ctx, secrets, opts...)).To(Succeed())
	var names []string
	for _, s := range secrets.Items {
		names = append(names, s.Namespace+"/"+s.Name)
	}
	return names
}

// forgetCRDOwner takes Helm's release metadata off the ClusterProfile CRD,
// as on a hub where OCM's operator or an earlier install left it.
func forgetCRDOwner(ctx context.Context) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := hub.Get(ctx, client.ObjectKey{Name: clusterprofile.CRDName}, crd); err != nil {
		return err
	}
	patch := client.MergeFrom(crd.DeepCopy())
	delete(crd.Labels, "app.kubernetes.io/managed-by")
	delete(crd.Annotations, "meta.helm.sh/release-name")
	delete(crd.Annotations, "meta.helm.sh/release-namespace")
	return hub.Patch(ctx, crd, patch)
}

// restoreSuiteRelease puts the suite's release back for the tests after
// this one, whatever state this one stopped in, and waits until it writes
// kueue-system's profiles, entries and copies again.
func restoreSuiteRelease(t *testing.T) {
	ctx, g := context.Background(), NewWithT(t)
	_ = env.UninstallChart(ctx, docsRelease, docsNamespace)
	g.Expect(forgetIssuedAddonCSRs(ctx, hub, agentapi.AddonName)).To(Succeed())
	g.Expect(env.InstallBundle(ctx, releaseName, releaseNamespace)).To(Succeed())
	g.Eventually(func(g Gomega) { ownedByBundle(ctx, g, consumerNS) }, 2*timeout, interval).Should(Succeed(),
		"the suite's release writes kueue-system again")
}

// docsShell runs the docs' commands as a user on the hub would: bash in a
// clone of the repository, with kubectl and helm on PATH and the hub's
// admin kubeconfig.
type docsShell struct {
	dir, path, kubeconfig, home string
}

var (
	docsShellOnce sync.Once
	theDocsShell  *docsShell
	docsShellErr  error
)

// docsShellFor returns the suite's docs shell, building kubectl the first
// time.
func docsShellFor(t *testing.T) *docsShell {
	t.Helper()
	docsShellOnce.Do(func() { theDocsShell, docsShellErr = newDocsShell() })
	if docsShellErr != nil {
		t.Fatal(docsShellErr)
	}
	return theDocsShell
}

func newDocsShell() (*docsShell, error) {
	tools := filepath.Join(env.WorkDir, "docs-shell")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		return nil, err
	}
	build := exec.Command("go", "build", "-o", filepath.Join(tools, "kubectl"), "./hack/kubectl")
	build.Dir = ocmlocal.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building kubectl: %w\n%s", err, out)
	}
	helm := filepath.Join(ocmlocal.RepoRoot(), "bin", "helm4")
	if _, err := os.Stat(helm); err != nil {
		return nil, fmt.Errorf("Helm 4 is not built (make helm4; make test builds it): %w", err)
	}
	if err := os.Symlink(helm, filepath.Join(tools, "helm")); err != nil && !os.IsExist(err) {
		return nil, err
	}
	// The hub's kubeconfig first (its context is the current one), then
	// each cluster's, whose context is the cluster's name (`--context <worker>`).
	kubeconfigs := []string{env.Hub.KubeconfigPath}
	for _, c := range env.Clusters {
		kubeconfigs = append(kubeconfigs, c.KubeconfigPath)
	}
	return &docsShell{dir: ocmlocal.RepoRoot(), path: tools + ":/usr/bin:/bin", kubeconfig: strings.Join(kubeconfigs, ":"), home: tools}, nil
}

// run runs the commands of the block ref names, one at a time, each with
// the edits the docs tell the user to make (rewrite; nil for none); a
// command the docs tell the user to repeat until it lists nothing is
// repeated until it does. It returns what each typed command printed.
func (s *docsShell) run(t *testing.T, ref docsrun.Ref, rewrite *strings.Replacer) []string {
	t.Helper()
	block, err := docsrun.Find(ocmlocal.RepoRoot(), ref)
	if err != nil {
		t.Fatal(err)
	}
	var printed []string
	for _, command := range block.Commands() {
		command, wait := docsrun.WaitUntilEmpty(command)
		if typed, why := docsrun.Typed(command); !typed {
			t.Logf("%s:%d: not typed: %s: %s", block.File, block.Line, command, why)
			continue
		}
		if rewrite != nil {
			command = rewrite.Replace(command)
		}
		deadline := time.Now().Add(2 * timeout)
		for {
			out, err := s.exec(command)
			if err != nil {
				t.Fatalf("%s:%d: %s: %v\n%s", block.File, block.Line, command, err, out)
			}
			if !wait || strings.TrimSpace(out) == "" {
				printed = append(printed, out)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s:%d: %s still lists, after %s:\n%s", block.File, block.Line, command, 2*timeout, out)
			}
			time.Sleep(time.Second)
		}
	}
	return printed
}

// exec runs one command and returns its standard output; standard error
// joins it in the error.
func (s *docsShell) exec(command string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", command)
	cmd.Dir = s.dir
	cmd.Env = []string{"PATH=" + s.path, "KUBECONFIG=" + s.kubeconfig, "HOME=" + s.home}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, stderr.String())
	}
	return stdout.String(), nil
}
