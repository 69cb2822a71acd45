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
	ocmlocal, makefile := read("hack/ocmlocal.sh"), read("Makefile")
	want := map[string]string{
		"Kubernetes (hub and clusters)": shellDefault(t, ocmlocal, "KUBE_VERSION"),
		"OCM":                           shellDefault(t, ocmlocal, "OCM_VERSION"),
		"cluster-proxy":                 shellDefault(t, ocmlocal, "CLUSTER_PROXY_VERSION"),
		"managed-serviceaccount":        shellDefault(t, ocmlocal, "MSA_VERSION"),
		"Kueue (MultiKueue)":            shellDefault(t, ocmlocal, "KUEUE_VERSION") + ", " + shellDefault(t, ocmlocal, "KUEUE_UPGRADE_VERSION"),
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

// shellDefault is the default a shell script gives a variable
// (NAME="${NAME:-default}"), as a version with its "v".
func shellDefault(t *testing.T, script, name string) string {
	t.Helper()
	return "v" + strings.TrimPrefix(submatch(t, regexp.MustCompile(name+`="\$\{`+name+`:-([^}]+)\}"`), script, name), "v")
}
