//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

const (
	msaAddon = "managed-serviceaccount"
	// msaImage is the image managed-serviceaccount v0.10.0's chart uses for
	// its manager and agent (the hub kubelet runs bin/ocm/msa for it).
	msaImage = "quay.io/open-cluster-management/managed-serviceaccount:v0.10.0"
	// addonInstallNamespace is where addon agents run on managed clusters
	// (what `clusteradm addon enable` picks by default).
	addonInstallNamespace = "open-cluster-management-agent-addon"
	// addonHubNamespace is where the addons' hub parts live (their charts'
	// release namespace).
	addonHubNamespace = "open-cluster-management-addon"
)

// startAddons starts each addon's hub side and enables
// the addon on every cluster as `clusteradm addon enable` does. The addons
// come up side by side: most of their start-up is waiting for the addon
// lease to be seen.
func (e *Env) startAddons(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	if e.opts.ClusterProxy {
		g.Go(func() error { return e.startClusterProxy(gctx) })
	}
	if e.opts.ManagedServiceAccount {
		g.Go(func() error { return e.startManagedServiceAccount(gctx) })
	}
	return g.Wait()
}

// startManagedServiceAccount runs the addon's hub manager as its chart does
// (the Deployment managed-serviceaccount-addon-manager, Deployment mode, on
// the hub kubelet) and enables the addon on every cluster.
func (e *Env) startManagedServiceAccount(ctx context.Context) error {
	start := time.Now()
	hub, err := e.hubClient()
	if err != nil {
		return err
	}
	cma := &addonv1beta1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: msaAddon},
		Spec: addonv1beta1.ClusterManagementAddOnSpec{
			AddOnMeta:       addonv1beta1.AddOnMeta{DisplayName: msaAddon, Description: msaAddon},
			InstallStrategy: addonv1beta1.InstallStrategy{Type: addonv1beta1.AddonInstallStrategyManual},
		},
	}
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addonHubNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: msaAddon, Namespace: addonHubNamespace}},
		clusterAdminBinding("ocmlocal:"+msaAddon, msaAddon),
		cma,
		msaManagerDeployment(),
	}
	for _, obj := range objects {
		if err := client.IgnoreAlreadyExists(hub.Create(ctx, obj)); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	if err := e.EnableAddon(ctx, msaAddon, addonInstallNamespace); err != nil {
		return err
	}
	if err := e.waitAddonsAvailable(ctx, msaAddon); err != nil {
		return err
	}
	e.progressf("managed-serviceaccount available on %d clusters in %s", len(e.Clusters), process.Since(start))
	return nil
}

// EnableAddon creates the addon's ManagedClusterAddOn in every cluster
// namespace, as `clusteradm addon enable --names <addon>` does.
func (e *Env) EnableAddon(ctx context.Context, addon, installNamespace string) error {
	for _, c := range e.Clusters {
		if err := e.EnableAddonOn(ctx, addon, installNamespace, c.Name); err != nil {
			return err
		}
	}
	return nil
}

// WaitAddonAvailable waits until the addon is Available on every cluster.
func (e *Env) WaitAddonAvailable(ctx context.Context, addon string) error {
	return e.waitAddonsAvailable(ctx, addon)
}

func (e *Env) waitAddonsAvailable(ctx context.Context, addon string) error {
	hub, err := e.hubClient()
	if err != nil {
		return err
	}
	for _, c := range e.Clusters {
		err := process.Poll(ctx, 3*time.Minute, nil, func(ctx context.Context) (bool, error) {
			mca := &addonv1beta1.ManagedClusterAddOn{}
			if err := hub.Get(ctx, types.NamespacedName{Namespace: c.Name, Name: addon}, mca); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1beta1.ManagedClusterAddOnConditionAvailable), nil
		})
		if err != nil {
			return fmt.Errorf("addon %s on %s not available: %w", addon, c.Name, err)
		}
	}
	return nil
}

// MSAManagerDeployment is the managed-serviceaccount chart's hub manager
// Deployment (in namespace open-cluster-management-addon); its
// --feature-gates turn that addon's own ClusterProfile syncer on.
const MSAManagerDeployment = "managed-serviceaccount-addon-manager"

// msaManagerDeployment is the chart's manager Deployment.
func msaManagerDeployment() *appsv1.Deployment {
	return addonHubDeployment(msaAddon, MSAManagerDeployment, corev1.Container{
		Name: "manager", Image: msaImage, Command: []string{"/msa", "manager"},
		Args: []string{"--deploy-mode=Deployment", "--agent-image-name=" + msaImage,
			// Fixed ports by default (:38080, :38081), which pods on the
			// hub share; not needed here.
			"--metrics-bind-address=0", "--health-probe-bind-address=0"},
		Env: []corev1.EnvVar{{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}},
	})
}

// addonHubDeployment is one of an addon chart's hub Deployments in
// open-cluster-management-addon, run as the chart's ServiceAccount (named
// after the addon).
func addonHubDeployment(addon, name string, containers ...corev1.Container) *appsv1.Deployment {
	labels := map[string]string{"open-cluster-management.io/addon": addon, "component": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: addonHubNamespace},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{ServiceAccountName: addon, Containers: containers},
			},
		},
	}
}

// SetAddonManagerFeatureGates sets an addon manager Deployment's
// --feature-gates (in namespace open-cluster-management-addon), as
// upgrading its chart with featureGates.<gate> does: e.g.
// ("cluster-proxy-addon-manager", {"ClusterProfileAccessProvider": true})
// or (MSAManagerDeployment, {"ClusterProfileCredSyncer": true}). An empty
// map removes the flag. It returns once the hub kubelet runs the new
// template.
func (e *Env) SetAddonManagerFeatureGates(ctx context.Context, deployment string, gates map[string]bool) error {
	hub, err := e.hubClient()
	if err != nil {
		return err
	}
	d := &appsv1.Deployment{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: addonHubNamespace, Name: deployment}, d); err != nil {
		return fmt.Errorf("reading Deployment %s: %w", deployment, err)
	}
	c := &d.Spec.Template.Spec.Containers[0]
	c.Args = withFeatureGates(c.Args, gates)
	if err := hub.Update(ctx, d); err != nil {
		return fmt.Errorf("updating Deployment %s: %w", deployment, err)
	}
	err = process.Poll(ctx, 2*time.Minute, nil, func(context.Context) (bool, error) {
		p := e.kubeletOf(e.Hub).Running(addonHubNamespace, deployment)
		return p != nil && p.Runs(d), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the hub kubelet to run %s with %v: %w", deployment, gates, err)
	}
	e.progressf("%s runs with feature gates %v", deployment, gates)
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
