package monitoring_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/pkg/hubmanager"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

const (
	// e2eNamespace is the release namespace; the job is the one the chart's
	// ServiceMonitor gives the series (the metrics Service's name).
	e2eNamespace = "monitoring-e2e"
	e2eJob       = chartName + "-metrics"
	// wait bounds every wait on Prometheus (scrapes and rules every second).
	wait = 90 * time.Second
)

var e2eRelease = chartrender.Release{Name: chartName, Namespace: e2eNamespace}

// TestPrometheusWatchesTheManager is the operations story end to end, with
// the chart's RBAC, alerts and dashboard and a real Prometheus:
//
//  1. the manager (hubmanager.New, as the binary builds it) runs as the
//     chart's ServiceAccount with the chart's RBAC and serves metrics over
//     HTTPS behind TokenReview and SubjectAccessReview;
//  2. Prometheus scrapes it with a ServiceAccount token from TokenRequest,
//     bound through the chart's metrics.readers;
//  3. every dashboard query, and every selector of every alert expression,
//     returns a series, and every alert expression evaluates;
//  4. a ValidatingAdmissionPolicy that denies the manager's ClusterProfile
//     writes makes ClusterProfileWritesFailing fire in /api/v1/alerts, and
//     removing it resolves the alert.
func TestPrometheusWatchesTheManager(t *testing.T) {
	prometheusBinary := requireBinary(t, "prometheus")
	ctx := framework.ContextFor(t)
	c := env.Client
	g := NewWithT(t)

	values := map[string]any{
		"featureGates": map[string]any{"clusterProfile": true, "clusterProfileCredSyncer": true},
		"metrics": map[string]any{"readers": []any{
			map[string]any{"kind": "ServiceAccount", "name": "prometheus", "namespace": e2eNamespace}}},
		"monitoring": map[string]any{
			"dashboards": map[string]any{"enabled": true},
			// Short windows and waits so that the test takes a minute, not an hour.
			"prometheusRule": map[string]any{"window": "30s", "for": map[string]any{
				"writesFailing": "3s", "reconcileErrors": "3s", "workqueueBacklog": "3s", "workqueueLatency": "3s",
				"nameClash": "0s", "syncedSecretCollision": "0s", "mirrorPassive": "3s", "capabilityWaiting": "3s", "tokenExpiring": "3s",
				"unscopedTokens": "3s", "yieldingToUpstream": "3s", "managerDown": "3s", "notLeading": "3s", "admissionPolicies": "3s"}},
		},
	}
	objects := render(t, e2eRelease, values)
	framework.CreateNamespace(ctx, t, c, e2eNamespace)
	installIdentityAndRBAC(ctx, t, objects)
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: e2eNamespace, Name: "prometheus"}}); err != nil {
		t.Fatal(err)
	}

	t.Log("A fleet: one cluster bound into a consumer namespace, a ManagedServiceAccount whose token is synced.")
	publish(ctx, t, "e2e-c1")
	syncedToken(ctx, t, "e2e-c1", "multikueue", time.Now().Add(24*time.Hour))

	t.Log("The manager, as the chart's ServiceAccount, with secure metrics, checking the chart's admission policies.")
	metricsAddr := freeAddr(t)
	startManager(t, metricsAddr, expectedPoliciesFile(t, objects))
	g.Eventually(func() error {
		return c.Get(ctx, types.NamespacedName{Namespace: "e2e-consumer", Name: "e2e-c1-multikueue"}, &corev1.Secret{})
	}, wait, framework.Interval).Should(Succeed(), "the token copy")

	t.Log("Prometheus scrapes it with the prometheus ServiceAccount's token and loads the chart's alerts.")
	prom := startPrometheus(ctx, t, prometheusBinary, metricsAddr, ruleFile(t, e2eRelease, values))
	g.Eventually(func() (string, error) {
		return prom.targetHealth(e2eJob)
	}, wait, time.Second).Should(Equal("up"), prom.output)

	t.Log("Every dashboard query returns a series.")
	for _, q := range dashboardQueries(t, objects) {
		g.Eventually(func() (int, error) { return prom.seriesCount(q) }, wait, time.Second).
			Should(BeNumerically(">", 0), "dashboard query %s", q)
	}

	t.Log("Every selector of every alert expression returns a series, and every expression evaluates.")
	for _, rule := range alertRules(t, ruleFile(t, e2eRelease, values)) {
		for _, sel := range selectorsOf(rule.Expr) {
			g.Eventually(func() (int, error) { return prom.seriesCount(sel) }, wait, time.Second).
				Should(BeNumerically(">", 0), "alert %s reads %s", rule.Alert, sel)
		}
		_, err := prom.seriesCount(rule.Expr)
		g.Expect(err).NotTo(HaveOccurred(), "alert %s", rule.Alert)
	}
	g.Eventually(prom.firing, wait, time.Second).Should(BeEmpty(), "no alert fires on a healthy manager")

	t.Log("Fault: an admission policy denies the manager's ClusterProfile writes; new and changed clusters keep it writing.")
	removeFault := denyManagerProfileWrites(ctx, t)
	stopChurn := churn(ctx, t, "e2e-c2")
	g.Eventually(prom.firing, wait, time.Second).Should(ContainElement(
		"ClusterProfileWritesFailing{severity=warning,writer=clusterprofile-mirror}"), prom.output)

	t.Log("The fault removed, the writes go through and the alert resolves.")
	removeFault()
	stopChurn()
	framework.UpdateClusterStatus(ctx, t, c, "e2e-c2", func(mc *clusterv1.ManagedCluster) {
		mc.Status.Version.Kubernetes = "v1.35.9" // one more change, reconciled at once rather than after the backoff
	})
	g.Eventually(func() error {
		return c.Get(ctx, types.NamespacedName{Namespace: "e2e-consumer", Name: "e2e-c2"}, &cpv1alpha1.ClusterProfile{})
	}, wait, framework.Interval).Should(Succeed(), "the profile denied during the fault")
	g.Eventually(prom.firing, wait, time.Second).ShouldNot(ContainElement(HavePrefix("ClusterProfileWritesFailing")), prom.output)
}

// installIdentityAndRBAC creates the manager's ServiceAccount, RBAC and
// Secret admission policy from the rendered chart.
func installIdentityAndRBAC(ctx context.Context, t *testing.T, objects []*unstructured.Unstructured) {
	t.Helper()
	for _, u := range objects {
		switch u.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
		default:
			continue
		}
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		if u.GetNamespace() == "" {
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })
		}
	}
}

func publish(ctx context.Context, t *testing.T, cluster string) {
	t.Helper()
	c := env.Client
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("e2e-set").Obj())
	framework.CreateNamespace(ctx, t, c, "e2e-consumer")
	framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding("e2e-consumer", "e2e-set").Bound(true).Obj())
	framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster(cluster).ClusterSet("e2e-set").Version("v1.35.4").Obj())
	framework.CreateNamespace(ctx, t, c, cluster)
}

// syncedToken writes a ManagedServiceAccount asking for sync and its token
// Secret, as the managed-serviceaccount agent would.
func syncedToken(ctx context.Context, t *testing.T, cluster, name string, expires time.Time) {
	t.Helper()
	c := env.Client
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name,
			Labels: map[string]string{"authentication.open-cluster-management.io/is-managed-serviceaccount": "true"}},
		Data: map[string][]byte{"token": []byte("token-1"), "ca.crt": []byte("CA")},
	}
	msa := &authv1beta1.ManagedServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name,
			Labels: map[string]string{"authentication.open-cluster-management.io/sync-to-clusterprofile": "true"},
			// Scoped, as a healthy fleet's are: an unscoped token warns.
			Annotations: map[string]string{"clusterprofile.open-cluster-management.io/consumer-namespaces": "e2e-consumer"}},
		Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{
			Enabled: true, Validity: metav1.Duration{Duration: 24 * time.Hour}}},
	}
	for _, obj := range []client.Object{token, msa} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	framework.UpdateStatus(ctx, t, c, msa, func(m *authv1beta1.ManagedServiceAccount) {
		m.Status.TokenSecretRef = &authv1beta1.SecretRef{Name: name, LastRefreshTimestamp: metav1.Now()}
		m.Status.ExpirationTimestamp = &metav1.Time{Time: expires}
	})
}

// startManager runs the manager in this process, as `clusterprofile-manager
// --leader-elect` would, impersonating the chart's ServiceAccount, with the
// chart's expected admission policies in policiesFile.
func startManager(t *testing.T, metricsAddr, policiesFile string) {
	t.Helper()
	gates := features.NewGate()
	if err := gates.SetFromMap(map[string]bool{string(features.ClusterProfile): true, string(features.ClusterProfileCredSyncer): true}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + e2eNamespace + ":" + chartName}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := hubmanager.New(ctx, cfg, hubmanager.Options{
		FeatureGates: gates, MetricsAddr: metricsAddr, ProbeAddr: "0", MirrorWorkers: 2,
		LeaderElect: true, LeaderElectionNamespace: e2eNamespace, GracefulShutdownTimeout: 5 * time.Second,
		AdmissionPoliciesFile: policiesFile,
	})
	if err != nil {
		cancel()
		t.Fatalf("building the manager: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the manager stopped with %v", err)
		}
	})
}

// expectedPoliciesFile writes the rendered expected-policies ConfigMap's
// content (what the Deployment mounts) to a file.
func expectedPoliciesFile(t *testing.T, objects []*unstructured.Unstructured) string {
	t.Helper()
	cm := findName(objects, "ConfigMap", chartName+"-admission-policies")
	if cm == nil {
		t.Fatal("no expected-policies ConfigMap rendered")
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	path := filepath.Join(t.TempDir(), "policies.yaml")
	if err := os.WriteFile(path, []byte(data["policies.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// denyManagerProfileWrites installs the fault; the returned function removes it.
func denyManagerProfileWrites(ctx context.Context, t *testing.T) func() {
	t.Helper()
	c := env.Client
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-deny-manager-profile-writes"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{cpv1alpha1.GroupVersion.Group}, APIVersions: []string{"*"},
						Resources: []string{"clusterprofiles", "clusterprofiles/status"}},
				}}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "the-manager",
				Expression: fmt.Sprintf("request.userInfo.username == 'system:serviceaccount:%s:%s'", e2eNamespace, chartName)}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "fault injected by the monitoring test"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	for _, obj := range []client.Object{policy, binding} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	var once sync.Once
	remove := func() {
		once.Do(func() {
			for _, obj := range []client.Object{binding, policy} {
				if err := client.IgnoreNotFound(c.Delete(context.Background(), obj)); err != nil {
					t.Errorf("removing the fault: %v", err)
				}
			}
		})
	}
	t.Cleanup(remove)
	return remove
}

// churn publishes a new cluster and changes it every two seconds until
// stopped, so the mirror keeps trying to write.
func churn(ctx context.Context, t *testing.T, cluster string) (stop func()) {
	t.Helper()
	framework.CreateCluster(ctx, t, env.Client, utiltesting.MakeManagedCluster(cluster).ClusterSet("e2e-set").Version("v1.35.0").Obj())
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for i := 1; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Second):
			}
			mc := &clusterv1.ManagedCluster{}
			if err := env.Client.Get(ctx, types.NamespacedName{Name: cluster}, mc); err != nil {
				continue
			}
			mc.Status.Version.Kubernetes = fmt.Sprintf("v1.35.%d", i)
			_ = env.Client.Status().Update(ctx, mc) // a conflict just skips one change
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { close(done); <-stopped }) }
	t.Cleanup(stop)
	return stop
}

// dashboardQueries returns the queries of the dashboard the chart ships,
// with Grafana's variables set as Grafana would for this job.
func dashboardQueries(t *testing.T, objects []*unstructured.Unstructured) []string {
	t.Helper()
	cm := findName(objects, "ConfigMap", chartName+"-dashboard")
	if cm == nil {
		t.Fatal("no dashboard ConfigMap rendered")
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(data["clusterprofile-manager.json"]), &d); err != nil {
		t.Fatal(err)
	}
	replacer := strings.NewReplacer("$job", e2eJob, "$__rate_interval", "1m")
	var queries []string
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			queries = append(queries, replacer.Replace(target.Expr))
		}
	}
	if len(queries) == 0 {
		t.Fatal("the dashboard has no queries")
	}
	return queries
}

type alertRule struct{ Alert, Expr string }

func alertRules(t *testing.T, rules []byte) []alertRule {
	t.Helper()
	var file struct {
		Groups []struct {
			Rules []alertRule `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(rules, &file); err != nil {
		t.Fatal(err)
	}
	var out []alertRule
	for _, g := range file.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// prometheusServer is a running Prometheus.
type prometheusServer struct {
	url string
	out *lockedBuffer
}

func (p *prometheusServer) output() string { return "Prometheus output:\n" + p.out.String() }

// startPrometheus runs Debian's prometheus against the manager's secure
// endpoint, with the chart's rules, scraping and evaluating every second.
func startPrometheus(ctx context.Context, t *testing.T, binary, target string, rules []byte) *prometheusServer {
	t.Helper()
	dir := t.TempDir()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(e2eNamespace).CreateToken(ctx, "prometheus", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for the prometheus ServiceAccount: %v", err)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [rules.yaml]
scrape_configs:
- job_name: %s
  scheme: https
  authorization:
    credentials_file: token
  tls_config:
    insecure_skip_verify: true
  static_configs:
  - targets: [%q]
`, e2eJob, target)
	for name, content := range map[string][]byte{"token": []byte(tr.Status.Token), "rules.yaml": rules, "prometheus.yml": []byte(config)} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeAddr(t)
	cmd := exec.Command(binary, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr, "--log.level=warn")
	cmd.Dir = dir
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	p := &prometheusServer{url: "http://" + addr, out: out}
	NewWithT(t).Eventually(func() error {
		_, err := p.get("/-/ready", nil)
		return err
	}, wait, 200*time.Millisecond).Should(Succeed(), p.output)
	return p
}

func (p *prometheusServer) get(path string, query url.Values) ([]byte, error) {
	u := p.url + path
	if query != nil {
		u += "?" + query.Encode()
	}
	resp, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	return body, nil
}

// seriesCount runs an instant query and counts the series it returns.
func (p *prometheusServer) seriesCount(query string) (int, error) {
	body, err := p.get("/api/v1/query", url.Values{"query": {query}})
	if err != nil {
		return 0, err
	}
	var r struct {
		Data struct {
			ResultType string            `json:"resultType"`
			Result     []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, err
	}
	return len(r.Data.Result), nil
}

// targetHealth is the health of the job's target.
func (p *prometheusServer) targetHealth(job string) (string, error) {
	body, err := p.get("/api/v1/targets", nil)
	if err != nil {
		return "", err
	}
	var r struct {
		Data struct {
			ActiveTargets []struct {
				Labels    map[string]string `json:"labels"`
				Health    string            `json:"health"`
				LastError string            `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", err
	}
	for _, target := range r.Data.ActiveTargets {
		if target.Labels["job"] == job {
			return target.Health + target.LastError, nil
		}
	}
	return "", fmt.Errorf("no target of job %s", job)
}

// firing lists the firing alerts of /api/v1/alerts as
// "Name{label=value,...}" without alertname, sorted by label.
func (p *prometheusServer) firing() ([]string, error) {
	body, err := p.get("/api/v1/alerts", nil)
	if err != nil {
		return nil, err
	}
	var r struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	out := []string{}
	for _, a := range r.Data.Alerts {
		if a.State != "firing" {
			continue
		}
		var labels []string
		for _, k := range sortedKeys(a.Labels) {
			if k != "alertname" {
				labels = append(labels, k+"="+a.Labels[k])
			}
		}
		out = append(out, a.Labels["alertname"]+"{"+strings.Join(labels, ",")+"}")
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
