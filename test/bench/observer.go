package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
)

// observer watches the bench namespaces' ClusterProfiles through an informer
// and timestamps, as events arrive, the moments the phases wait for. Waiting
// then only reads this in-memory state: listing thousands of profiles in a
// loop would load the API server we are measuring.
type observer struct {
	mu         sync.Mutex
	namespaces map[string]bool
	want       map[string]expectation // by cluster name
	access     accessExpectation
	target     int // desired profiles

	profiles map[types.NamespacedName]profileState
	tally    namespaceTally
	complete int

	firstAt, allExistAt, allCompleteAt time.Time
	reasonWaits                        map[string]*reasonWait // by cluster name
	// lastEventAt is when a bench profile last changed, to tell when a
	// process without metrics (upstream's mirror) has settled.
	lastEventAt time.Time
}

// accessExpectation is what the access providers must have written on
// every profile: the cluster-proxy entry with the current user server
// certificate, and the direct entry.
type accessExpectation struct {
	proxyCA string // digest; empty when the proxy does not run
	direct  bool
}

// expectation is the status every profile of a cluster must carry.
type expectation struct {
	version    string
	properties int
}

type profileState struct {
	// mirrored tells whether the profile carries the cluster's full status.
	mirrored bool
	// healthy is the ControlPlaneHealthy condition's status and reason.
	healthy string
	// proxyCA is the digest of the cluster-proxy entry's CA; direct tells
	// whether the direct entry is there.
	proxyCA string
	direct  bool
}

// reasonWait waits for every profile of a cluster to show a condition.
type reasonWait struct {
	healthy   string
	reachedAt time.Time
}

// newObserver watches the profiles through c, which the caller starts.
func newObserver(ctx context.Context, c cache.Cache, w *world) (*observer, error) {
	o := &observer{
		namespaces:  map[string]bool{},
		want:        map[string]expectation{},
		target:      w.profileCount(),
		profiles:    map[types.NamespacedName]profileState{},
		tally:       newNamespaceTally(),
		reasonWaits: map[string]*reasonWait{},
	}
	for _, ns := range w.namespaces {
		o.namespaces[ns] = true
	}
	for name, s := range w.status {
		o.want[name] = expectation{version: s.Version, properties: len(s.Properties)}
	}
	if w.bundle.gates["proxy"] {
		o.access.proxyCA = digest(w.bundle.proxyCA)
	}
	o.access.direct = w.bundle.gates["direct"]
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
	o.lastEventAt = now
	old, existed := o.profiles[key]
	if deleted {
		o.forget(key, old, existed, now)
		return
	}
	state := o.stateOf(p)
	o.profiles[key] = state
	if !existed {
		o.tally.added(p.Namespace)
		if o.firstAt.IsZero() {
			o.firstAt = now
		}
		if len(o.profiles) == o.target && o.allExistAt.IsZero() {
			o.allExistAt = now
		}
	}
	isComplete, wasComplete := o.isComplete(state), existed && o.isComplete(old)
	switch {
	case isComplete && !wasComplete:
		o.complete++
		o.noteComplete(now)
	case !isComplete && wasComplete:
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
	if o.isComplete(old) {
		o.complete--
	}
	o.tally.removed(key.Namespace, now)
}

// noteComplete records when every desired profile became complete.
func (o *observer) noteComplete(now time.Time) {
	if o.complete == o.target && o.allCompleteAt.IsZero() {
		o.allCompleteAt = now
	}
}

// stateOf reads what the phases wait for from a profile.
func (o *observer) stateOf(p *cpv1alpha1.ClusterProfile) profileState {
	want, known := o.want[p.Name]
	healthy := meta.FindStatusCondition(p.Status.Conditions, cpv1alpha1.ClusterConditionControlPlaneHealthy)
	joined := meta.FindStatusCondition(p.Status.Conditions, clusterprofile.ConditionJoined)
	state := profileState{
		mirrored: known && healthy != nil && joined != nil &&
			p.Status.Version.Kubernetes == want.version && len(p.Status.Properties) == want.properties,
	}
	if healthy != nil {
		state.healthy = healthyKey(string(healthy.Status), healthy.Reason)
	}
	for _, entry := range p.Status.AccessProviders {
		switch entry.Name {
		case accessprovider.ProxyEntryName:
			state.proxyCA = digest(entry.Cluster.CertificateAuthorityData)
		case accessprovider.DefaultDirectEntryName:
			state.direct = entry.Cluster.Server != ""
		}
	}
	return state
}

// isComplete tells whether a profile carries everything the run's
// capabilities must write.
func (o *observer) isComplete(s profileState) bool {
	return s.mirrored && (o.access.proxyCA == "" || s.proxyCA == o.access.proxyCA) && (!o.access.direct || s.direct)
}

// expect replaces what complete means (a rotated certificate, another
// mirror's output), recounts and restarts the wait for all complete.
func (o *observer) expect(want map[string]expectation, access accessExpectation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.want, o.access = want, access
	o.complete = 0
	for _, s := range o.profiles {
		if o.isComplete(s) {
			o.complete++
		}
	}
	o.allCompleteAt = time.Time{}
	o.noteComplete(time.Now())
}

// expectations is what the observer now requires.
func (o *observer) expectations() (map[string]expectation, accessExpectation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.want, o.access
}

// quietSince is when a bench profile last changed.
func (o *observer) quietSince() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lastEventAt
}

// digest is a short fingerprint of data, to compare without keeping it.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
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
	return o.tally.in(ns)
}
