//go:build linux

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
)

// churnClaim is the fact this test moves: a ClusterClaim on cluster1, which
// the klusterlet carries to the hub and the mirror makes a property.
const churnClaim = "churn.e2e.clusterprofile.io"

// multiKueueWorkerUser is who MultiKueue is on a worker: the
// ManagedServiceAccount's service account, whose token cp-creds hands out.
var multiKueueWorkerUser = serviceaccount.MakeUsername(agentapi.DefaultInstallNamespace, consumer.ManagedServiceAccount)

// TestMultiKueueReconnectsOnlyWhenAFactIsPublished counts, from cluster1's
// API server audit log, the Workload watches real Kueue v0.16.1 on the hub
// opens there as MultiKueue (the worker's own Kueue watches them too, as
// itself; kueue_test.go's test, which upgrades Kueue, runs after this
// file's, as go test runs a package's files in name order): Kueue rebuilds
// its client for a worker on every write of the worker's profile and opens
// its watches again. Without the write budget
// every change of a claim costs a rebuild; with it, once its one
// publication of slack is spent, changes inside the budget's interval cost
// none, and the last of them goes out, as one rebuild, when the interval
// ends. A write of something else (a condition,
// an entry) goes out at once and costs a rebuild as well: the watch of the
// profile counts those, so that one in the interval is not taken for a
// fact's.
func TestMultiKueueReconnectsOnlyWhenAFactIsPublished(t *testing.T) {
	ctx, g := begin(t)
	const cluster = "cluster1"
	worker := env.Cluster(cluster)
	g.Expect(allowMultiKueueWorker(ctx, t, cluster)).To(Succeed())
	claims, err := client.New(worker.Config, client.Options{Scheme: scheme.New()})
	g.Expect(err).NotTo(HaveOccurred())
	claim := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: churnClaim}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "40"}}
	g.Expect(claims.Create(ctx, claim)).To(Succeed())
	t.Cleanup(func() {
		_ = claims.Delete(context.Background(), claim)
		g.Expect(env.UpgradeBundle(context.Background(), releaseName, releaseNamespace, nil)).To(Succeed())
	})
	mkc := newMultiKueueCluster(cluster, cluster)
	g.Expect(hub.Create(ctx, mkc)).To(Succeed())
	t.Cleanup(func() { _ = client.IgnoreNotFound(hub.Delete(context.Background(), mkc)) })

	rebuilds := func() int {
		n, err := watchesOpened(worker.ControlPlane, multiKueueWorkerUser, "kueue.x-k8s.io", "workloads")
		g.Expect(err).NotTo(HaveOccurred())
		return n
	}
	setClaim := func(value int) {
		claim.Spec.Value = strconv.Itoa(value)
		g.Expect(claims.Update(ctx, claim)).To(Succeed())
		g.Eventually(func(g Gomega) {
			mc := &clusterv1.ManagedCluster{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: cluster}, mc)).To(Succeed())
			g.Expect(mc.Status.ClusterClaims).To(ContainElement(clusterv1.ManagedClusterClaim{Name: churnClaim, Value: claim.Spec.Value}))
		}).Should(Succeed(), "the klusterlet carries %s=%s to the hub", churnClaim, claim.Spec.Value)
	}
	published := func() string {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(hub.Get(ctx, key(consumerNS, cluster), p)).To(Succeed())
		return propertyValue(p, churnClaim)
	}
	// settled waits for Kueue to be connected and its watch count to
	// stand still, and returns it.
	settled := func() int {
		g.Eventually(multiKueueClusterActive(ctx, cluster)).Should(Succeed())
		var last int
		g.Eventually(func() bool { n := rebuilds(); stable := n == last && n > 0; last = n; return stable }).
			WithPolling(3 * time.Second).Should(BeTrue())
		return last
	}

	// Without the budget, every change is a write and a rebuild.
	g.Expect(env.UpgradeBundle(ctx, releaseName, releaseNamespace, map[string]any{"facts": map[string]any{"minInterval": "0"}})).To(Succeed())
	g.Eventually(published).Should(Equal("40"))
	base := settled()
	for i, value := range []int{41, 80} {
		setClaim(value)
		g.Eventually(published).Should(Equal(strconv.Itoa(value)))
		g.Eventually(rebuilds).Should(BeNumerically(">=", base+i+1), "Kueue reconnects after the write of %d", value)
	}
	t.Logf("without the budget: 2 changes, %d Workload watches opened on %s", settled()-base, cluster)

	// With it: the first change after the manager starts goes out at once,
	// and so does a significant one right after it (the budget's slack);
	// the next ones wait for the interval, then the last goes out, as one
	// write and one reconnect, skipping the values in between.
	g.Expect(env.UpgradeBundle(ctx, releaseName, releaseNamespace, map[string]any{
		"facts": map[string]any{"minInterval": "1m", "significantChange": 0.1, "refresh": "2m"}})).To(Succeed())
	setClaim(100)
	g.Eventually(published).Should(Equal("100"))
	profile := watchPublished(ctx, t, cluster)
	first := settled()
	// Any other write of the profile (a condition, an entry) costs a
	// reconnect too, and is published at once: the fact's changes may
	// cost none.
	otherWrites := profile.Writes()
	setClaim(60)
	g.Eventually(published).Should(Equal("60"), "a significant change right after the first goes out on the slack")
	for _, value := range []int{61, 150} { // noise, then a significant change with the slack spent
		setClaim(value)
		g.Consistently(func(g Gomega) {
			g.Expect(published()).To(Equal("60"))
			g.Expect(rebuilds()).To(BeNumerically("<=", first+profile.Writes()-otherWrites),
				"reconnects beyond the profile's writes:\n%s", strings.Join(profile.Log(), "\n"))
		}).WithTimeout(3*time.Second).WithPolling(time.Second).Should(Succeed(), "%d inside the interval", value)
	}
	if n := profile.Writes() - otherWrites - 1; n > 0 {
		t.Logf("%d other writes of the profile inside the interval", n)
	}
	t.Logf("writes of the profile since the first publication:\n%s", strings.Join(profile.Log(), "\n"))
	g.Eventually(published).Should(Equal("150"), "the last change goes out when the interval ends")
	g.Expect(profile.Values()).To(Equal([]string{"100", "60", "150"}), "values of %s the profile carried", churnClaim)
	g.Expect(settled()).To(BeNumerically(">", first), "Kueue reconnects once the held change is written")
	t.Logf("with the budget: 4 changes, 3 writes of the fact, %d Workload watches opened on %s after the first", rebuilds()-first, cluster)
}

// publishedWatch follows the kueue-system profile of a cluster.
type publishedWatch struct {
	mu sync.Mutex
	// values are the successive values of churnClaim the profile carried
	// (a value is listed again only after another one).
	values []string
	// writes counts the profile's updates; log says each one: when, and
	// the field managers whose entries it moved.
	writes int
	log    []string
	// managed is when each field manager (and subresource) last wrote.
	managed map[string]time.Time
}

// watchPublished follows the kueue-system profile of cluster from now on.
func watchPublished(ctx context.Context, t *testing.T, cluster string) *publishedWatch {
	t.Helper()
	ctx, cl := hubWatcher(ctx, t)
	w, err := cl.Watch(ctx, &cpv1alpha1.ClusterProfileList{}, client.InNamespace(consumerNS),
		client.MatchingFields{"metadata.name": cluster})
	if err != nil {
		t.Fatal(err)
	}
	pw := &publishedWatch{managed: map[string]time.Time{}}
	go func() {
		defer w.Stop()
		for e := range w.ResultChan() {
			p, ok := e.Object.(*cpv1alpha1.ClusterProfile)
			if !ok {
				continue
			}
			value := propertyValue(p, churnClaim)
			pw.mu.Lock()
			moved := pw.managersMoved(p)
			if e.Type == watch.Modified {
				pw.writes++
				pw.log = append(pw.log, fmt.Sprintf("%s %s=%s by %s", time.Now().Format("15:04:05.000"), churnClaim, value, moved))
			}
			if len(pw.values) == 0 || pw.values[len(pw.values)-1] != value {
				pw.values = append(pw.values, value)
			}
			pw.mu.Unlock()
		}
	}()
	return pw
}

// Values returns the values of churnClaim the profile carried.
func (pw *publishedWatch) Values() []string {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return slices.Clone(pw.values)
}

// managersMoved records p's field managers and names those whose entry's
// time changed since the last event (the API server keeps it to the
// second, so a manager's second write within a second names none). Called
// with pw.mu held.
func (pw *publishedWatch) managersMoved(p *cpv1alpha1.ClusterProfile) []string {
	var moved []string
	for _, m := range p.ManagedFields {
		key := m.Manager + "/" + m.Subresource
		if m.Time != nil && !pw.managed[key].Equal(m.Time.Time) {
			pw.managed[key] = m.Time.Time
			moved = append(moved, key)
		}
	}
	return moved
}

// Log returns every update of the profile: when, the fact's value, and
// the field managers whose entries it moved.
func (pw *publishedWatch) Log() []string {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return slices.Clone(pw.log)
}

// Writes returns how many times the profile was updated.
func (pw *publishedWatch) Writes() int {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.writes
}

func propertyValue(p *cpv1alpha1.ClusterProfile, name string) string {
	for _, prop := range p.Status.Properties {
		if prop.Name == name {
			return prop.Value
		}
	}
	return ""
}
