package agent_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agent/agenttest"
	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// The manager's probes answer from the agent's rounds, and the addon lease
// updater waits for the first one: while the first round hangs on the
// managed API server's /readyz, the agent is alive but not ready and has no
// lease; once it ends, the agent is ready and the lease appears at once. (An
// updater started earlier would skip its first renewal, the agent not yet
// reporting, and create the lease only a lease period later.)
func TestProbesAndLeaseFollowTheFirstRound(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster, leaseNamespace = "first-round", "first-round-addon"
	createAddon(ctx, t, cluster)
	createNode(ctx, t, agenttest.MakeNode("first-round-node").Capacity("4", "16Gi", "110"))
	freshControlPlane(ctx, t)
	cleanUpClaims(t)
	err := managed.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}})
	NewWithT(t).Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
	held := &heldReadyz{release: make(chan struct{})}
	t.Cleanup(held.let)
	probeAddr := freeAddress(t)
	startAgent(t, agentRun{cluster: cluster, managed: held.wrap(managed.Config), addonNamespace: leaseNamespace, probeAddr: probeAddr})

	g := NewWithT(t)
	g.Eventually(held.arrived.Load, framework.Timeout, framework.Interval).Should(BeTrue(), "the first round asks for /readyz")
	g.Consistently(func(g Gomega) {
		g.Expect(getProbe(g, probeAddr, "/healthz?verbose")).To(Equal(probeAnswer{http.StatusOK, []string{"[+]ping ok", "[+]rounds ok"}}))
		g.Expect(getProbe(g, probeAddr, "/readyz?verbose")).To(Equal(probeAnswer{http.StatusInternalServerError, []string{"[-]first-round failed: reason withheld", "[+]ping ok"}}))
		_, err := managedKube.CoordinationV1().Leases(leaseNamespace).Get(ctx, agentapi.AddonName, metav1.GetOptions{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the addon lease before the first round ended: %v", err)
	}, 10*testPeriod, framework.Interval).Should(Succeed())

	held.let()
	g.Eventually(func(g Gomega) {
		g.Expect(getProbe(g, probeAddr, "/readyz?verbose")).To(Equal(probeAnswer{http.StatusOK, []string{"[+]first-round ok", "[+]ping ok"}}))
		l, err := managedKube.CoordinationV1().Leases(leaseNamespace).Get(ctx, agentapi.AddonName, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(l.Spec.RenewTime).NotTo(BeNil())
	}, framework.Timeout, framework.Interval).Should(Succeed())
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, allNodesReady)
}

// On the manager the agent still reads the managed cluster with plain
// requests, a few per period: the manager's cache starts no informer, so
// nothing keeps a copy of every node. The one watch is the agent's own of
// the nodes, which keeps a line per node, started from a one-item list.
func TestTheManagerStartsNoInformers(t *testing.T) {
	ctx := framework.ContextFor(t)
	const cluster = "no-informers"
	createAddon(ctx, t, cluster)
	createNode(ctx, t, agenttest.MakeNode("no-informers-node").Capacity("4", "16Gi", "110"))
	freshControlPlane(ctx, t)
	cleanUpClaims(t)
	requests := &requestLog{}
	startAgent(t, agentRun{cluster: cluster, managed: requests.wrap(managed.Config)})
	expectCondition(t, ctx, cluster, agentapi.ConditionAllNodesHealthy, metav1.ConditionTrue, agentapi.ReasonAgentNodesHealthy, allNodesReady)
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(addonLease(g, ctx).Spec.RenewTime).NotTo(BeNil())
	}, framework.Timeout, framework.Interval).Should(Succeed())
	time.Sleep(5 * testPeriod) // a few more rounds

	// What one round and the lease updater read and write, and nothing else.
	allowed := []string{
		"GET /readyz?verbose=true",
		"GET /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/" + "kube-controller-manager",
		"GET /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/" + "kube-scheduler",
		"GET /api/v1/nodes?limit=500",
		"GET /api/v1/nodes?limit=1",
		"GET /apis/rbac.authorization.k8s.io/v1/clusterroles/" + agentapi.ClusterRole,
		"GET /api/v1/nodes?resourceVersion=",
		"GET /apis/cluster.open-cluster-management.io/v1alpha1/clusterclaims",
		"POST /apis/cluster.open-cluster-management.io/v1alpha1/clusterclaims?",
		"PUT /apis/cluster.open-cluster-management.io/v1alpha1/clusterclaims/",
		"DELETE /apis/cluster.open-cluster-management.io/v1alpha1/clusterclaims/",
		"GET /apis/coordination.k8s.io/v1/namespaces/" + addonNamespace + "/leases/" + agentapi.AddonName,
		"PUT /apis/coordination.k8s.io/v1/namespaces/" + addonNamespace + "/leases/" + agentapi.AddonName,
		"POST /apis/coordination.k8s.io/v1/namespaces/" + addonNamespace + "/leases",
	}
	sent := requests.all()
	NewWithT(t).Expect(sent).To(ContainElement(HavePrefix("GET /api/v1/nodes")))
	var unexpected []string
	for _, r := range sent {
		nodeWatch := strings.HasPrefix(r, "GET /api/v1/nodes?") && strings.Contains(r, "watch=true")
		if (strings.Contains(r, "watch=") && !nodeWatch) || !slices.ContainsFunc(allowed, func(p string) bool { return strings.HasPrefix(r, p) }) {
			unexpected = append(unexpected, r)
		}
	}
	NewWithT(t).Expect(unexpected).To(BeEmpty(), "requests to the managed cluster that no round or lease renewal makes")
}

// probeAnswer is a probe endpoint's status code and the lines of its body
// that name a check.
type probeAnswer struct {
	code   int
	checks []string
}

func getProbe(g Gomega, addr, path string) probeAnswer {
	resp, err := http.Get(fmt.Sprintf("http://%s%s", addr, path))
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	answer := probeAnswer{code: resp.StatusCode}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "[+]") || strings.HasPrefix(line, "[-]") {
			answer.checks = append(answer.checks, line)
		}
	}
	return answer
}

// heldReadyz holds the managed API server's /readyz answers until let is
// called, so that the agent's first round cannot end.
type heldReadyz struct {
	release chan struct{}
	once    sync.Once
	arrived atomic.Bool
}

func (h *heldReadyz) let() { h.once.Do(func() { close(h.release) }) }

func (h *heldReadyz) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Path == "/readyz" {
				h.arrived.Store(true)
				select {
				case <-h.release:
				case <-req.Context().Done():
					return nil, req.Context().Err()
				}
			}
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

// requestLog records every request sent to an API server, as
// "METHOD path?query".
type requestLog struct {
	mu       sync.Mutex
	requests []string
}

func (l *requestLog) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			l.mu.Lock()
			l.requests = append(l.requests, req.Method+" "+req.URL.RequestURI())
			l.mu.Unlock()
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.requests...)
}
