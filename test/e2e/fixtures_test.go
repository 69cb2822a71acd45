//go:build linux

package e2e

import (
	"context"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
)

// prepareCluster registers a node, lets the multikueue service account
// (which the managed-serviceaccount agent creates) list namespaces, and
// creates the ManagedServiceAccount on the hub.
func prepareCluster(ctx context.Context, c *ocmlocal.ManagedCluster) error {
	if err := c.PrepareForConsumers(ctx); err != nil {
		return err
	}
	msa := &authv1beta1.ManagedServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Name, Name: msaName, Labels: map[string]string{cpcreds.LabelSyncToClusterProfile: "true"}},
		Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{
			Enabled: true, Validity: metav1.Duration{Duration: 24 * time.Hour}}},
	}
	return hub.Create(ctx, msa)
}

// bindSet creates the namespace and binds the set into it.
func bindSet(ctx context.Context, namespace, set string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: set},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}}
	return hub.Create(ctx, binding)
}

// newConsumer is a consumer of namespace with its own hub identity, as
// MultiKueue runs: a service account allowed to get Secrets (the synced
// token copies) in its namespace and nothing else. Its providers are the
// seed's, with cp-creds given that identity and namespace.
func newConsumer(ctx context.Context, namespace string) (*consumer.Consumer, error) {
	kubeconfig, err := consumerKubeconfig(ctx, namespace)
	if err != nil {
		return nil, err
	}
	providers := consumer.SeedProviders(cpCreds)
	for i := range providers {
		providers[i].ExecConfig.Env = []clientcmdapi.ExecEnvVar{{Name: "KUBECONFIG", Value: kubeconfig}, {Name: "NAMESPACE", Value: namespace}}
	}
	return &consumer.Consumer{Profiles: hub, Namespace: namespace, Providers: providers}, nil
}

func consumerKubeconfig(ctx context.Context, namespace string) (string, error) {
	path := filepath.Join(env.WorkDir, "consumer-"+namespace+".kubeconfig")
	return path, consumer.WriteKubeconfig(ctx, env.HubConfig(), namespace, path)
}
