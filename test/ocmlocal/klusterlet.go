//go:build linux

package ocmlocal

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"golang.org/x/sync/errgroup"
)

const (
	// klusterletNamespace is where the klusterlet agent keeps its hub
	// kubeconfig Secret (hub-kubeconfig-secret) on the managed cluster.
	klusterletNamespace = "open-cluster-management-agent"
	// clusterNameLabel is the label OCM puts on a cluster's CSRs.
	clusterNameLabel = "open-cluster-management.io/cluster-name"
)

func (e *Env) startClusters(ctx context.Context) error {
	e.Clusters = make([]*ManagedCluster, e.opts.Clusters)
	g, gctx := errgroup.WithContext(ctx)
	for i := range e.Clusters {
		g.Go(func() error {
			// kube-controller-manager here too: default service accounts, root CA
			// ConfigMaps, garbage collection and namespace deletion, as on any cluster.
			cp, err := e.startControlPlane(gctx, "cluster"+strconv.Itoa(i+1), true)
			if err != nil {
				return err
			}
			e.Clusters[i] = &ManagedCluster{ControlPlane: cp}
			return nil
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

// register installs the klusterlet's CRDs, starts its agent with a
// bootstrap kubeconfig and accepts the cluster as `clusteradm accept` does.
func (e *Env) register(ctx context.Context, c *ManagedCluster) error {
	start := time.Now()
	if err := e.installKlusterletCRDs(c); err != nil {
		return err
	}
	client, err := c.Clientset()
	if err != nil {
		return err
	}
	// The klusterlet operator creates both: the agent's namespace and the
	// default addon install namespace (addon manifests need not ship it).
	for _, name := range []string{klusterletNamespace, addonInstallNamespace} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := createIgnoringExists(client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})); err != nil {
			return fmt.Errorf("creating namespace %s on %s: %w", name, c.Name, err)
		}
	}
	bootstrap, err := e.writeBootstrapKubeconfig(ctx, c)
	if err != nil {
		return err
	}
	c.bootstrapKubeconfig = bootstrap
	if c.klusterlet, err = e.startKlusterlet(c, bootstrap); err != nil {
		return err
	}
	if err := e.accept(ctx, c); err != nil {
		return err
	}
	e.progressf("%s registered (CSR approved, accepted) in %s", c.Name, since(start))
	if err := e.waitAvailable(ctx, c); err != nil {
		return err
	}
	e.progressf("%s available (lease and version reported by the klusterlet) after %s", c.Name, since(start))
	return nil
}

// installKlusterletCRDs installs what the klusterlet operator puts on a
// managed cluster: AppliedManifestWork, ClusterClaim and about-api's
// ClusterProperty, which the agent watches.
func (e *Env) installKlusterletCRDs(c *ManagedCluster) error {
	var files []string
	for _, f := range []struct{ module, path string }{
		{ocmAPIModule, "work/v1/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml"},
		{ocmAPIModule, "cluster/v1alpha1/0000_02_clusters.open-cluster-management.io_clusterclaims.crd.yaml"},
		{ocmModule, "manifests/klusterlet/managed/clusterproperties.crd.yaml"},
	} {
		p, err := e.modules.file(f.module, f.path)
		if err != nil {
			return err
		}
		files = append(files, p)
	}
	if _, err := envtest.InstallCRDs(c.Config, envtest.CRDInstallOptions{Paths: files, ErrorIfPathMissing: true}); err != nil {
		return fmt.Errorf("installing klusterlet CRDs on %s: %w", c.Name, err)
	}
	return nil
}

func (e *Env) writeBootstrapKubeconfig(ctx context.Context, c *ManagedCluster) (string, error) {
	hub, err := e.Hub.Clientset()
	if err != nil {
		return "", err
	}
	token, err := bootstrapToken(ctx, hub)
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.dir, "bootstrap.kubeconfig")
	return path, writeKubeconfig(path, "hub", e.Hub.URL, e.Hub.CAData, func(u *clientcmdapi.AuthInfo) { u.Token = token })
}

// startKlusterlet runs the klusterlet agent (registration and work in one
// process) with the arguments the klusterlet operator gives it in Singleton
// mode. It talks to its managed cluster as admin (the operator would give it
// a service account with broad rights there); towards the hub it only has the
// bootstrap token until its CSR is approved.
func (e *Env) startKlusterlet(c *ManagedCluster, bootstrap string) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	c.hubDir = filepath.Join(c.dir, "hub-kubeconfig")
	return e.procs.start(processSpec{name: c.Name + "-klusterlet", argv: []string{
		e.bins.path("registration-operator"), "agent",
		"--spoke-cluster-name=" + c.Name,
		"--bootstrap-kubeconfig=" + bootstrap,
		"--hub-kubeconfig-dir=" + c.hubDir,
		"--workload-source-driver=kube",
		"--workload-source-config=" + filepath.Join(c.hubDir, "kubeconfig"),
		"--kubeconfig=" + c.KubeconfigPath,
		"--namespace=" + klusterletNamespace,
		"--spoke-external-server-urls=" + c.URL,
		"--listen=" + hostPort(port),
		"--disable-leader-election",
		// The operator's default for one replica is 60s; tests want status
		// (of addon Deployments, for instance) sooner.
		"--status-sync-interval=10s",
	}})
}

// accept does what `clusteradm accept` does: approve the cluster's pending
// registration CSR and set hubAcceptsClient on its ManagedCluster.
func (e *Env) accept(ctx context.Context, c *ManagedCluster) error {
	hub, err := e.Hub.Clientset()
	if err != nil {
		return err
	}
	var csr *certificatesv1.CertificateSigningRequest
	err = poll(ctx, 2*time.Minute, c.klusterlet, func(ctx context.Context) (bool, error) {
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
	err := poll(ctx, time.Minute, c.klusterlet, func(ctx context.Context) (bool, error) {
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
	err = poll(ctx, 2*time.Minute, c.klusterlet, func(ctx context.Context) (bool, error) {
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
// notice through the lease that the cluster is gone. Its addons keep running.
func (e *Env) StopKlusterlet(cluster string) error {
	c := e.Cluster(cluster)
	if c == nil {
		return fmt.Errorf("no managed cluster %s", cluster)
	}
	c.klusterlet.stop(10 * time.Second)
	e.procs.remove(c.klusterlet)
	e.progressf("%s klusterlet stopped", cluster)
	return nil
}

// StartKlusterlet starts a stopped klusterlet again; it reuses its hub
// kubeconfig (hub-kubeconfig-secret), so no new CSR is needed.
func (e *Env) StartKlusterlet(cluster string) error {
	c := e.Cluster(cluster)
	if c == nil {
		return fmt.Errorf("no managed cluster %s", cluster)
	}
	if ended, _ := c.klusterlet.exited(); !ended {
		return fmt.Errorf("the klusterlet of %s is running", cluster)
	}
	p, err := e.startKlusterlet(c, c.bootstrapKubeconfig)
	if err != nil {
		return err
	}
	c.klusterlet = p
	e.progressf("%s klusterlet started again", cluster)
	return nil
}
