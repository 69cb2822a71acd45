package docs_test

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"k8s.io/kubectl/pkg/cmd"

	"open-cluster-management.io/clusterprofile-bundle/test/docsrun"
)

// placeholder is a <...> a user fills in, which bash would read as a
// redirection.
var placeholder = regexp.MustCompile(`<[^<>|]*>`)

// shellStages splits a command line into the commands of its pipes, lists
// and loops.
var shellStages = regexp.MustCompile(` \| |; | && `)

// TestEveryKubectlCommandParses: every kubectl command in a shell block of
// the user docs, the runbooks' among them (which the end-to-end suite
// cannot all type: the local OCM serves no pod logs), names a kubectl
// command and flags that kubectl itself (its own command tree, at this
// module's version) accepts. Words are split by bash, placeholders filled
// in; commands of the kubectl-clusterprofile plugin are left to its tests.
func TestEveryKubectlCommandParses(t *testing.T) {
	root := repoRoot(t)
	checked := 0
	for _, file := range docsrun.UserDocs {
		blocks, err := docsrun.Blocks(root, file)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if b.Lang != "sh" {
				continue
			}
			for _, command := range b.Commands() {
				for _, stage := range shellStages.Split(command, -1) {
					stage = strings.TrimPrefix(strings.TrimSpace(stage), "do ")
					if !strings.HasPrefix(stage, "kubectl ") || strings.HasPrefix(stage, "kubectl clusterprofile ") {
						continue
					}
					if err := kubectlParses(t, stage); err != nil {
						t.Errorf("%s:%d: %s: %v", b.File, b.Line, stage, err)
					}
					checked++
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no kubectl command found in the user docs")
	}
}

// kubectlParses splits command into words as bash does and parses them with
// kubectl's own command tree.
func kubectlParses(t *testing.T, command string) error {
	t.Helper()
	command, _ = docsrun.WaitUntilEmpty(command)
	command = placeholder.ReplaceAllString(command, "placeholder")
	out, err := exec.Command("bash", "-c", `set -f; for w in `+strings.TrimPrefix(command, "kubectl ")+`; do printf '%s\0' "$w"; done`).Output()
	if err != nil {
		t.Fatalf("bash splitting %q: %v", command, err)
	}
	args := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	kubectl := cmd.NewDefaultKubectlCommand()
	sub, rest, err := kubectl.Find(args)
	if err != nil {
		return err
	}
	if sub == kubectl {
		return fmt.Errorf("no kubectl command %s", args[0])
	}
	return sub.ParseFlags(rest)
}

// TestKubectlParsesRefusesMistakes: the check above fails on an unknown
// command or flag.
func TestKubectlParsesRefusesMistakes(t *testing.T) {
	for _, command := range []string{
		"kubectl get pods --no-such-flag",
		"kubectl frobnicate pods",
		"kubectl -n ns logs deploy/x --sinse=1h",
	} {
		if err := kubectlParses(t, command); err == nil {
			t.Errorf("%s: parsed", command)
		}
	}
	if err := kubectlParses(t, `kubectl get clustermanagers -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'`); err != nil {
		t.Errorf("a valid command: %v", err)
	}
}
