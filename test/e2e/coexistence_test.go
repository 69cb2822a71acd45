//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	"open-cluster-management.io/clusterprofile-bundle/pkg/doctor"
	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
	"open-cluster-management.io/clusterprofile-bundle/test/docsrun"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/addons"
)

// upstreamGates are the gates the seed guide turns on: OCM's mirror
// (`clusteradm init --feature-gates=ClusterProfile=true`, step 1),
// cluster-proxy's writer (featureGates.clusterProfileAccessProvider, step 3)
// and managed-serviceaccount's syncer (featureGates.clusterProfileCredSyncer,
// step 4).
var upstreamGates = []struct {
	deployment string // "" for the ClusterManager
	gate       string
}{
	{"", coexistence.BuiltInGate},
	{addons.ProxyManagerDeployment, "ClusterProfileAccessProvider"},
	{addons.MSAManagerDeployment, "ClusterProfileCredSyncer"},
}

// fleetClusters are the suite's managed clusters.
var fleetClusters = []string{"cluster1", "cluster2"}

// steadyWindow is how long writes are counted once the writers settle.
const steadyWindow = time.Minute

// TestUpstreamWritersAndTheBundleHandOverInPlace follows the seed's install
// path on the operator-managed OCM with the bundle installed (every gate):
// upstream's three ClusterProfile writers switched on (the bundle yields:
// it writes nothing, the doctor says who wrote what, no writer loops over a
// minute, and a consumer reaches every cluster through cp-creds with
// upstream's entry and copy); the bundle uninstalled (upstream keeps
// everything); the bundle installed again as install.md's first step of the
// move says, typed (it yields from its first reconcile); upstream's gates
// turned off (the bundle takes over). Through
// every step the same profiles and copies stay, none is deleted, the
// cluster-proxy entry is never absent from a profile, and real MultiKueue
// keeps a MultiKueueCluster per cluster Active (its watch sees no other
// state).
func TestUpstreamWritersAndTheBundleHandOverInPlace(t *testing.T) {
	ctx, g := begin(t)
	// upstreamNS is bound while upstream writes: OCM's mirror publishes its
	// profiles and managed-serviceaccount's syncer creates its copies.
	const upstreamNS = "e2e-upstream"
	namespaces := []string{consumerNS, upstreamNS}
	g.Eventually(func(g Gomega) { ownedByBundle(ctx, g, consumerNS) }).Should(Succeed(), "the bundle writes every profile, entry and copy")
	reachesEveryCluster(ctx, g, "the bundle writing", consumerNS)
	workers := multiKueueWorkers(ctx, t, g)
	fleet := watchFleet(ctx, t, namespaces...)
	fleet.followMultiKueue(t, workers)
	// Cleanups run last first: upstream's writers go off before the
	// suite's release comes back, or it would yield to them.
	docsReleaseInstalled := false
	t.Cleanup(func() {
		if docsReleaseInstalled {
			restoreSuiteRelease(t)
		}
	})
	t.Cleanup(func() { setUpstream(context.Background(), t, false) })

	setUpstream(ctx, t, true)
	g.Eventually(func(g Gomega) { ownedByUpstream(ctx, g, consumerNS) }).Should(Succeed(), "upstream's writers took over")
	g.Expect(bindSet(ctx, upstreamNS, defaultSet)).To(Succeed())
	// OCM's restarted registration controller waits for its predecessor's
	// leader lease to expire (up to 2m43s, it logs) before its mirror runs.
	g.Eventually(func(g Gomega) { ownedByUpstream(ctx, g, upstreamNS) }, 5*time.Minute).Should(Succeed(), "upstream's writers publish a new namespace")
	for _, cluster := range fleetClusters {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(hub.Get(ctx, key(upstreamNS, cluster), p)).To(Succeed())
		g.Expect(managerNames(p.ManagedFields)).NotTo(ContainElement(clusterprofile.MirrorFieldManager), "OCM's mirror created %s", cluster)
	}
	before := fleet.uids(ctx, g, namespaces)
	settled := time.Now()
	counts := fleet.countWrites(steadyWindow)
	t.Logf("writes while upstream writes (per object, in each half of %s): %v", steadyWindow, counts)
	for object, halves := range counts {
		g.Expect(halves[1]).To(BeNumerically("<=", max(halves[0], 2)), "%s: writes grow (a loop)", object)
	}
	g.Expect(fleet.bundleWritesSince(settled)).To(BeEmpty(), "the bundle writes while it yields")
	reachesEveryCluster(ctx, g, "upstream writing", namespaces...)
	report := runDoctor(t)
	g.Expect(report.Mirror).To(HavePrefix("OCM's built-in mirror publishes the profiles"))
	for _, row := range report.Rows {
		g.Expect(row.OK()).To(BeTrue(), "doctor row %s: %+v", row.Cluster, row.Checks)
		g.Expect(strings.Join(row.Notes, "\n")).To(And(
			ContainSubstring("written by another writer (cluster-proxy-manager)"),
			ContainSubstring("written by managed-serviceaccount's own syncer")), "doctor notes of %s", row.Cluster)
	}

	g.Expect(env.UninstallChart(ctx, releaseName, releaseNamespace)).To(Succeed())
	time.Sleep(10 * time.Second) // whatever the uninstall sets off has happened
	for _, ns := range namespaces {
		g.Eventually(func(g Gomega) { ownedByUpstream(ctx, g, ns) }).Should(Succeed(), "upstream keeps %s after the uninstall", ns)
	}
	reachesEveryCluster(ctx, g, "after the bundle's uninstall", namespaces...)

	// install.md's first step of the move, typed; the one edit is its
	// image mirror. The suite's release comes back at the end.
	installed := time.Now()
	docsReleaseInstalled = true
	shell := docsShellFor(t)
	yielding := shell.run(t, docsrun.MoveInstall, installFromCloneWithMirror())[1]
	g.Expect(env.WaitDeploymentAvailable(ctx, docsNamespace, docsRelease)).To(Succeed())
	time.Sleep(20 * time.Second) // the manager's first reconciles
	// The documented install leaves the direct entry off, which the
	// suite's release had on: it withdraws that entry (a disabled
	// provider's entry is withdrawn in every install, under the direct
	// provider's field manager), and its syncer's marks then record the
	// servers the profiles publish without it. It writes nothing else.
	for _, write := range fleet.bundleWritesSince(installed) {
		g.Expect(write).To(Or(ContainSubstring(" by "+credsync.MarksFieldManager+" at "), And(HavePrefix("ClusterProfile "),
			ContainSubstring(" by "+accessprovider.DirectFieldManager+" at "))), "the bundle writes when installed beside upstream's writers")
	}
	for _, ns := range namespaces {
		withoutTheDirectEntry(ctx, g, ns)
	}
	for _, twin := range []string{addons.ProxyManagerDeployment, addons.MSAManagerDeployment} {
		g.Expect(yielding).To(ContainSubstring("deployment/"+twin), "install.md's step 1 lists the Event on each twin")
	}

	setUpstream(ctx, t, false)
	for _, ns := range namespaces {
		g.Eventually(func(g Gomega) { publishedByTheDocsRelease(ctx, g, ns) }).Should(Succeed(), "the bundle took %s over", ns)
	}
	reachesEveryCluster(ctx, g, "the bundle writing again", namespaces...)

	g.Expect(fleet.uids(ctx, g, namespaces)).To(Equal(before), "the same profiles and copies throughout")
	g.Expect(fleet.problems()).To(BeEmpty())
}

// reachesEveryCluster: a consumer of each namespace (its own hub identity,
// cp-creds with the synced copy) lists namespaces on every cluster through
// the profile's cluster-proxy entry.
func reachesEveryCluster(ctx context.Context, g Gomega, step string, namespaces ...string) {
	for _, ns := range namespaces {
		c, err := newConsumer(ctx, ns)
		g.Expect(err).NotTo(HaveOccurred())
		c.Dial = env.DialServices
		for _, cluster := range fleetClusters {
			g.Eventually(func() ([]string, error) { return c.ListNamespaces(ctx, cluster) }).
				Should(ContainElement("open-cluster-management-agent"), "%s: namespaces of %s from %s", step, cluster, ns)
		}
	}
}

// setUpstream turns upstream's ClusterProfile writers on or off as the seed
// guide's steps do (see upstreamGates); OCM's mirror by typing install.md's
// commands (docsrun.OCMMirrorGate), after which the harness waits for OCM's
// operator to roll the change out.
func setUpstream(ctx context.Context, t *testing.T, on bool) {
	t.Helper()
	for _, u := range upstreamGates {
		if u.deployment == "" {
			setOCMMirror(ctx, t, on)
			continue
		}
		gates := map[string]bool{u.gate: on}
		if !on {
			gates = nil
		}
		if err := env.SetAddonManagerFeatureGates(ctx, u.deployment, gates); err != nil {
			t.Fatalf("turning %s %v: %v", u.gate, on, err)
		}
	}
}

// requireOnlyTheMirrorGate fails unless the ClusterManager's gates printed
// by install.md's first command are at most OCM's mirror gate: the patch
// that follows replaces the list, and the docs tell the user to keep any
// other gate in it.
func requireOnlyTheMirrorGate(t *testing.T, printed string) {
	t.Helper()
	if strings.TrimSpace(printed) == "" {
		return
	}
	var gates []struct {
		Feature string `json:"feature"`
	}
	if err := json.Unmarshal([]byte(printed), &gates); err != nil {
		t.Fatalf("the ClusterManager's gates as install.md prints them: %v: %q", err, printed)
	}
	for _, g := range gates {
		if g.Feature != coexistence.BuiltInGate {
			t.Fatalf("the hub has gate %s, which install.md's patch as typed would drop", g.Feature)
		}
	}
}

// ownedByUpstream: every profile's cluster-proxy entry is cluster-proxy's
// own (its Service address), and every copy is managed-serviceaccount's
// (which leaves a copy alone while it holds what it would write), vouched
// for by the bundle's marks.
func ownedByUpstream(ctx context.Context, g Gomega, namespace string) {
	for _, cluster := range fleetClusters {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(hub.Get(ctx, key(namespace, cluster), p)).To(Succeed())
		g.Expect(proxyEntry(g, p).Cluster.Server).To(Equal(
			"https://cluster-proxy-addon-user.open-cluster-management-addon:9092/"+cluster), "the entry of %s in %s", cluster, namespace)
		copy := &corev1.Secret{}
		g.Expect(hub.Get(ctx, key(namespace, cpcreds.SecretName(cluster, msaName)), copy)).To(Succeed())
		g.Expect(copy.Annotations).To(HaveKeyWithValue(cpcreds.AnnotationUpstreamCopy, "true"), "copy of %s in %s", cluster, namespace)
	}
}

// withoutTheDirectEntry: no profile of namespace has the direct entry, and
// no copy's marks record its server (the cluster's API server).
func withoutTheDirectEntry(ctx context.Context, g Gomega, namespace string) {
	for _, cluster := range fleetClusters {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(hub.Get(ctx, key(namespace, cluster), p)).To(Succeed())
		g.Expect(p.Status.AccessProviders).NotTo(ContainElement(HaveField("Name", accessprovider.DefaultDirectEntryName)), "the profile of %s in %s", cluster, namespace)
		copy := &corev1.Secret{}
		g.Expect(hub.Get(ctx, key(namespace, cpcreds.SecretName(cluster, msaName)), copy)).To(Succeed())
		g.Expect(copy.Annotations[cpcreds.AnnotationPublishedServers]).NotTo(ContainSubstring(env.Cluster(cluster).URL), "the marks of %s in %s", cluster, namespace)
	}
}

// ownedByBundle: every entry is the bundle's (its user server address) and
// every copy is the bundle syncer's own, unmarked as another's.
func ownedByBundle(ctx context.Context, g Gomega, namespace string) {
	for _, cluster := range fleetClusters {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(hub.Get(ctx, key(namespace, cluster), p)).To(Succeed())
		g.Expect(proxyEntry(g, p).Cluster.Server).To(Equal(env.Proxy.URL+"/"+cluster), "the entry of %s in %s", cluster, namespace)
		copy := &corev1.Secret{}
		g.Expect(hub.Get(ctx, key(namespace, cpcreds.SecretName(cluster, msaName)), copy)).To(Succeed())
		g.Expect(copy.Annotations).NotTo(HaveKey(cpcreds.AnnotationUpstreamCopy), "copy of %s in %s", cluster, namespace)
		g.Expect(copy.Annotations).To(HaveKey(cpcreds.AnnotationPublishedServers), "copy of %s in %s", cluster, namespace)
		g.Expect(managerNames(copy.ManagedFields)).To(ContainElement(credsync.FieldManager), "copy of %s in %s", cluster, namespace)
	}
}

func managerNames(fields []metav1.ManagedFieldsEntry) []string {
	var names []string
	for _, f := range fields {
		names = append(names, f.Manager)
	}
	return names
}

// multiKueueWorkers makes every cluster a worker of the real MultiKueue on
// the hub through its profile in kueue-system, and returns once each
// MultiKueueCluster is Active.
func multiKueueWorkers(ctx context.Context, t *testing.T, g Gomega) []string {
	t.Helper()
	var names []string
	for _, cluster := range fleetClusters {
		g.Expect(allowMultiKueueWorker(ctx, t, cluster)).To(Succeed())
		mkc := newMultiKueueCluster("handover-"+cluster, cluster)
		g.Expect(hub.Create(ctx, mkc)).To(Succeed())
		t.Cleanup(func() { _ = client.IgnoreNotFound(hub.Delete(context.Background(), mkc)) })
		names = append(names, mkc.GetName())
	}
	for _, name := range names {
		g.Eventually(func(g Gomega) {
			c, err := multiKueueClusterCondition(ctx, hub, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%s: %s", c.Reason, c.Message)
		}).Should(Succeed(), "MultiKueueCluster %s Active", name)
	}
	return names
}

// followMultiKueue records, as something gone wrong, every version of the
// named MultiKueueClusters that is not Active.
func (w *fleetWatch) followMultiKueue(t *testing.T, names []string) {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(multiKueueClusterGVK.GroupVersion().WithKind(multiKueueClusterGVK.Kind + "List"))
	w.follow(t, "", list, func(obj runtime.Object) (string, []metav1.ManagedFieldsEntry, string) {
		u := obj.(*unstructured.Unstructured)
		if !slices.Contains(names, u.GetName()) {
			return "", nil, ""
		}
		object := "MultiKueueCluster " + u.GetName()
		conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conditions {
			c, _ := c.(map[string]any)
			if c["type"] == "Active" && c["status"] != string(metav1.ConditionTrue) {
				return object, nil, fmt.Sprintf("not Active: %v: %v", c["reason"], c["message"])
			}
		}
		return object, nil, ""
	})
}

// runDoctor runs the kubectl plugin's doctor in the consumer's namespace
// as the hub's admin (who may read ClusterManagers).
func runDoctor(t *testing.T) doctor.Report {
	t.Helper()
	cmd := exec.Command(filepath.Join(ocmlocal.RepoRoot(), "bin", "kubectl-clusterprofile"), "doctor",
		"--kubeconfig", env.Hub.KubeconfigPath, "-n", consumerNS, "--managed-serviceaccount", msaName, "-o", "json")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
	report := doctor.Report{}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("doctor's report: %v\n%s", err, out)
	}
	return report
}

// fleetWatch watches the profiles and token copies of a namespace from the
// API server and keeps what a consumer's informer would see go wrong: a
// deletion, a profile version without the cluster-proxy entry. It also
// keeps every version's managed fields, to count writes and tell who made
// them.
type fleetWatch struct {
	// ctx ends with the test, and every watch with it.
	ctx    context.Context
	client client.WithWatch
	mu     sync.Mutex
	events []fleetEvent
	// wrong is what a consumer would have seen go wrong.
	wrong []string
}

type fleetEvent struct {
	at     time.Time
	object string
	fields []metav1.ManagedFieldsEntry
}

// hubWatcher is a client of the hub that watches, and a context that ends
// with the test, and every watch with it.
func hubWatcher(ctx context.Context, t *testing.T) (context.Context, client.WithWatch) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	cl, err := client.NewWithWatch(env.HubConfig(), client.Options{Scheme: hub.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, cl
}

func watchFleet(ctx context.Context, t *testing.T, namespaces ...string) *fleetWatch {
	t.Helper()
	ctx, cl := hubWatcher(ctx, t)
	w := &fleetWatch{ctx: ctx, client: cl}
	for _, namespace := range namespaces {
		w.follow(t, namespace, &cpv1alpha1.ClusterProfileList{}, func(obj runtime.Object) (string, []metav1.ManagedFieldsEntry, string) {
			p := obj.(*cpv1alpha1.ClusterProfile)
			name := "ClusterProfile " + p.Namespace + "/" + p.Name
			for _, e := range p.Status.AccessProviders {
				if e.Name == consumer.ProxyProvider {
					return name, p.ManagedFields, ""
				}
			}
			return name, p.ManagedFields, "has no " + consumer.ProxyProvider + " entry"
		})
		w.follow(t, namespace, &corev1.SecretList{}, func(obj runtime.Object) (string, []metav1.ManagedFieldsEntry, string) {
			s := obj.(*corev1.Secret)
			if !strings.HasSuffix(s.Name, "-"+msaName) {
				return "", nil, ""
			}
			return "Secret " + s.Namespace + "/" + s.Name, s.ManagedFields, ""
		})
	}
	return w
}

// follow watches one kind from now on (a RetryWatcher resumes after the
// server closes the watch) and records its events.
func (w *fleetWatch) follow(t *testing.T, namespace string, list client.ObjectList,
	read func(runtime.Object) (object string, fields []metav1.ManagedFieldsEntry, problem string)) {
	t.Helper()
	ctx, cl := w.ctx, w.client
	if err := cl.List(ctx, list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return cl.Watch(ctx, list.DeepCopyObject().(client.ObjectList), client.InNamespace(namespace), &client.ListOptions{Raw: &opts})
	}}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), lw)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer rw.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					return
				}
				if ev.Type == watch.Bookmark || ev.Type == watch.Error {
					continue
				}
				object, fields, problem := read(ev.Object)
				if object == "" {
					continue
				}
				w.record(ev.Type, object, fields, problem)
			}
		}
	}()
}

func (w *fleetWatch) record(kind watch.EventType, object string, fields []metav1.ManagedFieldsEntry, problem string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	switch {
	case kind == watch.Deleted:
		w.wrong = append(w.wrong, fmt.Sprintf("%s %s deleted", now.Format(time.TimeOnly), object))
	case problem != "":
		w.wrong = append(w.wrong, fmt.Sprintf("%s %s %s", now.Format(time.TimeOnly), object, problem))
	}
	w.events = append(w.events, fleetEvent{at: now, object: object, fields: fields})
}

// countWrites waits for window and returns, per object written in it, the
// number of writes in each of its halves.
func (w *fleetWatch) countWrites(window time.Duration) map[string][2]int {
	start := time.Now()
	time.Sleep(window)
	w.mu.Lock()
	defer w.mu.Unlock()
	counts := map[string][2]int{}
	for _, ev := range w.events {
		if ev.at.Before(start) {
			continue
		}
		half := 0
		if ev.at.Sub(start) >= window/2 {
			half = 1
		}
		n := counts[ev.object]
		n[half]++
		counts[ev.object] = n
	}
	return counts
}

// bundleWritesSince lists the writes the bundle's own field managers made
// after since (managed fields carry whole seconds: one is allowed for).
func (w *fleetWatch) bundleWritesSince(since time.Time) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	after := since.Truncate(time.Second).Add(time.Second)
	seen := map[string]bool{}
	var writes []string
	for _, ev := range w.events {
		for _, f := range ev.fields {
			if !strings.HasPrefix(f.Manager, fieldmanager.Prefix) || f.Time == nil || f.Time.Time.Before(after) {
				continue
			}
			write := fmt.Sprintf("%s by %s at %s", ev.object, f.Manager, f.Time.Format(time.TimeOnly))
			if !seen[write] {
				seen[write] = true
				writes = append(writes, write)
			}
		}
	}
	return writes
}

func (w *fleetWatch) problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.wrong...)
}

// uids are the UIDs of the clusters' profiles and copies in namespaces.
func (w *fleetWatch) uids(ctx context.Context, g Gomega, namespaces []string) map[string]types.UID {
	out := map[string]types.UID{}
	for _, ns := range namespaces {
		for _, cluster := range fleetClusters {
			p := &cpv1alpha1.ClusterProfile{}
			g.Expect(hub.Get(ctx, key(ns, cluster), p)).To(Succeed())
			out["ClusterProfile "+ns+"/"+cluster] = p.UID
			s := &corev1.Secret{}
			g.Expect(hub.Get(ctx, key(ns, cpcreds.SecretName(cluster, msaName)), s)).To(Succeed())
			out["Secret "+ns+"/"+s.Name] = s.UID
		}
	}
	return out
}
