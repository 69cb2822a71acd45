// Package cachedobjects reads an informer's store in place, for metrics
// collectors that look at every cached object at scrape time.
package cachedobjects

import (
	"context"
	"errors"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// List returns the cached objects of obj's kind: the cache's own pointers,
// to be read and never changed. A client List would copy every object into
// a new slice of structs on each scrape, megabytes on a large hub
// (docs/performance.md, "What keeps memory down").
func List(ctx context.Context, c cache.Informers, obj client.Object) ([]any, error) {
	informer, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, err
	}
	indexed, ok := informer.(toolscache.SharedIndexInformer)
	if !ok || !indexed.HasSynced() {
		return nil, errors.New("the cache has not synced")
	}
	return indexed.GetStore().List(), nil
}

// Lister is List for one kind, for a collector that keeps it.
func Lister(c cache.Informers, obj client.Object) func(context.Context) ([]any, error) {
	return func(ctx context.Context) ([]any, error) { return List(ctx, c, obj) }
}
