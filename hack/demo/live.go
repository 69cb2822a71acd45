package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
)

// showLiveChanges waits for the first profiles, shows them, then changes the
// fleet twice and shows how the profiles follow.
func (s *scenario) showLiveChanges(ctx context.Context, h *hub, mgr *managerProcess, opts options) error {
	if err := s.showInitialProfiles(ctx, h, mgr, opts.timeout); err != nil {
		return err
	}
	if err := s.clusterLeavesSet(ctx, h, mgr, opts.timeout); err != nil {
		return err
	}
	if err := s.clusterBecomesUnhealthy(ctx, h, mgr, opts.timeout); err != nil {
		return err
	}
	if opts.keep {
		return keepRunning(ctx, h, mgr)
	}
	fmt.Println("\nDemo complete. `make demo DEMO_ARGS=-keep` keeps it running for you to explore with kubectl.")
	return nil
}

func (s *scenario) showInitialProfiles(ctx context.Context, h *hub, mgr *managerProcess, timeout time.Duration) error {
	fmt.Println("\nWaiting for the manager to publish the ClusterProfiles...")
	if err := s.waitForConvergence(ctx, h, mgr, timeout, "the manager started"); err != nil {
		return err
	}
	c1 := s.clusters[0]
	fmt.Printf("    converged %s after the manager started (start-up included): %d profiles, as expected\n",
		since(mgr.started), len(s.profiles))
	fmt.Printf("    %s is in %s and in %s, both bound into %s: it gets one profile there, labelled with its own exclusive set\n",
		c1.name, s.gpu, s.prod, s.kueue)
	if err := showProfileTable(ctx, h); err != nil {
		return err
	}
	return showProfile(ctx, h, types.NamespacedName{Namespace: s.kueue, Name: c1.name})
}

// clusterLeavesSet takes cluster3 out of the gpu set: its only profile goes.
func (s *scenario) clusterLeavesSet(ctx context.Context, h *hub, mgr *managerProcess, timeout time.Duration) error {
	c3 := s.clusters[2]
	fmt.Printf("\n(a) %s leaves ManagedClusterSet %s: removing its label %s=%s\n",
		c3.name, s.gpu, clusterv1beta2.ClusterSetLabel, c3.exclusiveSet)
	changed := time.Now()
	err := updateCluster(ctx, h.client, c3.name, func(mc *clusterv1.ManagedCluster) {
		delete(mc.Labels, clusterv1beta2.ClusterSetLabel)
	})
	if err != nil {
		return err
	}
	c3.exclusiveSet = ""
	delete(s.profiles, types.NamespacedName{Namespace: s.kueue, Name: c3.name})
	if err := s.waitForConvergence(ctx, h, mgr, timeout, c3.name+" left "+s.gpu); err != nil {
		return err
	}
	fmt.Printf("    converged in %s: %s is in no bound set any more, so its profile is gone from %s\n", since(changed), c3.name, s.kueue)
	return showProfileTable(ctx, h)
}

// clusterBecomesUnhealthy has cluster2 report that its API server is down.
func (s *scenario) clusterBecomesUnhealthy(ctx context.Context, h *hub, mgr *managerProcess, timeout time.Duration) error {
	c2 := s.clusters[1]
	c2.available = metav1.Condition{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionFalse,
		Reason: "ManagedClusterKubeAPIServerUnavailable", Message: "The kube-apiserver is not ok, status code: 503",
	}
	fmt.Printf("\n(b) %s reports %s=False (%s)\n", c2.name, c2.available.Type, c2.available.Reason)
	changed := time.Now()
	err := updateClusterStatus(ctx, h.client, c2.name, func(mc *clusterv1.ManagedCluster) {
		meta.SetStatusCondition(&mc.Status.Conditions, c2.available) // stamps the transition time
	})
	if err != nil {
		return err
	}
	if err := s.waitForConvergence(ctx, h, mgr, timeout, c2.name+" became unavailable"); err != nil {
		return err
	}
	fmt.Printf("    converged in %s: %s is False on each of the %d profiles of %s\n",
		since(changed), cpv1alpha1.ClusterConditionControlPlaneHealthy, s.profileCount(c2.name), c2.name)
	return showConditions(ctx, h, c2.name)
}

func (s *scenario) profileCount(cluster string) int {
	n := 0
	for key := range s.profiles {
		if key.Name == cluster {
			n++
		}
	}
	return n
}

// keepRunning leaves the hub and the manager up until the user stops the demo.
func keepRunning(ctx context.Context, h *hub, mgr *managerProcess) error {
	fmt.Println("\nThe control plane and the manager keep running (-keep). In another shell:")
	if h.existing {
		fmt.Printf("    kubectl get clusterprofiles -A -l %s=%s\n", clusterprofile.LabelClusterManager, h.managerName)
	} else {
		fmt.Printf("    export KUBECONFIG=%s\n", h.kubeconfig)
		fmt.Println("    kubectl get clusterprofiles -A")
		fmt.Printf("    kubectl label managedcluster cluster3 %s=gpu   # cluster3 rejoins gpu\n", clusterv1beta2.ClusterSetLabel)
	}
	fmt.Println("    Nothing sets the Bound condition of new ManagedClusterSetBindings here; set it on their status yourself.")
	fmt.Printf("    The manager logs to %s.\n", displayPath(mgr.logPath))
	fmt.Println("Press Ctrl-C to stop.")
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-mgr.exited:
		return mgr.exitError()
	}
}
