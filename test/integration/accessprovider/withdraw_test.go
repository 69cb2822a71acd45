package accessprovider_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// withdrawnWithin is how soon an entry leaves a namespace that stops
// serving its cluster when no mirror of this process is deleting the
// profile: "within seconds".
const withdrawnWithin = 5 * time.Second

// TestEntriesLeaveAnUnservedNamespaceWithinSeconds: when the binding goes
// and this process's mirror is not the one about to delete the profile, the
// entry is withdrawn at once, whatever the profile's managedFields claim.
// The profile here claims to be the mirror's (its creator applied it as the
// mirror's field manager), which no longer buys it the grace.
func TestEntriesLeaveAnUnservedNamespaceWithinSeconds(t *testing.T) {
	cases := map[string]struct {
		suffix string
		gates  map[string]bool
		// ocmMirror turns OCM's own mirror on: ours stays passive.
		ocmMirror bool
	}{
		"no mirror here":         {suffix: "off", gates: proxyGate},
		"OCM's mirror publishes": {suffix: "ocm", gates: map[string]bool{"ClusterProfile": true, "ClusterProfileAccessProvider": true}, ocmMirror: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := framework.ContextFor(t)
			c := env.Client
			ns, cluster := "withdraw-ns-"+tc.suffix, "withdraw-"+tc.suffix
			framework.InstallClusterProxy(ctx, t, env.Client, []byte("CA-1"))
			if tc.ocmMirror {
				enableOCMMirror(ctx, t)
			}
			framework.CreateNamespace(ctx, t, c, ns)
			framework.Serve(ctx, t, c, ns, cluster)
			claimToBeTheMirror(ctx, t, ns, cluster)
			framework.StartManager(t, env, framework.ManagerOptions{Gates: tc.gates})
			expectEntries(t, ctx, ns, cluster, "open-cluster-management")

			unbind(ctx, t, ns, "serve-"+cluster)
			unbound := time.Now()

			NewWithT(t).Eventually(func(g Gomega) []cpv1alpha1.AccessProvider {
				return getProfile(g, ctx, ns, cluster).Status.AccessProviders
			}, withdrawnWithin, 50*time.Millisecond).Should(BeEmpty())
			t.Logf("entries withdrawn %s after the binding went", time.Since(unbound).Round(time.Millisecond))
		})
	}
}

// TestEntriesGoWithTheProfilesOurMirrorDeletes: when this process's mirror
// deletes the profiles of an unbound namespace, the entries are not
// withdrawn first (which would cost a write per profile, racing the
// deletion): every version of the profile seen until it is gone carries both.
func TestEntriesGoWithTheProfilesOurMirrorDeletes(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	framework.InstallClusterProxy(ctx, t, env.Client, []byte("CA-1"))
	const ns = "withdraw-mirror-ns"
	clusters := []string{"withdraw-m1", "withdraw-m2", "withdraw-m3"}
	framework.CreateNamespace(ctx, t, c, ns)
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("withdraw-mirror-set").Obj())
	for _, cluster := range clusters {
		framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster(cluster).ClusterSet("withdraw-mirror-set").Obj())
	}
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding(ns, "withdraw-mirror-set").Bound(true).Obj())
	framework.StartManager(t, env, framework.ManagerOptions{Gates: map[string]bool{
		"ClusterProfile": true, "ClusterProfileAccessProvider": true, "ClusterProfileDirectAccess": true}})
	for _, cluster := range clusters {
		expectEntries(t, ctx, ns, cluster, "open-cluster-management")
	}
	seen := watchEntries(ctx, t, ns)

	NewWithT(t).Expect(c.Delete(ctx, utiltesting.MakeBinding(ns, "withdraw-mirror-set").Obj())).To(Succeed())

	NewWithT(t).Eventually(func(g Gomega) []string { return seen.deleted() }, framework.Timeout, framework.Interval).
		Should(ConsistOf(clusters))
	NewWithT(t).Expect(seen.withoutEntry()).To(BeEmpty(), "profiles seen without their entry before the mirror deleted them")
}

// claimToBeTheMirror creates cluster's profile in namespace with the
// mirror's field manager: what any writer can claim.
func claimToBeTheMirror(ctx context.Context, t *testing.T, namespace, cluster string) {
	t.Helper()
	p := utiltesting.MakeClusterProfile(namespace, cluster, "open-cluster-management").Obj()
	p.TypeMeta = metav1.TypeMeta{APIVersion: cpv1alpha1.GroupVersion.String(), Kind: "ClusterProfile"}
	p.Labels["open-cluster-management.io/cluster-name"] = cluster
	//lint:ignore SA1019 SSA through client.Apply is what a writer claiming the mirror's name does
	if err := env.Client.Patch(ctx, p, client.Apply, client.FieldOwner(clusterprofile.MirrorFieldManager), client.ForceOwnership); err != nil {
		t.Fatalf("creating ClusterProfile %s/%s as the mirror: %v", namespace, cluster, err)
	}
}

func unbind(ctx context.Context, t *testing.T, namespace, name string) {
	t.Helper()
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	NewWithT(t).Expect(env.Client.Delete(ctx, binding)).To(Succeed())
}

// enableOCMMirror writes the ClusterManager as `clusteradm init
// --feature-gates=ClusterProfile=true` does.
func enableOCMMirror(ctx context.Context, t *testing.T) {
	t.Helper()
	cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: "cluster-manager"},
		Spec: operatorv1.ClusterManagerSpec{RegistrationConfiguration: &operatorv1.RegistrationHubConfiguration{
			FeatureGates: []operatorv1.FeatureGate{{Feature: "ClusterProfile", Mode: operatorv1.FeatureGateModeTypeEnable}}}}}
	NewWithT(t).Expect(env.Client.Create(ctx, cm)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cm) })
}

// entryWatch records, for each profile of a namespace, whether a version
// without access entries was seen, and which profiles were deleted.
type entryWatch struct {
	mu      sync.Mutex
	missing map[string]bool
	gone    map[string]bool
}

func watchEntries(ctx context.Context, t *testing.T, namespace string) *entryWatch {
	t.Helper()
	watcher, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := watcher.Watch(ctx, &cpv1alpha1.ClusterProfileList{}, client.InNamespace(namespace))
	if err != nil {
		t.Fatalf("watching ClusterProfiles in %s: %v", namespace, err)
	}
	t.Cleanup(w.Stop)
	seen := &entryWatch{missing: map[string]bool{}, gone: map[string]bool{}}
	go func() {
		for e := range w.ResultChan() {
			p, ok := e.Object.(*cpv1alpha1.ClusterProfile)
			if !ok {
				continue
			}
			seen.mu.Lock()
			switch {
			case e.Type == watch.Deleted:
				seen.gone[p.Name] = true
			case len(p.Status.AccessProviders) == 0:
				seen.missing[p.Name] = true
			}
			seen.mu.Unlock()
		}
	}()
	return seen
}

func (s *entryWatch) deleted() []string { return s.names(s.gone) }

func (s *entryWatch) withoutEntry() []string { return s.names(s.missing) }

func (s *entryWatch) names(set map[string]bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Keys(set))
}
