package accessprovider

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	proxyv1alpha1 "open-cluster-management.io/cluster-proxy/pkg/apis/proxy/v1alpha1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
)

// Proxy is the cluster-proxy source: an entry that reaches the cluster
// through cluster-proxy's user server, with the user server's certificate as
// CA. It watches the ManagedProxyConfiguration and the certificate Secret, so
// a rotated certificate reaches every profile at once.
type Proxy struct {
	// Reader reads the ManagedProxyConfiguration (the manager's cache).
	Reader client.Reader
	// Secrets is a cache holding only the user server certificate Secrets.
	Secrets  cache.Cache
	Endpoint Endpoint
	Now      func() time.Time
}

var _ Source = (*Proxy)(nil)

func (p *Proxy) EntryName() string        { return ProxyEntryName }
func (p *Proxy) FieldManager() string     { return ProxyFieldManager }
func (p *Proxy) ConditionTypes() []string { return []string{ConditionClusterProxyAccess} }

// Desired is the entry and a True condition when cluster-proxy is set up,
// else no entry and a False condition saying what is missing.
func (p *Proxy) Desired(ctx context.Context, profile *cpv1alpha1.ClusterProfile, cluster string) (Desired, error) {
	namespace, ca, missing, err := p.userServer(ctx)
	if err != nil {
		return Desired{}, err
	}
	var want Desired
	if missing != nil {
		want.Condition = missing
	} else {
		entry := ProxyEntry(cluster, p.Endpoint, namespace, ca)
		want.Entry = &entry
		want.Condition = proxyCondition(metav1.ConditionTrue, ReasonUserServerConfigured,
			"Reachable through cluster-proxy's user server at "+entry.Cluster.Server)
	}
	c := clusterprofile.StableCondition(profile.Status.Conditions, *want.Condition, p.Now())
	want.Condition = &c
	return want, nil
}

// userServer reads the proxy namespace and the CA, or says what is missing.
func (p *Proxy) userServer(ctx context.Context) (string, []byte, *metav1.Condition, error) {
	config := &proxyv1alpha1.ManagedProxyConfiguration{}
	err := p.Reader.Get(ctx, types.NamespacedName{Name: ProxyConfigurationName}, config)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil, proxyCondition(metav1.ConditionFalse, ReasonConfigurationMissing,
			fmt.Sprintf("ManagedProxyConfiguration %q not found: is the cluster-proxy addon installed?", ProxyConfigurationName)), nil
	case err != nil:
		return "", nil, nil, fmt.Errorf("reading ManagedProxyConfiguration %s: %w", ProxyConfigurationName, err)
	}
	namespace := config.Spec.ProxyServer.Namespace
	if namespace == "" {
		return "", nil, proxyCondition(metav1.ConditionFalse, ReasonConfigurationNamespace,
			fmt.Sprintf("ManagedProxyConfiguration %q has no spec.proxyServer.namespace", ProxyConfigurationName)), nil
	}
	secret := &corev1.Secret{}
	err = p.Secrets.Get(ctx, types.NamespacedName{Namespace: namespace, Name: UserServerSecretName}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil, proxyCondition(metav1.ConditionFalse, ReasonCertificateMissing,
			fmt.Sprintf("Secret %s/%s not found: is cluster-proxy's user server enabled (userServer.enabled=true)?", namespace, UserServerSecretName)), nil
	case err != nil:
		return "", nil, nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, UserServerSecretName, err)
	}
	ca := secret.Data[UserServerCAKey]
	if len(ca) == 0 {
		return "", nil, proxyCondition(metav1.ConditionFalse, ReasonCertificateInvalid,
			fmt.Sprintf("Secret %s/%s has no %s", namespace, UserServerSecretName, UserServerCAKey)), nil
	}
	return namespace, ca, nil, nil
}

// Watch maps the configuration and the certificate to every profile.
func (p *Proxy) Watch(b *builder.Builder, profiles *profileMapper) *builder.Builder {
	named := func(name string) predicate.Predicate {
		return predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetName() == name })
	}
	return b.
		Watches(&proxyv1alpha1.ManagedProxyConfiguration{}, handler.EnqueueRequestsFromMapFunc(profiles.all),
			builder.WithPredicates(named(ProxyConfigurationName), predicate.GenerationChangedPredicate{})).
		WatchesRawSource(source.Kind[client.Object](p.Secrets, &corev1.Secret{},
			handler.EnqueueRequestsFromMapFunc(profiles.all), named(UserServerSecretName)))
}
