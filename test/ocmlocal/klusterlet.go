//go:build linux

package ocmlocal

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"
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

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/controlplane"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/process"
)

const (
	// klusterletNamespace is where the klusterlet agent runs and keeps its
	// hub kubeconfig Secret (hub-kubeconfig-secret) on the managed cluster.
	klusterletNamespace = "open-cluster-management-agent"
	// klusterletAgent is the Deployment the klusterlet operator creates in
	// Singleton mode: registration and work agents in one process.
	klusterletAgent = "klusterlet-agent"
	// bootstrapSecret holds the bootstrap kubeconfig `clusteradm join`
	// writes (key kubeconfig).
	bootstrapSecret = "bootstrap-hub-kubeconfig"
	// clusterNameLabel is the label OCM puts on a cluster's CSRs.
	clusterNameLabel = "open-cluster-management.io/cluster-name"
)

func (e *Env) startClusters(ctx context.Context) error {
	e.Clusters = make([]*ManagedCluster, e.opts.Clusters)
	g, gctx := errgroup.WithContext(ctx)
	for i := range e.Clusters {
		g.Go(func() error {
			c, err := e.startManagedControlPlane(gctx, "cluster"+strconv.Itoa(i+1))
			e.Clusters[i] = c
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	g, gctx = errgroup.WithContext(ctx)
	for _, c := range e.Clusters {
		g.Go(func() error { return e.register(gctx, c) })
	}
	return g.Wait()
}

// startManagedControlPlane starts a managed cluster's control plane, with
// kube-controller-manager (default service accounts, root CA ConfigMaps,
// garbage collection and namespace deletion, as on any cluster), and its
// kubelet.
func (e *Env) startManagedControlPlane(ctx context.Context, name string) (*ManagedCluster, error) {
	cp, err := e.startControlPlane(ctx, name, true)
	if err != nil {
		return nil, err
	}
	if _, err := e.startKubelet(cp); err != nil {
		return nil, err
	}
	return &ManagedCluster{ControlPlane: cp}, nil
}

// register joins the cluster to the hub as `clusteradm join --singleton`
// does (the klusterlet operator, the bootstrap kubeconfig Secret and a
// Klusterlet; the kubelet runs the agent the operator deploys) and accepts
// it as `clusteradm accept` does.
func (e *Env) register(ctx context.Context, c *ManagedCluster) error {
	start := time.Now()
	if err := e.join(ctx, c); err != nil {
		return err
	}
	if err := e.accept(ctx, c); err != nil {
		return err
	}
	e.progressf("%s registered (klusterlet operator, CSR approved, accepted) in %s", c.Name, process.Since(start))
	if err := e.waitAvailable(ctx, c); err != nil {
		return err
	}
	e.progressf("%s available (lease and version reported by the klusterlet) after %s", c.Name, process.Since(start))
	return nil
}

// join installs the klusterlet operator, writes the bootstrap kubeconfig
// (a token of the hub's bootstrap service account) and creates the
// Klusterlet, in Singleton mode: one agent process per cluster, as
// `clusteradm join --singleton` asks. Its external server URL is the
// cluster's API server, which the hub records in the ManagedCluster.
func (e *Env) join(ctx context.Context, c *ManagedCluster) error {
	if err := e.installOperator(ctx, c.ControlPlane, "klusterlet"); err != nil {
		return err
	}
	cl, err := operatorClient(c.ControlPlane)
	if err != nil {
		return err
	}
	kubeconfig, err := e.bootstrapKubeconfig(ctx)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: klusterletNamespace}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: bootstrapSecret, Namespace: klusterletNamespace},
		Data: map[string][]byte{"kubeconfig": kubeconfig}}
	klusterlet := &operatorv1.Klusterlet{
		ObjectMeta: metav1.ObjectMeta{Name: "klusterlet"},
		Spec: operatorv1.KlusterletSpec{
			ClusterName:               c.Name,
			Namespace:                 klusterletNamespace,
			RegistrationImagePullSpec: e.ocmImage("registration"),
			WorkImagePullSpec:         e.ocmImage("work"),
			ImagePullSpec:             e.ocmImage("registration-operator"),
			ExternalServerURLs:        []operatorv1.ServerURL{{URL: c.URL}},
			DeployOption:              operatorv1.KlusterletDeployOption{Mode: operatorv1.InstallModeSingleton},
			// The operator's default for one replica is 60s; tests want
			// status (of addon Deployments, for instance) sooner.
			WorkConfiguration: &operatorv1.WorkAgentConfiguration{StatusSyncInterval: &metav1.Duration{Duration: 10 * time.Second}},
		},
	}
	for _, obj := range []client.Object{ns, secret, klusterlet} {
		if err := createIgnoringExists(obj, cl.Create(ctx, obj)); err != nil {
			return fmt.Errorf("joining %s: creating %T %s: %w", c.Name, obj, obj.GetName(), err)
		}
	}
	return nil
}

// bootstrapKubeconfig is the kubeconfig `clusteradm join` gets from `init`:
// the hub's address and CA, and a token of the bootstrap service account.
func (e *Env) bootstrapKubeconfig(ctx context.Context) ([]byte, error) {
	hub, err := e.Hub.Clientset()
	if err != nil {
		return nil, err
	}
	token, err := bootstrapToken(ctx, hub)
	if err != nil {
		return nil, err
	}
	return controlplane.KubeconfigBytes("hub", e.Hub.URL, e.Hub.CAData, func(u *clientcmdapi.AuthInfo) { u.Token = token })
}

// accept does what `clusteradm accept` does: approve the cluster's pending
// registration CSR and set hubAcceptsClient on its ManagedCluster.
func (e *Env) accept(ctx context.Context, c *ManagedCluster) error {
	hub, err := e.Hub.Clientset()
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
	return e.acceptClient(ctx, hub, c)
}

func (e *Env) acceptClient(ctx context.Context, hub kubernetes.Interface, c *ManagedCluster) error {
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
func (e *Env) waitAvailable(ctx context.Context, c *ManagedCluster) error {
	hub, err := e.hubClient()
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

// tlsReachable reports whether a TLS server trusted by caData answers at addr.
func tlsReachable(addr string, caData []byte) (bool, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caData)
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	if err != nil {
		return false, err
	}
	conn.Close()
	return true, nil
}

// StopKlusterlet stops a cluster's klusterlet agent, e.g. to see the hub
// notice through the lease that the cluster is gone: the cluster's kubelet
// stops the agent's pod and keeps it stopped, as if its node were down (the
// Deployment stays, so the operator has nothing to repair). Its addons keep
// running.
func (e *Env) StopKlusterlet(cluster string) error {
	c := e.Cluster(cluster)
	if c == nil {
		return fmt.Errorf("no managed cluster %s", cluster)
	}
	e.kubeletOf(c.ControlPlane).Hold(klusterletNamespace, klusterletAgent)
	e.progressf("%s klusterlet stopped", cluster)
	return nil
}

// StartKlusterlet lets the kubelet run the agent again (a new pod); it
// finds its hub kubeconfig in hub-kubeconfig-secret, so no new CSR is
// needed.
func (e *Env) StartKlusterlet(cluster string) error {
	c := e.Cluster(cluster)
	if c == nil {
		return fmt.Errorf("no managed cluster %s", cluster)
	}
	k := e.kubeletOf(c.ControlPlane)
	if !k.IsHeld(klusterletNamespace, klusterletAgent) {
		return fmt.Errorf("the klusterlet of %s is running", cluster)
	}
	k.Release(klusterletNamespace, klusterletAgent)
	e.progressf("%s klusterlet started again", cluster)
	return nil
}
