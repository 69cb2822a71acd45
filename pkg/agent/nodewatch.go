package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
)

// minKickedRoundGap is the least time between a round and one that a node
// event asks for: a cluster scaling by hundreds of nodes costs one full node
// list per gap, not one per node.
const minKickedRoundGap = 5 * time.Second

// nodeWatchRetry is the pause before watching the nodes again after the
// watch failed; the periodic rounds go on meanwhile.
const nodeWatchRetry = 10 * time.Second

// watchNodes asks for a round (on a.kick) whenever a node joins, leaves, or
// changes its readiness or its capacity, so that those changes, which the
// agent's facts and AllNodesHealthy are made of, are reported without
// waiting for the period. It keeps only a summary of each node, not the
// nodes, and returns when ctx ends.
func (a *Agent) watchNodes(ctx context.Context) {
	seen := map[string]string{}
	for ctx.Err() == nil {
		err := a.watchNodesOnce(ctx, seen)
		if ctx.Err() != nil {
			return
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Watching nodes again after a pause; the periodic rounds go on", "reason", err, "pause", nodeWatchRetry.String())
		select {
		case <-ctx.Done():
			return
		case <-a.clock.After(nodeWatchRetry):
		}
	}
}

// watchNodesOnce watches from the current state until the watch ends.
func (a *Agent) watchNodesOnce(ctx context.Context, seen map[string]string) error {
	// One item is enough to learn where to start: the rounds list the nodes.
	current, err := a.managed.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	w, err := a.managed.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: current.ResourceVersion})
	if err != nil {
		return fmt.Errorf("watching nodes: %w", err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("the node watch ended")
			}
			if nodeEventMatters(seen, ev) {
				a.requestRound()
			}
		}
	}
}

// nodeEventMatters records ev in seen and tells whether it changes what a
// round observes: a node added or deleted, or one whose readiness or
// capacity differs from what was last seen of it. Heartbeats do not.
func nodeEventMatters(seen map[string]string, ev watch.Event) bool {
	node, ok := ev.Object.(*corev1.Node)
	if !ok {
		return false // a bookmark or an error, which ends the watch
	}
	summary := nodeSummary(node)
	switch ev.Type {
	case watch.Deleted:
		delete(seen, node.Name)
		return true
	case watch.Added, watch.Modified:
		before, known := seen[node.Name]
		seen[node.Name] = summary
		return !known || before != summary
	}
	return false
}

// nodeSummary is what a round reads of a node: its problems and the
// resources it sums.
func nodeSummary(node *corev1.Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v", nodeProblems(node))
	for _, name := range SummedResources {
		capacity, allocatable := node.Status.Capacity[name], node.Status.Allocatable[name]
		fmt.Fprintf(&b, " %s=%s/%s", name, capacity.String(), allocatable.String())
	}
	return b.String()
}

// requestRound asks the loop for a round; requests made before it runs
// one count once.
func (a *Agent) requestRound() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// holdUntil notes that something observed waits for a write budget until
// at, so that the loop runs a round then rather than at the next period.
func (a *Agent) holdUntil(at time.Time) {
	if a.heldUntil.IsZero() || at.Before(a.heldUntil) {
		a.heldUntil = at
	}
}
