// Package consumer is a ClusterProfile consumer as MultiKueue is one: it
// reads a cluster's profile in its namespace and reaches the cluster with
// cluster-inventory-api's pkg/access and a credentials-provider
// configuration, the exec plugin cp-creds giving it the synced token. The
// end-to-end suite and the demo both use it.
package consumer

import (
	"context"
	"fmt"
	"net"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// ProxyProvider is the access provider entry the seed configures: the
	// one that goes through cluster-proxy's user server.
	ProxyProvider = "open-cluster-management"
	// ManagedServiceAccount is the seed's --managed-serviceaccount.
	ManagedServiceAccount = "multikueue"
)

// SeedProviders is MultiKueue's credentialsProviders configuration from the
// OCM documentation, unchanged except the plugin's path (there
// /plugins/cp-creds, mounted from an image).
func SeedProviders(cpCreds string) []access.Provider {
	return []access.Provider{{
		Name: ProxyProvider,
		ExecConfig: &clientcmdapi.ExecConfig{
			APIVersion:         "client.authentication.k8s.io/v1",
			Command:            cpCreds,
			Args:               []string{"--managed-serviceaccount=" + ManagedServiceAccount},
			ProvideClusterInfo: true,
			InteractiveMode:    clientcmdapi.NeverExecInteractiveMode,
		},
	}}
}

// Consumer reads profiles in Namespace with Profiles and builds clients
// from them with Providers.
type Consumer struct {
	Profiles  client.Reader
	Namespace string
	Providers []access.Provider
	// Dial, if set, opens the clients' connections, as a pod's network
	// would: e.g. to reach a Service name an entry gives where no cluster
	// DNS answers.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Profile reads the profile of a cluster in the consumer's namespace.
func (c *Consumer) Profile(ctx context.Context, cluster string) (*cpv1alpha1.ClusterProfile, error) {
	p := &cpv1alpha1.ClusterProfile{}
	if err := c.Profiles.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: cluster}, p); err != nil {
		return nil, fmt.Errorf("reading the profile of %s: %w", cluster, err)
	}
	return p, nil
}

// Clientset builds a client of the cluster from its profile, as MultiKueue
// does for each worker cluster; the profile is read afresh, so a changed
// entry (new server certificate, new URL) is picked up.
func (c *Consumer) Clientset(ctx context.Context, cluster string) (*kubernetes.Clientset, error) {
	p, err := c.Profile(ctx, cluster)
	if err != nil {
		return nil, err
	}
	cfg, err := access.New(c.Providers).BuildConfigFromCP(p)
	if err != nil {
		return nil, fmt.Errorf("building a client of %s from its profile: %w", cluster, err)
	}
	cfg.Timeout = 15 * time.Second
	cfg.Dial = c.Dial
	return kubernetes.NewForConfig(cfg)
}

// ListNamespaces lists the namespaces of a cluster through its profile.
func (c *Consumer) ListNamespaces(ctx context.Context, cluster string) ([]string, error) {
	cs, err := c.Clientset(ctx, cluster)
	if err != nil {
		return nil, err
	}
	list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing namespaces of %s: %w", cluster, err)
	}
	var names []string
	for _, ns := range list.Items {
		names = append(names, ns.Name)
	}
	return names, nil
}
