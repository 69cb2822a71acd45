package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
)

// observer watches the bench namespaces' ClusterProfiles through an informer
// and timestamps, as events arrive, the moments the phases wait for. Waiting
// then only reads this in-memory state: listing thousands of profiles in a
// loop would load the API server we are measuring.
type observer struct {
	mu         sync.Mutex
	namespaces map[string]bool
	want       map[string]expectation // by cluster name
	target     int                    // desired profiles

	profiles     map[types.NamespacedName]profileState
	perNamespace map[string]int
	complete     int

	firstAt, allExistAt, allCompleteAt time.Time
	emptiedAt                          map[string]time.Time
	reasonWaits                        map[string]*reasonWait // by cluster name
}

// expectation is the status every profile of a cluster must carry.
type expectation struct {
	version    string
	properties int
}

type profileState struct {
	complete bool
	// healthy is the ControlPlaneHealthy condition's status and reason.
	healthy string
}

// reasonWait waits for every profile of a cluster to show a condition.
type reasonWait struct {
	healthy   string
	reachedAt time.Time
}

// startObserver starts the informer and waits for its first list.
func startObserver(ctx context.Context, cfg *rest.Config, w *world) (*observer, error) {
	o := &observer{
		namespaces:   map[string]bool{},
		want:         map[string]expectation{},
		target:       w.profileCount(),
		profiles:     map[types.NamespacedName]profileState{},
		perNamespace: map[string]int{},
		emptiedAt:    map[string]time.Time{},
		reasonWaits:  map[string]*reasonWait{},
	}
	for _, ns := range w.namespaces {
		o.namespaces[ns] = true
	}
	for name, s := range w.status {
		o.want[name] = expectation{version: s.Version, properties: len(s.Properties)}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	c, err := cache.New(cfg, cache.Options{Scheme: scheme.New(), DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return nil, fmt.Errorf("creating observer cache: %w", err)
	}
	informer, err := c.GetInformer(ctx, &cpv1alpha1.ClusterProfile{})
	if err != nil {
		return nil, fmt.Errorf("creating ClusterProfile informer: %w", err)
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.observe(obj, false) },
		UpdateFunc: func(_, obj any) { o.observe(obj, false) },
		DeleteFunc: func(obj any) { o.observe(obj, true) },
	})
	if err != nil {
		return nil, fmt.Errorf("watching ClusterProfiles: %w", err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("observer cache did not sync: %w", ctx.Err())
	}
	return o, nil
}

func (o *observer) observe(obj any, deleted bool) {
	now := time.Now()
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	p, ok := obj.(*cpv1alpha1.ClusterProfile)
	if !ok || !o.namespaces[p.Namespace] {
		return
	}
	key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	o.mu.Lock()
	defer o.mu.Unlock()
	old, existed := o.profiles[key]
	if deleted {
		o.forget(key, old, existed, now)
		return
	}
	state := o.stateOf(p)
	o.profiles[key] = state
	if !existed {
		o.perNamespace[p.Namespace]++
		if o.firstAt.IsZero() {
			o.firstAt = now
		}
		if len(o.profiles) == o.target && o.allExistAt.IsZero() {
			o.allExistAt = now
		}
	}
	switch {
	case state.complete && (!existed || !old.complete):
		o.complete++
		if o.complete == o.target && o.allCompleteAt.IsZero() {
			o.allCompleteAt = now
		}
	case !state.complete && existed && old.complete:
		o.complete--
	}
	if wait := o.reasonWaits[p.Name]; wait != nil && wait.reachedAt.IsZero() && o.allShow(p.Name, wait.healthy) {
		wait.reachedAt = now
	}
}

func (o *observer) forget(key types.NamespacedName, old profileState, existed bool, now time.Time) {
	if !existed {
		return
	}
	delete(o.profiles, key)
	if old.complete {
		o.complete--
	}
	o.perNamespace[key.Namespace]--
	if o.perNamespace[key.Namespace] == 0 {
		o.emptiedAt[key.Namespace] = now
	}
}

// stateOf tells whether a profile carries its cluster's full status.
func (o *observer) stateOf(p *cpv1alpha1.ClusterProfile) profileState {
	want, known := o.want[p.Name]
	healthy := meta.FindStatusCondition(p.Status.Conditions, cpv1alpha1.ClusterConditionControlPlaneHealthy)
	joined := meta.FindStatusCondition(p.Status.Conditions, clusterprofile.ConditionJoined)
	state := profileState{
		complete: known && healthy != nil && joined != nil &&
			p.Status.Version.Kubernetes == want.version && len(p.Status.Properties) == want.properties,
	}
	if healthy != nil {
		state.healthy = healthyKey(string(healthy.Status), healthy.Reason)
	}
	return state
}

func healthyKey(status, reason string) string { return status + "/" + reason }

// allShow tells whether every bench namespace holds the cluster's profile
// with the given ControlPlaneHealthy status and reason.
func (o *observer) allShow(cluster, healthy string) bool {
	for ns := range o.namespaces {
		if state, ok := o.profiles[types.NamespacedName{Namespace: ns, Name: cluster}]; !ok || state.healthy != healthy {
			return false
		}
	}
	return true
}

// convergence is how far the profiles are from the desired ones.
type convergence struct {
	existing, complete int
	// When the first profile appeared, when every desired profile first
	// existed and first carried its full status; zero while not yet.
	firstAt, allExistAt, allCompleteAt time.Time
}

func (o *observer) convergence() convergence {
	o.mu.Lock()
	defer o.mu.Unlock()
	return convergence{
		existing: len(o.profiles), complete: o.complete,
		firstAt: o.firstAt, allExistAt: o.allExistAt, allCompleteAt: o.allCompleteAt,
	}
}

// expectHealthy starts waiting for every profile of cluster to show a
// ControlPlaneHealthy condition with this status and reason.
func (o *observer) expectHealthy(cluster, status, reason string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.reasonWaits[cluster] = &reasonWait{healthy: healthyKey(status, reason)}
}

// healthyReachedAt is when the awaited condition reached every profile.
func (o *observer) healthyReachedAt(cluster string) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	if wait := o.reasonWaits[cluster]; wait != nil {
		return wait.reachedAt
	}
	return time.Time{}
}

// namespace returns how many profiles a namespace holds and when it last
// became empty.
func (o *observer) namespace(ns string) (int, time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.perNamespace[ns], o.emptiedAt[ns]
}
