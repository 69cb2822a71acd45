//go:build linux

// Package addons installs OCM's addons on the harness's hub as their
// charts do, and enables them on the managed clusters as `clusteradm addon
// enable` does: managed-serviceaccount (its hub manager) and cluster-proxy
// (its manager, the ANP proxy-server and the user server, reached on host
// ports since there are no Services here). Their agents reach the clusters
// through the ManifestWorks OCM's addon manager writes, and the clusters'
// kubelets run them.
package addons

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/kubelet"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

const (
	// InstallNamespace is where addon agents run on managed clusters
	// (what `clusteradm addon enable` picks by default).
	InstallNamespace = "open-cluster-management-agent-addon"
	// hubNamespace is where the addons' hub parts live (their charts'
	// release namespace).
	hubNamespace = "open-cluster-management-addon"
)

// Addons installs and enables the addons on a hub.
type Addons struct {
	// Hub is the hub's control plane, and HubKubelet its kubelet.
	Hub        *controlplane.ControlPlane
	HubKubelet *kubelet.Kubelet
	// Clusters are the managed clusters' names.
	Clusters []string
	// Proxy is cluster-proxy's user server, once it runs.
	Proxy *UserServer
	// Progress receives one line per step.
	Progress func(format string, args ...any)
}

// hubClient is an admin client of the hub with the Kubernetes, OCM and
// ClusterProfile types registered.
func (a *Addons) hubClient() (client.Client, error) {
	return client.New(a.Hub.Config, client.Options{Scheme: scheme.New()})
}

// EnableAddon creates the addon's ManagedClusterAddOn in every cluster
// namespace, as `clusteradm addon enable --names <addon>` does.
func (a *Addons) EnableAddon(ctx context.Context, addon, installNamespace string) error {
	for _, c := range a.Clusters {
		if err := a.EnableAddonOn(ctx, addon, installNamespace, c); err != nil {
			return err
		}
	}
	return nil
}

// EnableAddonOn creates the addon's ManagedClusterAddOn in one cluster
// namespace, as `clusteradm addon enable --names <addon> --clusters
// <cluster>` does. One that exists is kept; one still being deleted is an
// error, since it would soon be gone.
func (a *Addons) EnableAddonOn(ctx context.Context, addon, installNamespace, cluster string) error {
	hub, err := a.hubClient()
	if err != nil {
		return err
	}
	mca := &addonv1beta1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Name: addon, Namespace: cluster,
		// v1beta1 has no installNamespace field; the annotation carries it
		// (the conversion webhook maps v1alpha1's spec.installNamespace to it).
		Annotations: map[string]string{addonv1beta1.InstallNamespaceAnnotation: installNamespace}}}
	err = hub.Create(ctx, mca)
	if apierrors.IsAlreadyExists(err) {
		// One being deleted would be gone once its finalizers are done.
		existing := &addonv1beta1.ManagedClusterAddOn{}
		if err := hub.Get(ctx, client.ObjectKeyFromObject(mca), existing); err != nil {
			return fmt.Errorf("enabling addon %s on %s: %w", addon, cluster, err)
		}
		if existing.DeletionTimestamp != nil {
			return fmt.Errorf("enabling addon %s on %s: its ManagedClusterAddOn is still being deleted", addon, cluster)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("enabling addon %s on %s: %w", addon, cluster, err)
	}
	return nil
}

// WaitAvailable waits until the addon is Available on every cluster.
func (a *Addons) WaitAvailable(ctx context.Context, addon string) error {
	hub, err := a.hubClient()
	if err != nil {
		return err
	}
	for _, c := range a.Clusters {
		err := process.Poll(ctx, 3*time.Minute, nil, func(ctx context.Context) (bool, error) {
			mca := &addonv1beta1.ManagedClusterAddOn{}
			if err := hub.Get(ctx, types.NamespacedName{Namespace: c, Name: addon}, mca); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1beta1.ManagedClusterAddOnConditionAvailable), nil
		})
		if err != nil {
			return fmt.Errorf("addon %s on %s not available: %w", addon, c, err)
		}
	}
	return nil
}

// addonHubDeployment is one of an addon chart's hub Deployments in
// open-cluster-management-addon, run as the chart's ServiceAccount (named
// after the addon).
func addonHubDeployment(addon, name string, containers ...corev1.Container) *appsv1.Deployment {
	labels := map[string]string{"open-cluster-management.io/addon": addon, "component": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: hubNamespace},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{ServiceAccountName: addon, Containers: containers},
			},
		},
	}
}

// SetManagerFeatureGates sets an addon manager Deployment's
// --feature-gates (in namespace open-cluster-management-addon), as
// upgrading its chart with featureGates.<gate> does: e.g.
// ("cluster-proxy-addon-manager", {"ClusterProfileAccessProvider": true})
// or (MSAManagerDeployment, {"ClusterProfileCredSyncer": true}). An empty
// map removes the flag. It returns once the hub kubelet runs the new
// template.
func (a *Addons) SetManagerFeatureGates(ctx context.Context, deployment string, gates map[string]bool) error {
	hub, err := a.hubClient()
	if err != nil {
		return err
	}
	d := &appsv1.Deployment{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: hubNamespace, Name: deployment}, d); err != nil {
		return fmt.Errorf("reading Deployment %s: %w", deployment, err)
	}
	c := &d.Spec.Template.Spec.Containers[0]
	c.Args = withFeatureGates(c.Args, gates)
	if err := hub.Update(ctx, d); err != nil {
		return fmt.Errorf("updating Deployment %s: %w", deployment, err)
	}
	err = process.Poll(ctx, 2*time.Minute, nil, func(context.Context) (bool, error) {
		p := a.HubKubelet.Running(hubNamespace, deployment)
		return p != nil && p.Runs(d), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the hub kubelet to run %s with %v: %w", deployment, gates, err)
	}
	a.Progress("%s runs with feature gates %v", deployment, gates)
	return nil
}

// withFeatureGates replaces any --feature-gates in args by one listing
// gates (in name order), or by none when gates is empty.
func withFeatureGates(args []string, gates map[string]bool) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--feature-gates=") {
			out = append(out, a)
		}
	}
	if len(gates) == 0 {
		return out
	}
	names := make([]string, 0, len(gates))
	for name := range gates {
		names = append(names, name)
	}
	sort.Strings(names)
	pairs := make([]string, len(names))
	for i, name := range names {
		pairs[i] = name + "=" + strconv.FormatBool(gates[name])
	}
	return append(out, "--feature-gates="+strings.Join(pairs, ","))
}
