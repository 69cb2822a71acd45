package addon

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"open-cluster-management.io/addon-framework/pkg/addonmanager"
	addonapiv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
)

// Options are the agent settings every managed cluster gets. Per-cluster
// overrides go through the addon-framework's usual channels
// (AddOnDeploymentConfig: node placement, image registries).
type Options struct {
	// Image is the bundle image holding /clusterprofile-agent.
	Image string
	// Period is how often the agent probes (hub writes are at most one per 30 s).
	Period time.Duration
	// LeaseStaleAfter is when a control plane leader Lease counts as stale.
	LeaseStaleAfter time.Duration
	// UnhealthyNodeTolerance is how many unhealthy nodes AllNodesHealthy tolerates.
	UnhealthyNodeTolerance int
	// Facts is the write budget of the agent's claims, the mirror's too.
	Facts damping.Rule
}

// Capability is the agent addon as the manager starts it (gate
// ClusterProfileAgent). It needs OCM's addon and work APIs; it publishes
// nothing on the hub that outlives it (addon-framework owns the
// ManifestWorks, and OCM removes them with the addon).
func Capability(opts Options) capability.Capability {
	return capability.Capability{
		Name: "agent addon",
		Gate: features.ClusterProfileAgent,
		Requires: []schema.GroupVersionKind{
			schema.GroupVersion(addonapiv1beta1.GroupVersion).WithKind("ClusterManagementAddOn"),
			schema.GroupVersion(addonapiv1beta1.GroupVersion).WithKind("ManagedClusterAddOn"),
			schema.GroupVersion(workv1.GroupVersion).WithKind("ManifestWork"),
		},
		Setup: func(ctx context.Context, mgr ctrl.Manager, _ capability.Gates) error { return Setup(ctx, mgr, opts) },
	}
}

// Setup runs the addon manager for the agent beside the other controllers,
// after leader election like them.
func Setup(_ context.Context, mgr ctrl.Manager, opts Options) error {
	cfg := rest.CopyConfig(mgr.GetConfig())
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	addonClient, err := addonclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	agentAddon, err := NewAgentAddon(kubeClient, addonClient, opts)
	if err != nil {
		return fmt.Errorf("building the %s addon: %w", agentapi.AddonName, err)
	}
	addonManager, err := addonmanager.New(cfg)
	if err != nil {
		return err
	}
	if err := addonManager.AddAgent(agentAddon); err != nil {
		return fmt.Errorf("registering the %s addon: %w", agentapi.AddonName, err)
	}
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if err := addonManager.Start(ctx); err != nil {
			return fmt.Errorf("starting the addon manager: %w", err)
		}
		<-ctx.Done()
		return nil
	}))
}
