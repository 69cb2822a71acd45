package docs_test

import (
	"fmt"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"

	"open-cluster-management.io/clusterprofile-bundle/test/docsrun"
)

// TestEveryCommandAUserCopiesIsRunOrExcused: every shell block of the user
// docs is one the end-to-end suite types (docsrun.Run), one whose commands
// all appear in such a block, or one docsrun.NotRun names with the reason
// and what checks it instead; every entry names exactly one block. A
// command the docs add or change therefore has a test or a stated reason.
func TestEveryCommandAUserCopiesIsRunOrExcused(t *testing.T) {
	root := repoRoot(t)
	typed := sets.New[string]()
	for _, ref := range docsrun.Run {
		block, err := docsrun.Find(root, ref)
		if err != nil {
			t.Errorf("Run: %v", err)
			continue
		}
		typed.Insert(block.Commands()...)
	}
	excused := map[string]bool{}
	for ref := range docsrun.NotRun {
		block, err := docsrun.Find(root, ref)
		if err != nil {
			t.Errorf("NotRun: %v", err)
			continue
		}
		excused[key(block)] = true
	}
	var uncovered []string
	for _, file := range docsrun.UserDocs {
		blocks, err := docsrun.Blocks(root, file)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if b.Lang != "sh" || excused[key(b)] || typed.HasAll(b.Commands()...) {
				continue
			}
			uncovered = append(uncovered, key(b))
		}
	}
	sort.Strings(uncovered)
	for _, b := range uncovered {
		t.Errorf("%s: a shell block no test runs: add it to docsrun.Run and type it in test/e2e, or to docsrun.NotRun with the reason", b)
	}
}

func key(b docsrun.Block) string { return fmt.Sprintf("%s:%d", b.File, b.Line) }
