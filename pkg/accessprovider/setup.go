package accessprovider

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/featuregate"
	proxyv1alpha1 "open-cluster-management.io/cluster-proxy/pkg/apis/proxy/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/filteredcache"
)

// Options configure the access providers.
type Options struct {
	ManagerName     string
	Endpoint        Endpoint
	DirectEntryName string
	Workers         int
	// MirrorDeletions forecasts this process's mirror's deletions; nil when
	// no mirror runs here.
	MirrorDeletions MirrorDeletions
	// ProxyTwin watches cluster-proxy's own writer of the proxy entry, to
	// which the proxy source yields; nil: not watched.
	ProxyTwin *coexistence.TwinWatch
}

// ProxyCapability is the cluster-proxy entry (gate
// ClusterProfileAccessProvider). With its gate off its entries are
// withdrawn from every profile at start: consumers must not keep using a
// way in that nobody maintains.
func ProxyCapability(opts Options) capability.Capability {
	return sourceCapability("cluster-proxy access provider", features.ClusterProfileAccessProvider, ProxyIdentity, ProxyRequires,
		func(mgr ctrl.Manager) (Source, error) { return NewProxy(mgr, opts) }, opts)
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

// NewDirect is the direct source on mgr.
func NewDirect(mgr ctrl.Manager, opts Options) *Direct {
	if opts.DirectEntryName == "" {
		opts.DirectEntryName = DefaultDirectEntryName
	}
	return &Direct{Reader: mgr.GetClient(), Name: opts.DirectEntryName, Now: time.Now}
}

// DirectCapability is the direct entry (gate ClusterProfileDirectAccess);
// its entries too are withdrawn while its gate is off.
func DirectCapability(opts Options) capability.Capability {
	if opts.DirectEntryName == "" {
		opts.DirectEntryName = DefaultDirectEntryName
	}
	return sourceCapability("direct access provider", features.ClusterProfileDirectAccess, DirectIdentity(opts.DirectEntryName), nil,
		func(mgr ctrl.Manager) (Source, error) { return NewDirect(mgr, opts), nil }, opts)
}

func sourceCapability(name string, gate featuregate.Feature, identity profilewrite.Identity, requires []schema.GroupVersionKind,
	newSource func(ctrl.Manager) (Source, error), opts Options) capability.Capability {
	return capability.Capability{
		Name:     name,
		Gate:     gate,
		Requires: append(append([]schema.GroupVersionKind{clusterprofile.API}, membership.APIs...), requires...),
		Indexes:  []capability.Index{clusterprofile.NameIndex, membership.Index},
		Setup: func(_ context.Context, mgr ctrl.Manager) error {
			source, err := newSource(mgr)
			if err != nil {
				return err
			}
			if err := NewReconciler(mgr.GetClient(), source, opts.ManagerName, opts.MirrorDeletions).SetupWithManager(mgr, opts.Workers); err != nil {
				return fmt.Errorf("setting up %s: %w", identity.FieldManager, err)
			}
			return nil
		},
		Teardown: func(ctx context.Context, mgr ctrl.Manager) error {
			return teardown(ctx, mgr, identity)
		},
	}
}

// teardown withdraws a disabled source's entries.
func teardown(ctx context.Context, mgr ctrl.Manager, identity profilewrite.Identity) error {
	log := ctrl.Log.WithName("access-provider-teardown").WithValues("entry", identity.AccessProviders[0])
	withdrawn, err := withdrawEntries(ctx, mgr.GetAPIReader(), mgr.GetClient(), identity)
	if withdrawn > 0 {
		log.Info("Withdrew the entries of a disabled access provider", "profiles", withdrawn)
	}
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("not allowed to withdraw the entries of a disabled access provider; grant patch on clusterprofiles/status: %w", err)
	}
	return err
}
