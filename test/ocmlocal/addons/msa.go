//go:build linux

package addons

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

const (
	// MSA is managed-serviceaccount's addon name.
	MSA = "managed-serviceaccount"
	// msaImage is the image managed-serviceaccount v0.10.0's chart uses for
	// its manager and agent (the hub kubelet runs bin/ocm/msa for it).
	msaImage = "quay.io/open-cluster-management/managed-serviceaccount:v0.10.0"
)

// StartManagedServiceAccount runs the addon's hub manager as its chart does
// (the Deployment managed-serviceaccount-addon-manager, Deployment mode, on
// the hub kubelet) and enables the addon on every cluster.
func (a *Addons) StartManagedServiceAccount(ctx context.Context) error {
	start := time.Now()
	hub, err := a.hubClient()
	if err != nil {
		return err
	}
	cma := &addonv1beta1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: MSA},
		Spec: addonv1beta1.ClusterManagementAddOnSpec{
			AddOnMeta:       addonv1beta1.AddOnMeta{DisplayName: MSA, Description: MSA},
			InstallStrategy: addonv1beta1.InstallStrategy{Type: addonv1beta1.AddonInstallStrategyManual},
		},
	}
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hubNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: MSA, Namespace: hubNamespace}},
		clusterAdminBinding("ocmlocal:"+MSA, MSA),
		cma,
		msaManagerDeployment(),
	}
	for _, obj := range objects {
		if err := client.IgnoreAlreadyExists(hub.Create(ctx, obj)); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	if err := a.EnableAddon(ctx, MSA, InstallNamespace); err != nil {
		return err
	}
	if err := a.WaitAvailable(ctx, MSA); err != nil {
		return err
	}
	a.Progress("managed-serviceaccount available on %d clusters in %s", len(a.Clusters), process.Since(start))
	return nil
}

// MSAManagerDeployment is the managed-serviceaccount chart's hub manager
// Deployment (in namespace open-cluster-management-addon); its
// --feature-gates turn that addon's own ClusterProfile syncer on.
const MSAManagerDeployment = "managed-serviceaccount-addon-manager"

// msaManagerDeployment is the chart's manager Deployment.
func msaManagerDeployment() *appsv1.Deployment {
	return addonHubDeployment(MSA, MSAManagerDeployment, corev1.Container{
		Name: "manager", Image: msaImage, Command: []string{"/msa", "manager"},
		Args: []string{"--deploy-mode=Deployment", "--agent-image-name=" + msaImage,
			// Fixed ports by default (:38080, :38081), which pods on the
			// hub share; not needed here.
			"--metrics-bind-address=0", "--health-probe-bind-address=0"},
		Env: []corev1.EnvVar{{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}},
	})
}
