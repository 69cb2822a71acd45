package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// copyObserver watches the token copies in the bench namespaces and
// timestamps, as events arrive, when each copy first carries the token the
// benchmark last wrote into its source. It keeps digests, not tokens.
type copyObserver struct {
	mu         sync.Mutex
	namespaces map[string]bool
	// want is the digest of the current token, by copy name (the same name
	// in every namespace: cpcreds.SecretName).
	want   map[string]string
	target int

	copies       map[types.NamespacedName]string // token digest
	tally        namespaceTally
	current      int // copies carrying their wanted token
	allCurrentAt time.Time
	// seenAt is when a copy first carried its wanted token since the want
	// was last set.
	seenAt map[types.NamespacedName]time.Time
}

// newCopyObserver watches the copies through c, whose Secrets are limited to
// the synced ones (see observerCache).
func newCopyObserver(ctx context.Context, c cache.Cache, w *world) (*copyObserver, error) {
	o := &copyObserver{
		namespaces: map[string]bool{}, want: map[string]string{}, target: w.copyCount(),
		copies: map[types.NamespacedName]string{}, tally: newNamespaceTally(),
		seenAt: map[types.NamespacedName]time.Time{},
	}
	for _, ns := range w.namespaces {
		o.namespaces[ns] = true
	}
	for i, token := range w.bundle.tokens {
		o.want[w.copyName(i)] = digest(token)
	}
	informer, err := c.GetInformer(ctx, &corev1.Secret{})
	if err != nil {
		return nil, fmt.Errorf("creating Secret informer: %w", err)
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.observe(obj, false) },
		UpdateFunc: func(_, obj any) { o.observe(obj, false) },
		DeleteFunc: func(obj any) { o.observe(obj, true) },
	})
	if err != nil {
		return nil, fmt.Errorf("watching token copies: %w", err)
	}
	return o, nil
}

// copyName is the name of token i's copies.
func (w *world) copyName(i int) string {
	return cpcreds.SecretName(w.clusters[i/w.bundle.msas].Name, msaName(i%w.bundle.msas))
}

func (o *copyObserver) observe(obj any, deleted bool) {
	now := time.Now()
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	s, ok := obj.(*corev1.Secret)
	if !ok || !o.namespaces[s.Namespace] {
		return
	}
	key := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
	o.mu.Lock()
	defer o.mu.Unlock()
	old, existed := o.copies[key]
	wasCurrent := existed && old == o.want[s.Name]
	if deleted {
		if existed {
			delete(o.copies, key)
			o.tally.removed(s.Namespace, now)
		}
		if wasCurrent {
			o.current--
		}
		return
	}
	token := digest(s.Data[cpcreds.SecretKeyToken])
	o.copies[key] = token
	if !existed {
		o.tally.added(s.Namespace)
	}
	isCurrent := token == o.want[s.Name]
	switch {
	case isCurrent && !wasCurrent:
		o.current++
		if _, seen := o.seenAt[key]; !seen {
			o.seenAt[key] = now
		}
		if o.current == o.target && o.allCurrentAt.IsZero() {
			o.allCurrentAt = now
		}
	case !isCurrent && wasCurrent:
		o.current--
	}
}

// expectToken makes token the wanted one of the copies named name, forgets
// when they were seen and restarts the wait for all current.
func (o *copyObserver) expectToken(name string, token []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	want, now := digest(token), time.Now()
	for ns := range o.namespaces {
		key := types.NamespacedName{Namespace: ns, Name: name}
		delete(o.seenAt, key)
		got, ok := o.copies[key]
		was, is := ok && got == o.want[name], ok && got == want
		switch {
		case was && !is:
			o.current--
		case is && !was:
			o.current++
			o.seenAt[key] = now
		}
	}
	o.want[name] = want
	o.allCurrentAt = time.Time{}
}

// allCurrent is when every copy last came to carry its wanted token; zero
// while one does not.
func (o *copyObserver) allCurrent() (current int, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.current, o.allCurrentAt
}

// seenEverywhere is when the last namespace's copy named name showed its
// wanted token; zero while one has not.
func (o *copyObserver) seenEverywhere(name string) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	var last time.Time
	for ns := range o.namespaces {
		at, ok := o.seenAt[types.NamespacedName{Namespace: ns, Name: name}]
		if !ok {
			return time.Time{}
		}
		last = maxTime(last, at)
	}
	return last
}

// seenTimes are, for the copies named name, when each showed its wanted token.
func (o *copyObserver) seenTimes(name string) []time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	var times []time.Time
	for ns := range o.namespaces {
		if at, ok := o.seenAt[types.NamespacedName{Namespace: ns, Name: name}]; ok {
			times = append(times, at)
		}
	}
	return times
}

// inNamespace is how many copies a namespace holds and when it last became
// empty.
func (o *copyObserver) inNamespace(ns string) (int, time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.tally.in(ns)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
