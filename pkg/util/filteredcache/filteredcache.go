// Package filteredcache gives a capability its own informer cache for one
// type, narrowed by a label or field selector. controller-runtime allows one
// selector per type in the manager's cache, and several capabilities watch
// different slices of the hub's Secrets; each gets a cache that holds only its
// own slice (and needs RBAC for only that).
package filteredcache

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// New returns a cache of obj's type limited by selection, started with the
// manager (after leader election, like the controllers that read it).
func New(mgr ctrl.Manager, obj client.Object, selection cache.ByObject) (cache.Cache, error) {
	if selection.Transform == nil {
		selection.Transform = cache.TransformStripManagedFields()
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:   mgr.GetScheme(),
		Mapper:   mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{obj: selection},
		// Reading any other type through this cache is a programming error.
		ReaderFailOnMissingInformer: true,
	})
	if err != nil {
		return nil, fmt.Errorf("creating a filtered cache for %T: %w", obj, err)
	}
	// Register the informer now: with ReaderFailOnMissingInformer a read
	// must not be the first to ask for it.
	if _, err := c.GetInformer(context.Background(), obj); err != nil {
		return nil, fmt.Errorf("registering the informer for %T: %w", obj, err)
	}
	return c, mgr.Add(c)
}
