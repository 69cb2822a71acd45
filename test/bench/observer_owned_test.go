package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
)

// TestOwnedObserver: the observer counts the wanted objects that carry what
// they should, says when all last came to, forgets that when one stops
// (the floor's objects of the same names come and go before the manager
// starts), ignores objects it does not want, and recounts when what they
// should carry changes.
func TestOwnedObserver(t *testing.T) {
	secret := func(name, value string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: name}, Data: map[string][]byte{"server": []byte(value)}}
	}
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "argocd", Name: name} }
	want := func(values map[string]string) map[types.NamespacedName]string {
		out := map[types.NamespacedName]string{}
		for name, value := range values {
			out[key(name)] = secretDigest(secret(name, value))
		}
		return out
	}
	type state struct {
		Current, Target, Left int
		AllCurrent            bool
	}
	o := newOwnedObserver(ownedKindOf("argocd"), want(map[string]string{"a": "1", "b": "1"}), func(obj any) (types.NamespacedName, string, bool) {
		s, ok := obj.(*corev1.Secret)
		if !ok {
			return types.NamespacedName{}, "", false
		}
		return key(s.Name), secretDigest(s), true
	})
	stateOf := func() state {
		current, target, at := o.allCurrent()
		left, _ := o.inNamespace("argocd")
		return state{Current: current, Target: target, Left: left, AllCurrent: !at.IsZero()}
	}
	steps := []struct {
		name string
		do   func()
		want state
	}{
		{"a as wanted", func() { o.observe(secret("a", "1"), false) }, state{Current: 1, Target: 2, Left: 1}},
		{"b not yet", func() { o.observe(secret("b", "0"), false) }, state{Current: 1, Target: 2, Left: 2}},
		{"not wanted", func() { o.observe(secret("c", "1"), false) }, state{Current: 1, Target: 2, Left: 2}},
		{"not a Secret", func() { o.observe(&corev1.ConfigMap{}, false) }, state{Current: 1, Target: 2, Left: 2}},
		{"b as wanted", func() { o.observe(secret("b", "1"), false) }, state{Current: 2, Target: 2, Left: 2, AllCurrent: true}},
		{"a deleted", func() { o.observe(toolscache.DeletedFinalStateUnknown{Obj: secret("a", "1")}, true) },
			state{Current: 1, Target: 2, Left: 1}},
		{"a again", func() { o.observe(secret("a", "1"), false) }, state{Current: 2, Target: 2, Left: 2, AllCurrent: true}},
		{"a rotated", func() { o.expect(want(map[string]string{"a": "2", "b": "1"})) }, state{Current: 1, Target: 2, Left: 2}},
		{"a follows", func() { o.observe(secret("a", "2"), false) }, state{Current: 2, Target: 2, Left: 2, AllCurrent: true}},
	}
	for _, step := range steps {
		step.do()
		if diff := cmp.Diff(step.want, stateOf()); diff != "" {
			t.Errorf("after %s (-want +got):\n%s", step.name, diff)
		}
	}
}
