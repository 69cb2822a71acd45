package chart_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// apiRecorder stands between a manager process and the API server: it
// serves the API over plain HTTP on loopback, sends every request on as the
// manager's ServiceAccount (impersonated), and records the requests the
// API server refused for lack of rights.
type apiRecorder struct {
	server *httptest.Server
	mu     sync.Mutex
	// forbidden holds "METHOD path" of every 403 response.
	forbidden map[string]bool
	// lastRequest is when the latest request arrived.
	lastRequest time.Time
}

func newAPIRecorder(t testing.TB, user string) *apiRecorder {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	target, transport := framework.ProxyTo(t, cfg)
	r := &apiRecorder{forbidden: map[string]bool{}}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Del("Authorization")
		},
		Transport: roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			r.mu.Lock()
			r.lastRequest = time.Now()
			r.mu.Unlock()
			resp, err := transport.RoundTrip(req)
			if err == nil && resp.StatusCode == http.StatusForbidden {
				r.mu.Lock()
				r.forbidden[req.Method+" "+req.URL.Path] = true
				r.mu.Unlock()
			}
			return resp, err
		}),
		FlushInterval: -1, // watches stream
		// A stopping manager cancels its watches mid-stream; that is no news.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	r.server = httptest.NewServer(proxy)
	t.Cleanup(r.server.Close)
	return r
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// Forbidden returns the refused requests so far, sorted.
func (r *apiRecorder) Forbidden() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []string{}
	for k := range r.forbidden {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (r *apiRecorder) quietFor() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.lastRequest)
}

// kubeconfig writes a kubeconfig that reaches the API through the recorder.
func (r *apiRecorder) kubeconfig(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: hub, cluster: {server: %q}}]
users: [{name: manager, user: {}}]
contexts: [{name: hub, context: {cluster: hub, user: manager}}]
current-context: hub
`, r.server.URL)
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runningManager is the manager binary started with a release's rendered
// arguments, as its ServiceAccount.
type runningManager struct {
	cmd      *exec.Cmd
	output   *syncBuffer
	api      *apiRecorder
	exited   chan error
	stopOnce sync.Once
}

// startManager installs the release's identity and RBAC (installForManager)
// and runs the binary with the Deployment's arguments, overriding only the
// kubeconfig, the expected-policies file (the rendered ConfigMap's content,
// which the Deployment mounts) and the listen addresses (probes and metrics
// on free loopback ports, or off). It waits until the manager holds its
// leader Lease and the API has been quiet for a moment: every informer and
// one-shot withdrawal has sent its first request by then.
func startManager(ctx context.Context, t *testing.T, rel chartrender.Release, values map[string]any, listen ...string) *runningManager {
	t.Helper()
	installForManager(ctx, t, rel, values)
	api := newAPIRecorder(t, serviceAccountUser(rel))
	objects := render(t, rel, values)
	args := append(managerArgs(t, objects), "--kubeconfig="+api.kubeconfig(t), "--graceful-shutdown-timeout=5s",
		"--admission-policies-file="+expectedPoliciesFile(t, objects))
	if len(listen) == 0 {
		listen = []string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}
	}
	args = append(args, listen...)
	m := &runningManager{cmd: exec.Command(managerBinary, args...), output: &syncBuffer{}, api: api, exited: make(chan error, 1)}
	m.cmd.Stdout, m.cmd.Stderr = m.output, m.output
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { m.exited <- m.cmd.Wait() }()
	t.Cleanup(func() { m.stop(t) })

	lease := types.NamespacedName{Namespace: rel.Namespace, Name: "clusterprofile-manager.open-cluster-management.io"}
	deadline := time.Now().Add(framework.Timeout)
	for {
		select {
		case err := <-m.exited:
			t.Fatalf("the manager exited early (%v):\n%s", err, m.output.String())
		default:
		}
		l := &coordinationv1.Lease{}
		err := env.Client.Get(ctx, lease, l)
		held := err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != ""
		if held && api.quietFor() > 700*time.Millisecond {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("the manager did not take its Lease %s and settle:\n%s", lease, m.output.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (m *runningManager) stop(t testing.TB) {
	m.stopOnce.Do(func() {
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-m.exited:
			if err != nil {
				t.Errorf("the manager exited with %v:\n%s", err, m.output.String())
			}
		case <-time.After(15 * time.Second):
			_ = m.cmd.Process.Kill()
			t.Errorf("the manager did not stop on SIGTERM:\n%s", m.output.String())
		}
	})
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestManagerStartsWithTheChartsRBAC runs the manager binary with each
// variant's rendered arguments and RBAC: it starts, takes its Lease, fills
// its caches and runs its start-up withdrawals without being refused anything
// it needs.
func TestManagerStartsWithTheChartsRBAC(t *testing.T) {
	for i, v := range allVariants() {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			ctx := framework.ContextFor(t)
			rel := chartrender.Release{Name: fmt.Sprintf("m%02d", i), Namespace: fmt.Sprintf("chart-start-%02d", i)}
			m := startManager(ctx, t, rel, v.values(v.cleanup))
			m.stop(t)
			// Nothing: every gate's rights, and the removals the manager
			// attempts for disabled ones, are covered by the chart.
			if diff := cmp.Diff([]string{}, m.api.Forbidden()); diff != "" {
				t.Errorf("requests refused to the manager (-want +got):\n%s\nmanager output:\n%s", diff, m.output.String())
			}
		})
	}
}

// TestGatesOnThenOffWithTheChartsRBAC runs the manager binary, with the
// chart's arguments and RBAC (and Secret admission policy), through a life:
// every gate on publishes a profile with both access provider entries and a
// synced token copy; turning the access providers off withdraws their
// entries; turning everything off without cleanupDisabledFeatures leaves
// everything where it is (the syncer's withdrawal is refused, and logged);
// with cleanupDisabledFeatures the profile and the copy go.
func TestGatesOnThenOffWithTheChartsRBAC(t *testing.T) {
	ctx := framework.ContextFor(t)
	const (
		consumer = "chart-life-consumer"
		cluster  = "chart-life-c1"
		msa      = "multikueue"
		copyName = cluster + "-" + msa
	)
	publishFleet(ctx, t, "chart-life", cluster, consumer)
	installClusterProxy(ctx, t, "chart-life-proxy")
	createSyncedMSA(ctx, t, cluster, msa)
	release := func(name string) chartrender.Release {
		return chartrender.Release{Name: name, Namespace: "chart-life-" + name}
	}
	entries := func(g Gomega) []string {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: consumer, Name: cluster}, p)).To(Succeed())
		names := []string{}
		for _, e := range p.Status.AccessProviders {
			names = append(names, e.Name)
		}
		sort.Strings(names)
		return names
	}
	copyToken := func(g Gomega) string {
		s := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: consumer, Name: copyName}, s)).To(Succeed())
		return string(s.Data["token"])
	}

	t.Log("Every gate on: the profile gets both entries and the token is copied next to it.")
	probes, metrics := freePort(t), freePort(t)
	m := startManager(ctx, t, release("all"), allOn().values(false),
		"--metrics-bind-address="+metrics, "--metrics-secure=false", "--health-probe-bind-address="+probes)
	NewWithT(t).Eventually(entries, framework.Timeout, framework.Interval).
		Should(Equal([]string{"open-cluster-management", "open-cluster-management-direct"}))
	NewWithT(t).Eventually(copyToken, framework.Timeout, framework.Interval).Should(Equal("token-1"))
	for _, path := range []string{"/healthz", "/readyz"} {
		NewWithT(t).Expect(httpGet(t, "http://"+probes+path)).To(Equal("ok"), path)
	}
	NewWithT(t).Expect(httpGet(t, "http://"+metrics+"/metrics")).To(ContainSubstring("clusterprofile_synced_secret_writes_total"))
	m.stop(t)
	NewWithT(t).Expect(m.api.Forbidden()).To(BeEmpty(), m.output.String())

	t.Log("Access providers off, mirror and syncer on: their entries are withdrawn, nothing else changes.")
	m = startManager(ctx, t, release("mirror-syncer"), gates{mirror: true, credSyncer: true}.values(false))
	NewWithT(t).Eventually(entries, framework.Timeout, framework.Interval).Should(BeEmpty())
	NewWithT(t).Expect(copyToken(NewWithT(t))).To(Equal("token-1"))
	m.stop(t)
	NewWithT(t).Expect(m.api.Forbidden()).To(BeEmpty(), m.output.String())

	t.Log("Every gate off, no cleanup: nothing is removed, and nothing is even attempted.")
	m = startManager(ctx, t, release("off"), gates{}.values(false))
	m.stop(t)
	NewWithT(t).Expect(copyToken(NewWithT(t))).To(Equal("token-1"))
	NewWithT(t).Expect(m.api.Forbidden()).To(BeEmpty(), m.output.String())

	t.Log("Every gate off, with cleanupDisabledFeatures: the mirror's profile and the token copy are deleted.")
	m = startManager(ctx, t, release("cleanup"), gates{}.values(true))
	NewWithT(t).Eventually(func() bool {
		err := env.Client.Get(ctx, types.NamespacedName{Namespace: consumer, Name: cluster}, &cpv1alpha1.ClusterProfile{})
		return apierrors.IsNotFound(err)
	}, framework.Timeout, framework.Interval).Should(BeTrue(), "the profile is deleted")
	NewWithT(t).Eventually(func() bool {
		err := env.Client.Get(ctx, types.NamespacedName{Namespace: consumer, Name: copyName}, &corev1.Secret{})
		return apierrors.IsNotFound(err)
	}, framework.Timeout, framework.Interval).Should(BeTrue(), "the token copy is deleted")
	m.stop(t)
	NewWithT(t).Expect(m.api.Forbidden()).To(BeEmpty(), m.output.String())
}

// publishFleet makes cluster a member of an exclusive set bound (Bound) into
// consumer, with a client config for the direct entry.
func publishFleet(ctx context.Context, t *testing.T, set, cluster, consumer string) {
	t.Helper()
	c := env.Client
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet(set).Obj())
	mc := utiltesting.MakeManagedCluster(cluster).ClusterSet(set).Version("v1.35.4").Obj()
	mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://" + cluster + ".example:6443", CABundle: utiltesting.FakeCA("CA")}}
	framework.CreateCluster(ctx, t, c, mc)
	framework.CreateNamespace(ctx, t, c, cluster)
	framework.CreateNamespace(ctx, t, c, consumer)
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding(consumer, set).Bound(true).Obj())
}

// installClusterProxy creates what the cluster-proxy addon would: its
// configuration and the user server certificate.
func installClusterProxy(ctx context.Context, t *testing.T, namespace string) {
	t.Helper()
	c := env.Client
	framework.CreateNamespace(ctx, t, c, namespace)
	config := utiltesting.MakeProxyConfiguration(namespace)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: proxyCertificate},
		Data: map[string][]byte{"tls.crt": []byte("CA"), "tls.key": []byte("key")}}
	for _, obj := range []client.Object{config, secret} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), config) })
}

// createSyncedMSA writes a ManagedServiceAccount that asks for sync, and its
// token Secret, as the managed-serviceaccount agent would.
func createSyncedMSA(ctx context.Context, t *testing.T, cluster, name string) {
	t.Helper()
	c := env.Client
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name,
			Labels: map[string]string{"authentication.open-cluster-management.io/is-managed-serviceaccount": "true"}},
		Data: map[string][]byte{"token": []byte("token-1"), "ca.crt": []byte("CA of " + cluster)},
	}
	if err := c.Create(ctx, token); err != nil {
		t.Fatal(err)
	}
	msa := &authv1beta1.ManagedServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name,
			Labels: map[string]string{"authentication.open-cluster-management.io/sync-to-clusterprofile": "true"}},
		Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{
			Enabled: true, Validity: metav1.Duration{Duration: 8640 * time.Hour}}},
	}
	if err := c.Create(ctx, msa); err != nil {
		t.Fatal(err)
	}
	framework.UpdateStatus(ctx, t, c, msa, func(m *authv1beta1.ManagedServiceAccount) {
		m.Status.TokenSecretRef = &authv1beta1.SecretRef{Name: name, LastRefreshTimestamp: metav1.Now()}
		m.Status.ExpirationTimestamp = &metav1.Time{Time: time.Now().Add(24 * time.Hour)}
	})
}

// freePort returns a loopback address nobody listens on right now.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func httpGet(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(body)
}
