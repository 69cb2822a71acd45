package accessprovider

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"

	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile/profilewrite"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/fieldindex"
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

	// identity and newSource are the one source a capability runs, set by
	// ProxyCapability and DirectCapability.
	identity  profilewrite.Identity
	newSource func(ctrl.Manager) (Source, error)
}

// ProxyCapability is the cluster-proxy entry (gate
// ClusterProfileAccessProvider). With its gate off its entries are
// withdrawn from every profile at start: consumers must not keep using a
// way in that nobody maintains.
func ProxyCapability(opts Options) capability.Capability {
	opts.identity = ProxyIdentity
	opts.newSource = func(mgr ctrl.Manager) (Source, error) { return NewProxy(mgr, opts) }
	return sourceCapability("cluster-proxy access provider", features.ClusterProfileAccessProvider, ProxyRequires, opts)
}

// DirectCapability is the direct entry (gate ClusterProfileDirectAccess);
// its entries too are withdrawn while its gate is off.
func DirectCapability(opts Options) capability.Capability {
	if opts.DirectEntryName == "" {
		opts.DirectEntryName = DefaultDirectEntryName
	}
	opts.identity = DirectIdentity(opts.DirectEntryName)
	opts.newSource = func(mgr ctrl.Manager) (Source, error) { return NewDirect(mgr, opts), nil }
	return sourceCapability("direct access provider", features.ClusterProfileDirectAccess, nil, opts)
}

func sourceCapability(name string, gate featuregate.Feature, requires []schema.GroupVersionKind, opts Options) capability.Capability {
	return capability.Capability{
		Name:     name,
		Gate:     gate,
		Requires: append(append([]schema.GroupVersionKind{clusterprofile.API}, membership.APIs...), requires...),
		Indexes:  []fieldindex.Index{clusterprofile.NameIndex, membership.Index},
		Setup: func(ctx context.Context, mgr ctrl.Manager, _ capability.Gates) error {
			return Setup(ctx, mgr, opts)
		},
		Teardown: func(ctx context.Context, mgr ctrl.Manager) error {
			return Teardown(ctx, mgr, opts)
		},
	}
}

// Setup registers the controller that keeps the entry of the capability's
// source on every profile the hub publishes.
func Setup(_ context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.newSource == nil {
		return errors.New("the access provider's options name no source: build them with ProxyCapability or DirectCapability")
	}
	source, err := opts.newSource(mgr)
	if err != nil {
		return err
	}
	if err := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), source, opts.ManagerName, opts.MirrorDeletions).SetupWithManager(mgr, opts.Workers); err != nil {
		return fmt.Errorf("setting up %s: %w", source.Identity().FieldManager, err)
	}
	return nil
}

// Teardown withdraws a disabled source's entries.
func Teardown(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	log := ctrl.Log.WithName("access-provider-teardown").WithValues("entry", opts.identity.AccessProviders[0])
	withdrawn, err := withdrawEntries(ctx, mgr.GetAPIReader(), mgr.GetClient(), opts.identity)
	if withdrawn > 0 {
		log.Info("Withdrew the entries of a disabled access provider", "profiles", withdrawn)
	}
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("not allowed to withdraw the entries of a disabled access provider; grant patch on clusterprofiles/status: %w", err)
	}
	return err
}
