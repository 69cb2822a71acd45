// Package docsrun names the shell blocks of the user docs that a user copies
// and says which test runs each one. The end-to-end suite (test/e2e) and
// test/demo run the blocks in Run as they are written; test/docs fails when a
// block of a user doc is in neither Run nor NotRun, or when an entry names no
// block, so that a command the docs add or change is a command a test runs.
package docsrun

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// UserDocs are the files a user copies commands from, relative to the
// repository's root.
var UserDocs = []string{
	"README.md",
	"docs/install.md",
	"docs/consumers.md",
	"docs/operations.md",
	"charts/clusterprofile-manager/README.md",
}

// Ref names a block: its file and the start of its first command (see
// Block.Commands), which together name exactly one block.
type Ref struct {
	File, FirstLine string
}

func (r Ref) String() string { return fmt.Sprintf("%s: %q", r.File, r.FirstLine) }

// The blocks the end-to-end suite runs, in the order it runs them.
var (
	// AdoptCRD is the chart README's first way to take over a
	// ClusterProfile CRD that exists without Helm's metadata (one OCM's
	// operator installed), before the install.
	AdoptCRD = Ref{"charts/clusterprofile-manager/README.md", "kubectl label crd"}
	// InstallFromClone is the README's install from a clone of the
	// repository.
	InstallFromClone = Ref{"README.md", "helm install clusterprofile-manager charts/clusterprofile-manager -n open-cluster-management --set"}
	// Check is install.md's check after an install.
	Check = Ref{"docs/install.md", "kubectl get clusterprofiles -A"}
	// NameClashEvents and MirrorGates are runbook commands
	// (operations.md) that read what the installed bundle reports.
	NameClashEvents = Ref{"docs/operations.md", "kubectl get events -A --field-selector"}
	MirrorGates     = Ref{"docs/operations.md", "kubectl get clustermanagers"}
	// SyncerOff is the chart README's turning the syncer off and revoking
	// its copies.
	SyncerOff = Ref{"charts/clusterprofile-manager/README.md", "helm upgrade clusterprofile-manager charts/clusterprofile-manager -n open-cluster-management --reuse-values --set featureGates.clusterProfileCredSyncer=false"}
	// InstallFromRelease is the README's install from the release's
	// registry (install.md has the same).
	InstallFromRelease = Ref{"README.md", "helm install clusterprofile-manager oci://"}
	// Uninstall is install.md's uninstall.
	Uninstall = Ref{"docs/install.md", "helm upgrade clusterprofile-manager charts/clusterprofile-manager -n open-cluster-management --reuse-values --set featureGates.clusterProfile=false"}
)

// OCMMirrorGate is install.md's turning OCM's mirror off in the
// ClusterManager (moving from OCM's guide); with "Enable" for "Disable" it
// turns it on again (the way back). test/e2e's
// TestUpstreamWritersAndTheBundleHandOverInPlace types it both ways.
var OCMMirrorGate = Ref{"docs/install.md", "kubectl get clustermanager cluster-manager"}

// MoveInstall is install.md's install beside upstream's writers (moving
// from OCM's guide, step 1), which test/e2e's
// TestUpstreamWritersAndTheBundleHandOverInPlace types.
var MoveInstall = Ref{"docs/install.md", "helm install clusterprofile-manager charts/clusterprofile-manager -n open-cluster-management --set installCRD=false"}

// ScopeManagedServiceAccount is install.md's scoping of a
// ManagedServiceAccount (moving from OCM's guide, step 3), which test/e2e's
// TestTheMultiKueueRecipeAdmitsOnAWorkerWithEachKueue types before the
// recipe scopes the same ManagedServiceAccounts.
var ScopeManagedServiceAccount = Ref{"docs/install.md", "kubectl -n cluster1 annotate managedserviceaccount"}

// The MultiKueue recipe's steps that test/e2e's
// TestTheMultiKueueRecipeAdmitsOnAWorkerWithEachKueue types (consumers.md).
var (
	MultiKueuePublish = Ref{"docs/consumers.md", "kubectl apply -f docs/examples/multikueue/clusterset.yaml"}
	// MultiKueueWorker runs on each worker, its name for <worker>.
	MultiKueueWorker    = Ref{"docs/consumers.md", "kubectl --context <worker> apply -f docs/examples/multikueue/"}
	MultiKueueConfigure = Ref{"docs/consumers.md", "kubectl apply --server-side --force-conflicts -f docs/examples/multikueue/"}
	MultiKueueObjects   = Ref{"docs/consumers.md", "kubectl apply -f docs/examples/multikueue/multikueue.yaml"}
	MultiKueueJob       = Ref{"docs/consumers.md", "kubectl create -f docs/examples/multikueue/job.yaml"}
)

// Setup B (the chart README's): OCM's mirror with the chart's access
// provider and syncer, installed, and uninstalled as install.md says, which
// test/e2e's TestSetupBOCMsMirrorWithTheBundlesEntriesAndCopies types.
var (
	SetupBInstall   = Ref{"charts/clusterprofile-manager/README.md", "helm install clusterprofile-manager charts/clusterprofile-manager -n open-cluster-management --set installCRD=false"}
	SetupBUninstall = Ref{"docs/install.md", "helm upgrade clusterprofile-manager charts/clusterprofile-manager -n open-cluster-management --reuse-values --set featureGates.clusterProfileAccessProvider=false"}
)

// PlacementDecisionSlices is consumers.md's listing of a Placement's
// slices, which test/e2e's TestPlacementDecisionsReferenceThePublishedProfiles
// types with its namespace and Placement.
var PlacementDecisionSlices = Ref{"docs/consumers.md", "kubectl get placementdecisions.multicluster.x-k8s.io"}

// Demo is the README's first command, which test/demo types in a copy of
// the working tree.
var Demo = Ref{"README.md", "make demo"}

// Run are the blocks a test types: the end-to-end suite, and test/demo
// for Demo.
var Run = []Ref{AdoptCRD, InstallFromClone, Check, NameClashEvents, MirrorGates, SyncerOff, Uninstall, InstallFromRelease, OCMMirrorGate, MoveInstall,
	ScopeManagedServiceAccount, MultiKueuePublish, MultiKueueWorker, MultiKueueConfigure, MultiKueueObjects, MultiKueueJob, PlacementDecisionSlices,
	SetupBInstall, SetupBUninstall, Demo}

// Reasons a block is not run as written.
const (
	placeholders = "it holds placeholders (<...>, [...], ...) a user fills in; test/docs' TestEveryKubectlCommandParses parses its kubectl commands"
	podLogs      = "the local OCM's kubelet serves no pod logs; test/docs' TestEveryKubectlCommandParses parses it with kubectl's own " +
		"command tree, and test/chart's TestDocsNameTheObjectsTheChartRenders checks the names it uses"
	takeOverCRD       = placeholders + "; test/chart's TestHelmInstallUpgradesAnOlderCRD runs each way to take the CRD over with Helm's library"
	renderedManifests = "the manifests are the chart rendered with the documented install's values " +
		"(test/chart's TestPlainManifestsAreUpToDate), and the suite installs that chart"
)

// AddOnGatesOff is install.md's turning cluster-proxy's and
// managed-serviceaccount's writers off in their charts' values (moving from
// OCM's guide); the local OCM runs those add-ons without Helm, so test/docs
// checks it against their charts instead.
var AddOnGatesOff = Ref{"docs/install.md", "helm upgrade cluster-proxy ocm/cluster-proxy"}

// NotRun are the blocks no test runs as written, each with the reason and
// what checks it instead. A block whose every command is a command of a
// block in Run counts as run.
var NotRun = map[Ref]string{
	{"docs/install.md", "kubectl apply --server-side -f manifests/"}: renderedManifests,
	AddOnGatesOff: "the local OCM runs the add-ons' managers without Helm (the end-to-end suite sets the same gates on their " +
		"Deployments); test/docs' TestTheAddOnsHelmUpgradesTurnTheirWritersOff renders each add-on's own chart at the tested " +
		"version with OCM's guide's values and these, each way",
	{"charts/clusterprofile-manager/README.md", "kubectl apply --server-side -f manifests/"}: renderedManifests,
	{"docs/consumers.md", "kubectl -n argocd patch statefulset"}: "hack/argocd's TestDocsPatchesMountCpCredsInArgoCD applies these patch files " +
		"as kubectl patch does, to Argo CD's own install.yaml on a real API server",
	{"charts/clusterprofile-manager/README.md", "kubectl apply --server-side --force-conflicts"}:                         takeOverCRD,
	{"docs/consumers.md", "kubectl clusterprofile doctor"}:                                                               placeholders,
	{"docs/operations.md", "kubectl get csr"}:                                                                            placeholders,
	{"docs/operations.md", "kubectl -n open-cluster-management logs deploy/clusterprofile-manager --since=1h | grep -i"}: podLogs,
	{"docs/operations.md", "kubectl -n open-cluster-management logs deploy/clusterprofile-manager --since=1h | grep '"}:  podLogs,
	{"docs/operations.md", "kubectl -n open-cluster-management logs deploy/clusterprofile-manager | grep 'Waiting"}:      podLogs,
	{"docs/operations.md", "kubectl -n open-cluster-management logs deploy/clusterprofile-manager | grep 'admission"}:    podLogs,
}

// NotTyped are the commands of the blocks in Run that the suite does not
// type, by their start, each with the reason and what checks it instead.
var NotTyped = map[string]string{
	"make test ": "it is CI's test command, which .ci/run runs on a clean clone; the tests it runs type the other commands",
	"helm test ": "the local OCM's kubelet runs Deployments, not the test hook's Pod; " +
		"test/chart's TestHelmTestPassesOnAWorkingInstall runs the hook's check against an installed chart",
}

// Typed tells whether the suite types command, and if not, why.
func Typed(command string) (bool, string) {
	for prefix, why := range NotTyped {
		if strings.HasPrefix(command, prefix) {
			return false, why
		}
	}
	return true, ""
}

// Block is one fenced code block.
type Block struct {
	File string
	// Line is the line of the opening fence.
	Line int
	Lang string
	Text string
}

var fence = regexp.MustCompile("(?ms)^( *)```([a-z]*)\n(.*?)^ *```")

// Blocks are the fenced blocks of file (relative to root), de-indented.
func Blocks(root, file string) ([]Block, error) {
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	text := string(data)
	var blocks []Block
	for _, m := range fence.FindAllStringSubmatchIndex(text, -1) {
		indent := text[m[2]:m[3]]
		var lines []string
		for _, line := range strings.SplitAfter(text[m[6]:m[7]], "\n") {
			lines = append(lines, strings.TrimPrefix(line, indent))
		}
		blocks = append(blocks, Block{File: file, Line: strings.Count(text[:m[0]], "\n") + 1,
			Lang: text[m[4]:m[5]], Text: strings.Join(lines, "")})
	}
	return blocks, nil
}

// Find returns the one block ref names.
func Find(root string, ref Ref) (Block, error) {
	blocks, err := Blocks(root, ref.File)
	if err != nil {
		return Block{}, err
	}
	var found []Block
	for _, b := range blocks {
		if commands := b.Commands(); len(commands) > 0 && strings.HasPrefix(commands[0], ref.FirstLine) {
			found = append(found, b)
		}
	}
	if len(found) != 1 {
		return Block{}, fmt.Errorf("%s names %d blocks, not one", ref, len(found))
	}
	return found[0], nil
}

// Commands splits a shell block into its commands: backslash-continued
// lines joined, runs of blanks made one, blank lines and comment lines left
// out. A trailing comment stays with its command (see WaitUntilEmpty).
func (b Block) Commands() []string {
	var commands []string
	current := ""
	for _, line := range strings.Split(b.Text, "\n") {
		trimmed := strings.TrimSpace(line)
		if current == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			current += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		commands = append(commands, strings.Join(strings.Fields(current+trimmed), " "))
		current = ""
	}
	return commands
}

// waitComment marks a command the docs tell the user to repeat until it
// lists nothing.
const waitComment = "# wait until empty"

// WaitUntilEmpty tells whether the docs tell the user to repeat command
// until it lists nothing, and returns the command without that comment.
func WaitUntilEmpty(command string) (string, bool) {
	before, _, found := strings.Cut(command, waitComment)
	return strings.TrimSpace(before), found
}
