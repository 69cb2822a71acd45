package docs_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestSupportedVersionsAreWhatTheTestsRun: the README's table of tested
// versions names the versions the suites build and run: the local OCM's
// (hack/ocmlocal.sh), Argo CD's and Helm 4's (the Makefile) and Helm 3's
// library (go.mod).
func TestSupportedVersionsAreWhatTheTestsRun(t *testing.T) {
	root := repoRoot(t)
	read := func(path string) string { return readRepoFile(t, root, path) }
	shellDefault := func(text, name string) string {
		return "v" + strings.TrimPrefix(submatch(t, regexp.MustCompile(name+`="\$\{`+name+`:-([^}]+)\}"`), text, name), "v")
	}
	ocmlocal, makefile := read("hack/ocmlocal.sh"), read("Makefile")
	want := map[string]string{
		"Kubernetes (hub and clusters)": shellDefault(ocmlocal, "KUBE_VERSION"),
		"OCM":                           shellDefault(ocmlocal, "OCM_VERSION"),
		"cluster-proxy":                 shellDefault(ocmlocal, "CLUSTER_PROXY_VERSION"),
		"managed-serviceaccount":        shellDefault(ocmlocal, "MSA_VERSION"),
		"Kueue (MultiKueue)":            shellDefault(ocmlocal, "KUEUE_VERSION") + ", " + shellDefault(ocmlocal, "KUEUE_UPGRADE_VERSION"),
		"Argo CD":                       submatch(t, makeVariable("ARGOCD_VERSION"), makefile, "ARGOCD_VERSION"),
		"Helm": submatch(t, regexp.MustCompile(`(?m)^\s*helm\.sh/helm/v3 (\S+)$`), read("go.mod"), "helm v3 in go.mod") + ", " +
			submatch(t, makeVariable("HELM4_VERSION"), makefile, "HELM4_VERSION"),
	}
	readme := read("README.md")
	table := readme[strings.Index(readme, "### Supported versions"):]
	got := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\| ([^|]+?) \| ([^|]+?) \| [^|]+ \|$`).FindAllStringSubmatch(table, -1) {
		if m[1] != "Component" && m[1] != "---" {
			got[m[1]] = m[2]
		}
		if len(got) == len(want) {
			break
		}
	}
	for component, version := range want {
		if got[component] != version {
			t.Errorf("README's supported versions: %s tested %q, the tests run %q", component, got[component], version)
		}
	}
}
