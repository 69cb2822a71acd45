package accessprovider

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	proxyv1alpha1 "open-cluster-management.io/cluster-proxy/pkg/apis/proxy/v1alpha1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/filteredcache"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/optional"
)

// ProxyIdentity is who the cluster-proxy source writes as.
var ProxyIdentity = profilewrite.Identity{
	FieldManager:    ProxyFieldManager,
	ConditionTypes:  []string{ConditionClusterProxyAccess},
	AccessProviders: []string{ProxyEntryName},
}

// ProxyRequires are the APIs the cluster-proxy source reads.
var ProxyRequires = []schema.GroupVersionKind{proxyv1alpha1.GroupVersion.WithKind("ManagedProxyConfiguration")}

// NewProxy is the cluster-proxy source on mgr.
func NewProxy(mgr ctrl.Manager, opts Options) (*Proxy, error) {
	if opts.ProxyTwin != nil {
		if err := opts.ProxyTwin.Start(mgr); err != nil {
			return nil, err
		}
	}
	// Only the user server certificate Secrets, in any namespace: the
	// proxy namespace comes from the configuration and may change.
	secrets, err := filteredcache.New(mgr, &corev1.Secret{}, cache.ByObject{
		Field: fields.OneTermEqualSelector("metadata.name", UserServerSecretName),
	})
	if err != nil {
		return nil, err
	}
	return &Proxy{Reader: mgr.GetClient(), Secrets: secrets, Endpoint: opts.Endpoint, Now: time.Now, Upstream: opts.ProxyTwin}, nil
}

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
	// Upstream is cluster-proxy's own writer of the entry, nil when not
	// watched. While it is enabled the entry it publishes is the one at
	// its fixed endpoint (Endpoint{}), whatever this source's is.
	Upstream *coexistence.TwinWatch
}

var _ Source = (*Proxy)(nil)

func (p *Proxy) Identity() profilewrite.Identity { return ProxyIdentity }

// Twin is cluster-proxy's own writer of the entry.
func (p *Proxy) Twin() *coexistence.TwinWatch { return p.Upstream }

// Desired reads the configuration and the certificate; see ProxyDesired.
// While cluster-proxy's own writer is enabled, it is the entry that writer
// publishes (nothing writes it here then: see Reconciler).
func (p *Proxy) Desired(ctx context.Context, profile *cpv1alpha1.ClusterProfile) (Desired, error) {
	world, err := p.read(ctx)
	if err != nil {
		return Desired{}, err
	}
	yielding, err := p.Upstream.Yielding(ctx)
	if err != nil {
		return Desired{}, err
	}
	if yielding {
		world.Endpoint = Endpoint{}
	}
	return ProxyDesired(world, profile.Name, profile.Status.Conditions, p.Now()), nil
}

// read reads the configuration and, in the namespace it names, the
// certificate; what is missing stays nil.
func (p *Proxy) read(ctx context.Context) (ProxyWorld, error) {
	world := ProxyWorld{Endpoint: p.Endpoint}
	config, err := optional.Get(ctx, p.Reader, types.NamespacedName{Name: ProxyConfigurationName}, &proxyv1alpha1.ManagedProxyConfiguration{})
	if err != nil {
		return world, fmt.Errorf("reading ManagedProxyConfiguration %s: %w", ProxyConfigurationName, err)
	}
	world.Configuration = config
	if config == nil || config.Spec.ProxyServer.Namespace == "" {
		return world, nil
	}
	namespace := config.Spec.ProxyServer.Namespace
	secret, err := optional.Get(ctx, p.Secrets, types.NamespacedName{Namespace: namespace, Name: UserServerSecretName}, &corev1.Secret{})
	if err != nil {
		return world, fmt.Errorf("reading Secret %s/%s: %w", namespace, UserServerSecretName, err)
	}
	world.Certificate = secret
	return world, nil
}

// Watch maps the configuration, and the certificate in the namespace it
// names, to every profile.
func (p *Proxy) Watch(b *builder.Builder, profiles membership.ProfileMapper) *builder.Builder {
	named := func(name string) predicate.Predicate {
		return predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetName() == name })
	}
	return b.
		Watches(&proxyv1alpha1.ManagedProxyConfiguration{}, handler.EnqueueRequestsFromMapFunc(profiles.All),
			builder.WithPredicates(named(ProxyConfigurationName), predicate.GenerationChangedPredicate{})).
		WatchesRawSource(source.Kind[client.Object](p.Secrets, &corev1.Secret{},
			handler.EnqueueRequestsFromMapFunc(p.certificateToProfiles(profiles.All)), named(UserServerSecretName)))
}

// certificateToProfiles maps the user server certificate to every profile
// (all), and a Secret of its name in any other namespace than the one the
// configuration names to none: anyone may create a Secret of that name in
// a namespace of theirs, and it must not have every profile reconciled.
func (p *Proxy) certificateToProfiles(all handler.MapFunc) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		config, err := optional.Get(ctx, p.Reader, types.NamespacedName{Name: ProxyConfigurationName}, &proxyv1alpha1.ManagedProxyConfiguration{})
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Reading the ManagedProxyConfiguration", "name", ProxyConfigurationName)
			return nil
		}
		if config == nil || config.Spec.ProxyServer.Namespace != obj.GetNamespace() {
			return nil
		}
		return all(ctx, obj)
	}
}
