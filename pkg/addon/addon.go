// Package addon registers the cluster-profile-agent with OCM's
// addon-framework: the manifests it deploys on every managed cluster
// (agentObjects), the hub identity of the agent and the little that identity
// may do, and the lease-based health prober.
package addon

import (
	"context"
	"fmt"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"open-cluster-management.io/addon-framework/pkg/addonfactory"
	"open-cluster-management.io/addon-framework/pkg/addonmanager/constants"
	"open-cluster-management.io/addon-framework/pkg/agent"
	"open-cluster-management.io/addon-framework/pkg/utils"
	addonapiv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	addonclient "open-cluster-management.io/api/client/addon/clientset/versioned"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
)

// DefaultOptions are the agent defaults.
func DefaultOptions(image string) Options {
	return Options{Image: image, Period: 30 * time.Second, LeaseStaleAfter: 60 * time.Second, Facts: damping.Default()}
}

// NewAgentAddon builds the addon: its Manifests build the agent's objects
// for one cluster, taking node placement and image registry overrides from
// the addon's AddOnDeploymentConfig, if any.
func NewAgentAddon(kubeClient kubernetes.Interface, addonClient addonclient.Interface, opts Options) (agent.AgentAddon, error) {
	return &agentAddon{
		opts:    opts,
		configs: utils.NewAddOnDeploymentConfigGetter(addonClient),
		options: agent.AgentAddonOptions{
			AddonName:           agentapi.AddonName,
			Registration:        registration(kubeClient),
			HealthProber:        &agent.HealthProber{Type: agent.HealthProberTypeLease},
			SupportedConfigGVRs: []schema.GroupVersionResource{utils.AddOnDeploymentConfigGVR},
			HostedModeInfoFunc:  constants.GetHostedModeInfo,
		},
	}, nil
}

// agentAddon is the agent as addon-framework deploys it. Its objects are
// built in Go (agentObjects), not rendered from templates as by
// addon-framework's addonfactory: that renders text/template, whose calls of
// methods by name keep every exported method of every type in the binary,
// and so the manager's code and resident memory larger
// (docs/performance.md, "What keeps memory down").
type agentAddon struct {
	opts    Options
	configs utils.AddOnDeploymentConfigGetter
	options agent.AgentAddonOptions
}

func (a *agentAddon) GetAgentAddonOptions() agent.AgentAddonOptions { return a.options }

// Manifests are the agent's objects on cluster, placed and pulled as the
// addon's AddOnDeploymentConfig says.
func (a *agentAddon) Manifests(_ context.Context, cluster *clusterv1.ManagedCluster,
	addon *addonapiv1beta1.ManagedClusterAddOn) ([]runtime.Object, error) {
	config, err := utils.GetDesiredAddOnDeploymentConfig(addon, a.configs)
	if err != nil {
		return nil, fmt.Errorf("reading the AddOnDeploymentConfig of %s/%s: %w", addon.Namespace, addon.Name, err)
	}
	return agentObjects(settingsFor(a.opts, cluster, addon, config)), nil
}

// settingsFor places the agent of cluster: in the install namespace the
// addon names (or the default), with the AddOnDeploymentConfig's node
// placement and image registry mirrors when there is one.
func settingsFor(opts Options, cluster *clusterv1.ManagedCluster, addon *addonapiv1beta1.ManagedClusterAddOn,
	config *addonapiv1beta1.AddOnDeploymentConfig) agentSettings {
	s := agentSettings{Options: opts, Cluster: cluster.Name, Namespace: agentapi.DefaultInstallNamespace}
	if ns := addon.Annotations[addonapiv1beta1.InstallNamespaceAnnotation]; ns != "" {
		s.Namespace = ns
	}
	if config == nil {
		return s
	}
	s.Image = addonfactory.OverrideImage(config.Spec.Registries, opts.Image)
	if placement := config.Spec.NodePlacement; placement != nil {
		s.NodeSelector, s.Tolerations = placement.NodeSelector, placement.Tolerations
	}
	return s
}

// registration gives the agent a hub identity (a client certificate signed
// through a CSR the hub approves for that cluster's agent only) and binds it,
// in its own cluster namespace, to a Role that allows exactly one thing:
// reporting on its own ManagedClusterAddOn.
func registration(kubeClient kubernetes.Interface) *agent.RegistrationOption {
	return &agent.RegistrationOption{
		Configurations:   agent.KubeClientSignerConfigurations(agentapi.AddonName, agentapi.AgentName),
		CSRApproveCheck:  utils.DefaultCSRApprover(agentapi.AgentName),
		PermissionConfig: bindHubRole(kubeClient),
	}
}

// bindHubRole binds HubRole, in the cluster's namespace, to that cluster's
// agent user only. addon-framework's BindKubeClientRole would bind the
// subjects listed in the addon's status.registrations instead: those include
// the group every cluster's agent shares (so one cluster's agent could report
// for all of them), and the agent itself may patch that status (so it could
// name anyone). The user here is derived from the cluster's name, which only
// the hub's admins control; it is the one the CSR approver checks.
func bindHubRole(kubeClient kubernetes.Interface) agent.PermissionConfigFunc {
	return func(ctx context.Context, cluster *clusterv1.ManagedCluster, addon *addonapiv1beta1.ManagedClusterAddOn) error {
		// A fresh Role each time: the builder sets its namespace in place.
		bind := utils.NewRBACPermissionConfigBuilder(kubeClient).BindRoleToUser(HubRole(), AgentUser(cluster.Name)).Build()
		return bind(ctx, cluster, addon)
	}
}

// AgentUser is the hub user of a cluster's agent: the subject of the client
// certificate its CSR asks for, and the only subject HubRole is bound to.
func AgentUser(cluster string) string {
	return agent.DefaultUser(cluster, agentapi.AddonName, agentapi.AgentName)
}

// HubRole is what the agent's hub identity may do in its cluster namespace:
// read and patch the status of its own ManagedClusterAddOn (the agent reads
// through the status subresource too).
func HubRole() *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:" + agentapi.AddonName + ":agent"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{addonapiv1beta1.GroupName}, Resources: []string{"managedclusteraddons/status"},
				ResourceNames: []string{agentapi.AddonName}, Verbs: []string{"get", "patch"}},
		},
	}
}
