//go:build linux

package ocm

import (
	"context"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

const (
	// KlusterletNamespace is where the klusterlet agent runs and keeps its
	// hub kubeconfig Secret (hub-kubeconfig-secret) on the managed cluster.
	KlusterletNamespace = "open-cluster-management-agent"
	// KlusterletAgent is the Deployment the klusterlet operator creates in
	// Singleton mode: registration and work agents in one process.
	KlusterletAgent = "klusterlet-agent"
	// bootstrapSecret holds the bootstrap kubeconfig `clusteradm join`
	// writes (key kubeconfig).
	bootstrapSecret = "bootstrap-hub-kubeconfig"
	// clusterNameLabel is the label OCM puts on a cluster's CSRs.
	clusterNameLabel = "open-cluster-management.io/cluster-name"
)

// Register joins the cluster to the hub as `clusteradm join --singleton`
// does (the klusterlet operator, the bootstrap kubeconfig Secret and a
// Klusterlet; the cluster's kubelet runs the agent the operator deploys)
// and accepts it as `clusteradm accept` does.
func (h *Hub) Register(ctx context.Context, c *controlplane.ControlPlane) error {
	start := time.Now()
	if err := h.join(ctx, c); err != nil {
		return err
	}
	if err := h.accept(ctx, c); err != nil {
		return err
	}
	h.Progress("%s registered (klusterlet operator, CSR approved, accepted) in %s", c.Name, process.Since(start))
	if err := h.waitAvailable(ctx, c); err != nil {
		return err
	}
	h.Progress("%s available (lease and version reported by the klusterlet) after %s", c.Name, process.Since(start))
	return nil
}

// join installs the klusterlet operator, writes the bootstrap kubeconfig
// (a token of the hub's bootstrap service account) and creates the
// Klusterlet, in Singleton mode: one agent process per cluster, as
// `clusteradm join --singleton` asks. Its external server URL is the
// cluster's API server, which the hub records in the ManagedCluster.
func (h *Hub) join(ctx context.Context, c *controlplane.ControlPlane) error {
	if err := h.installOperator(ctx, c, "klusterlet"); err != nil {
		return err
	}
	cl, err := operatorClient(c)
	if err != nil {
		return err
	}
	kubeconfig, err := h.bootstrapKubeconfig(ctx)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KlusterletNamespace}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: bootstrapSecret, Namespace: KlusterletNamespace},
		Data: map[string][]byte{"kubeconfig": kubeconfig}}
	klusterlet := &operatorv1.Klusterlet{
		ObjectMeta: metav1.ObjectMeta{Name: "klusterlet"},
		Spec: operatorv1.KlusterletSpec{
			ClusterName:               c.Name,
			Namespace:                 KlusterletNamespace,
			RegistrationImagePullSpec: h.ocmImage("registration"),
			WorkImagePullSpec:         h.ocmImage("work"),
			ImagePullSpec:             h.ocmImage("registration-operator"),
			ExternalServerURLs:        []operatorv1.ServerURL{{URL: c.URL}},
			DeployOption:              operatorv1.KlusterletDeployOption{Mode: operatorv1.InstallModeSingleton},
			// The operator's default for one replica is 60s; tests want
			// status (of addon Deployments, for instance) sooner.
			WorkConfiguration: &operatorv1.WorkAgentConfiguration{StatusSyncInterval: &metav1.Duration{Duration: 10 * time.Second}},
		},
	}
	for _, obj := range []client.Object{ns, secret, klusterlet} {
		if err := client.IgnoreAlreadyExists(cl.Create(ctx, obj)); err != nil {
			return fmt.Errorf("joining %s: creating %T %s: %w", c.Name, obj, obj.GetName(), err)
		}
	}
	return nil
}

// bootstrapKubeconfig is the kubeconfig `clusteradm join` gets from `init`:
// the hub's address and CA, and a token of the bootstrap service account.
func (h *Hub) bootstrapKubeconfig(ctx context.Context) ([]byte, error) {
	hub, err := h.ControlPlane.Clientset()
	if err != nil {
		return nil, err
	}
	token, err := bootstrapToken(ctx, hub)
	if err != nil {
		return nil, err
	}
	return controlplane.KubeconfigBytes("hub", h.ControlPlane.URL, h.ControlPlane.CAData, func(u *clientcmdapi.AuthInfo) { u.Token = token })
}

// accept does what `clusteradm accept` does: approve the cluster's pending
// registration CSR and set hubAcceptsClient on its ManagedCluster.
func (h *Hub) accept(ctx context.Context, c *controlplane.ControlPlane) error {
	hub, err := h.ControlPlane.Clientset()
	if err != nil {
		return err
	}
	var csr *certificatesv1.CertificateSigningRequest
	err = process.Poll(ctx, 3*time.Minute, nil, func(ctx context.Context) (bool, error) {
		list, err := hub.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{LabelSelector: clusterNameLabel + "=" + c.Name})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		csr = &list.Items[len(list.Items)-1]
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the registration CSR of %s: %w", c.Name, err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "AcceptedByOCMLocal", Message: "approved as clusteradm accept does",
	})
	if _, err := hub.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("approving CSR %s of %s: %w", csr.Name, c.Name, err)
	}
	return h.acceptClient(ctx, hub, c)
}

func (h *Hub) acceptClient(ctx context.Context, hub kubernetes.Interface, c *controlplane.ControlPlane) error {
	patch := []byte(`{"spec":{"hubAcceptsClient":true}}`)
	err := process.Poll(ctx, time.Minute, nil, func(ctx context.Context) (bool, error) {
		err := hub.Discovery().RESTClient().Patch(types.MergePatchType).
			AbsPath("/apis/cluster.open-cluster-management.io/v1/managedclusters", c.Name).
			Body(patch).Do(ctx).Error()
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("accepting ManagedCluster %s: %w", c.Name, err)
	}
	return nil
}

// waitAvailable waits until the hub shows the cluster joined and available,
// with the Kubernetes version the klusterlet read from its API server.
func (h *Hub) waitAvailable(ctx context.Context, c *controlplane.ControlPlane) error {
	hub, err := client.New(h.ControlPlane.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	err = process.Poll(ctx, 2*time.Minute, nil, func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, types.NamespacedName{Name: c.Name}, mc); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) &&
			mc.Status.Version.Kubernetes != "", nil
	})
	if err != nil {
		return fmt.Errorf("waiting for ManagedCluster %s to be available: %w", c.Name, err)
	}
	return nil
}
