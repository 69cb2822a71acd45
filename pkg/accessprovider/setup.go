package accessprovider

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	cpclient "sigs.k8s.io/cluster-inventory-api/client/clientset/versioned/typed/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/filteredcache"
)

// Options configure the access providers.
type Options struct {
	ManagerName string
	// Proxy and Direct turn the sources on. A source that is off has its
	// entries withdrawn from every profile once, at start.
	Proxy, Direct   bool
	Endpoint        Endpoint
	DirectEntryName string
	Workers         int
}

// Setup registers the enabled sources' controllers and the withdrawal of the
// disabled ones' entries.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.DirectEntryName == "" {
		opts.DirectEntryName = DefaultDirectEntryName
	}
	profiles, err := clusterprofile.NewProfilesClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	direct := &Direct{Reader: mgr.GetClient(), Name: opts.DirectEntryName}
	proxy := &Proxy{Reader: mgr.GetClient(), Endpoint: opts.Endpoint, Now: time.Now}
	if opts.Proxy {
		// Only the user server certificate Secrets, in any namespace: the
		// proxy namespace comes from the configuration and may change.
		secrets, err := filteredcache.New(mgr, &corev1.Secret{}, cache.ByObject{
			Field: fields.OneTermEqualSelector("metadata.name", UserServerSecretName),
		})
		if err != nil {
			return err
		}
		proxy.Secrets = secrets
	}
	for _, s := range []struct {
		source  Source
		enabled bool
	}{{proxy, opts.Proxy}, {direct, opts.Direct}} {
		if !s.enabled {
			if err := mgr.Add(withdrawal(mgr, profiles, s.source)); err != nil {
				return err
			}
			continue
		}
		if err := NewReconciler(mgr.GetClient(), profiles, s.source, opts.ManagerName).SetupWithManager(mgr, opts.Workers); err != nil {
			return fmt.Errorf("setting up %s: %w", s.source.Writer().FieldManager, err)
		}
	}
	return nil
}

// withdrawal removes a disabled source's entries once, as the leader.
func withdrawal(mgr ctrl.Manager, profiles cpclient.ClusterProfilesGetter, source Source) manager.RunnableFunc {
	return func(ctx context.Context) error {
		identity := source.Writer()
		log := ctrl.Log.WithName("access-provider-withdrawal").WithValues("entry", identity.AccessProviders[0])
		withdrawn, err := Withdraw(ctx, mgr.GetAPIReader(), profiles, identity)
		if apierrors.IsForbidden(err) {
			log.Info("Not allowed to withdraw the entries of a disabled access provider; grant patch on clusterprofiles/status",
				"error", err.Error())
			return nil
		}
		if err != nil {
			log.Error(err, "Withdrawing the entries of a disabled access provider", "withdrawn", withdrawn)
			return nil
		}
		if withdrawn > 0 {
			log.Info("Withdrew the entries of a disabled access provider", "profiles", withdrawn)
		}
		return nil
	}
}
