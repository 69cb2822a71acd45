package main

// End-to-end tests of the built cp-creds binary against a real kube-apiserver
// (bin/envtest, see `make envtest`). With -short they are skipped.

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var (
	env *framework.Env
	// binary is cp-creds built as it ships; workDir holds it and the kubeconfigs.
	binary, workDir string
)

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run() // every test here skips itself
	}
	dir, err := os.MkdirTemp("", "cp-creds-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	workDir, binary = dir, filepath.Join(dir, "cp-creds")
	// Built once for all tests and benchmarks, stripped and static like the release.
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building cp-creds: %v\n%s", err, out)
		return 1
	}
	return framework.Run(m, framework.Options{}, &env)
}

const (
	msaName = "multikueue"
	// clusterName is the managed cluster; here the test API server plays both
	// the hub and the managed cluster, so the synced token is a real one.
	clusterName = "cluster1"
)

// fixture is a consumer namespace holding the Secret the syncer would write
// for cluster1 and the ManagedServiceAccount multikueue.
type fixture struct {
	namespace string
	token     string
	expiry    time.Time
	// adminKubeconfig is a kubeconfig file of a cluster-admin.
	adminKubeconfig string
	admin           kubernetes.Interface
}

var namespaceCounter atomic.Int32

func newFixture(t testing.TB) *fixture {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a real API server")
	}
	ctx := framework.ContextFor(t)
	admin, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		namespace:       fmt.Sprintf("cp-creds-e2e-%d", namespaceCounter.Add(1)),
		adminKubeconfig: adminKubeconfig(t),
		admin:           admin,
	}
	framework.CreateNamespace(ctx, t, env.Client, f.namespace)
	f.token, f.expiry = f.serviceAccountToken(t, "multikueue-sa")
	f.createCopy(t, clusterName, msaName, map[string][]byte{
		cpcreds.SecretKeyToken: []byte(f.token), cpcreds.SecretKeyCA: env.Config.CAData,
	})
	return f
}

var (
	adminKubeconfigOnce sync.Once
	adminKubeconfigPath string
	adminKubeconfigErr  error
)

// adminKubeconfig writes the control plane's admin kubeconfig once: every
// call of AddUser would mint another certificate.
func adminKubeconfig(t testing.TB) string {
	adminKubeconfigOnce.Do(func() {
		data, err := env.AdminKubeconfig()
		if err != nil {
			adminKubeconfigErr = err
			return
		}
		adminKubeconfigPath = filepath.Join(workDir, "admin.kubeconfig")
		adminKubeconfigErr = os.WriteFile(adminKubeconfigPath, data, 0o600)
	})
	if adminKubeconfigErr != nil {
		t.Fatalf("writing admin kubeconfig: %v", adminKubeconfigErr)
	}
	return adminKubeconfigPath
}

// createCopy writes the Secret the syncer would write for cluster and msa,
// published at its cluster-proxy URL and, directly, at the test API server
// (which plays the managed cluster).
func (f *fixture) createCopy(t testing.TB, cluster, msa string, data map[string][]byte) {
	t.Helper()
	f.createSecret(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: cpcreds.SecretName(cluster, msa),
			Labels: map[string]string{cpcreds.LabelSyncedFrom: cpcreds.SyncedFromValue(cluster, msa)},
			Annotations: map[string]string{
				cpcreds.AnnotationSourceCluster:               cluster,
				cpcreds.AnnotationSourceManagedServiceAccount: msa,
				cpcreds.AnnotationTokenExpiration:             f.expiry.Format(time.RFC3339),
				cpcreds.AnnotationPublishedServers: cpcreds.EncodePublishedServers([]cpcreds.PublishedServer{
					{Server: proxyServer(cluster)},
					cpcreds.ServerOf(clientcmdv1.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}),
				}),
			}},
		Data: data,
	})
}

// proxyServer is where the hub's cluster-proxy entry publishes cluster.
func proxyServer(cluster string) string {
	return "https://cluster-proxy-addon-user.open-cluster-management-addon:9092/" + cluster
}

func (f *fixture) createSecret(t testing.TB, secret *corev1.Secret) {
	t.Helper()
	if _, err := f.admin.CoreV1().Secrets(f.namespace).Create(framework.ContextFor(t), secret, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating secret %s: %v", secret.Name, err)
	}
}

// serviceAccountToken creates a service account and returns a fresh token of it.
func (f *fixture) serviceAccountToken(t testing.TB, name string) (string, time.Time) {
	t.Helper()
	ctx := framework.ContextFor(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: name}}
	if _, err := f.admin.CoreV1().ServiceAccounts(f.namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating service account %s: %v", name, err)
	}
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}
	got, err := f.admin.CoreV1().ServiceAccounts(f.namespace).CreateToken(ctx, name, request, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for %s: %v", name, err)
	}
	return got.Status.Token, got.Status.ExpirationTimestamp.Time
}

// consumerKubeconfig is a kubeconfig for a consumer's service account that may
// (canGetSecrets) or may not read Secrets in the fixture's namespace.
func (f *fixture) consumerKubeconfig(t testing.TB, name string, canGetSecrets bool) string {
	t.Helper()
	token, _ := f.serviceAccountToken(t, name)
	if canGetSecrets {
		f.allowGetSecrets(t, name)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: name}
	cfg.CurrentContext = "hub"
	path := filepath.Join(workDir, f.namespace+"-"+name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// allowGetSecrets grants what the spec asks of a consumer: get on secrets.
func (f *fixture) allowGetSecrets(t testing.TB, serviceAccount string) {
	t.Helper()
	ctx := framework.ContextFor(t)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: serviceAccount},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: serviceAccount},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: serviceAccount},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: f.namespace, Name: serviceAccount}},
	}
	if _, err := f.admin.RbacV1().Roles(f.namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.admin.RbacV1().RoleBindings(f.namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// execInfo is KUBERNETES_EXEC_INFO as client-go writes it with
// provideClusterInfo: true for a cluster carrying the exec extension,
// reached through cluster-proxy.
func execInfo(cluster string) string {
	return execInfoAt(proxyServer(cluster), cluster)
}

func execInfoAt(server, cluster string) string {
	return fmt.Sprintf(`{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"cluster":{"server":%q,"config":{"clusterName":%q}},"interactive":false}}`, server, cluster)
}

// environment is the plugin's whole environment: nothing is inherited, so a
// test run inside a pod does not pick the pod's in-cluster config.
func (f *fixture) environment(kubeconfig string) map[string]string {
	return map[string]string{
		"KUBECONFIG":        kubeconfig,
		"NAMESPACE":         f.namespace,
		"HOME":              workDir,
		cpcreds.EnvExecInfo: execInfo(clusterName),
	}
}

type result struct {
	stdout, stderr string
	exitCode       int
}

func run(t testing.TB, environment map[string]string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = []string{}
	for k, v := range environment {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("running cp-creds: %v", err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), exitCode: cmd.ProcessState.ExitCode()}
}

// credential is what a consumer reads back from a successful run.
type credential struct {
	APIVersion, Kind, Token string
	Expiry                  time.Time
}

func parseCredential(t testing.TB, stdout string) credential {
	t.Helper()
	var ec clientauthenticationv1.ExecCredential
	if err := json.Unmarshal([]byte(stdout), &ec); err != nil {
		t.Fatalf("stdout is not an ExecCredential: %v", err)
	}
	if ec.Status == nil {
		t.Fatalf("ExecCredential has no status")
	}
	c := credential{APIVersion: ec.APIVersion, Kind: ec.Kind, Token: ec.Status.Token}
	if ec.Status.ExpirationTimestamp != nil {
		c.Expiry = ec.Status.ExpirationTimestamp.UTC()
	}
	return c
}

func TestPrintsExecCredential(t *testing.T) {
	f := newFixture(t)
	tests := map[string]struct {
		kubeconfig func(t testing.TB) string
	}{
		"as cluster-admin": {kubeconfig: func(testing.TB) string { return f.adminKubeconfig }},
		"as a consumer allowed to get secrets": {
			kubeconfig: func(t testing.TB) string { return f.consumerKubeconfig(t, "kueue", true) },
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := run(t, f.environment(tc.kubeconfig(t)), "--managed-serviceaccount="+msaName)

			if got.exitCode != 0 || got.stderr != "" {
				t.Fatalf("exit code %d, stderr %q", got.exitCode, got.stderr)
			}
			want := credential{
				APIVersion: "client.authentication.k8s.io/v1", Kind: "ExecCredential",
				Token: f.token, Expiry: f.expiry.UTC().Truncate(time.Second),
			}
			if diff := cmp.Diff(want, parseCredential(t, got.stdout)); diff != "" {
				t.Errorf("ExecCredential (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFailuresAreOneLineOnStderr(t *testing.T) {
	f := newFixture(t)
	f.createCopy(t, "cluster2", msaName, map[string][]byte{cpcreds.SecretKeyCA: env.Config.CAData})
	// Somebody who may create Secrets in the namespace plants one under the
	// name of cluster3's copy, holding a token of their own.
	f.createSecret(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: cpcreds.SecretName("cluster3", msaName)},
		Data: map[string][]byte{cpcreds.SecretKeyToken: []byte("the planter's token")}})
	tests := map[string]struct {
		environment map[string]string
		args        []string
		wantStderr  []string
	}{
		"no --managed-serviceaccount": {
			environment: f.environment(f.adminKubeconfig),
			wantStderr:  []string{"missing --managed-serviceaccount=<name>"},
		},
		"not run by client-go": {
			environment: without(f.environment(f.adminKubeconfig), cpcreds.EnvExecInfo),
			args:        []string{"--managed-serviceaccount=" + msaName},
			wantStderr:  []string{"KUBERNETES_EXEC_INFO is not set"},
		},
		"provideClusterInfo not set": {
			environment: with(f.environment(f.adminKubeconfig), cpcreds.EnvExecInfo,
				`{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false}}`),
			args:       []string{"--managed-serviceaccount=" + msaName},
			wantStderr: []string{"set provideClusterInfo: true"},
		},
		"no kubeconfig": {
			environment: without(f.environment(f.adminKubeconfig), "KUBECONFIG"),
			args:        []string{"--managed-serviceaccount=" + msaName},
			wantStderr:  []string{"cannot build a Kubernetes client", "no kubeconfig found"},
		},
		"secret missing": {
			environment: f.environment(f.adminKubeconfig),
			args:        []string{"--managed-serviceaccount=argocd"},
			wantStderr: []string{
				fmt.Sprintf("secret %s/cluster1-argocd not found", f.namespace),
				cpcreds.LabelSyncToClusterProfile,
			},
		},
		"secret without token": {
			environment: with(f.environment(f.adminKubeconfig), cpcreds.EnvExecInfo, execInfo("cluster2")),
			args:        []string{"--managed-serviceaccount=" + msaName},
			wantStderr:  []string{fmt.Sprintf(`secret %s/cluster2-multikueue has no "token" key`, f.namespace)},
		},
		"a Secret planted under the copy's name": {
			environment: with(f.environment(f.adminKubeconfig), cpcreds.EnvExecInfo, execInfo("cluster3")),
			args:        []string{"--managed-serviceaccount=" + msaName},
			wantStderr: []string{fmt.Sprintf("secret %s/cluster3-multikueue is not a synced token copy", f.namespace),
				"no label authentication.open-cluster-management.io/synced-from"},
		},
		"a server the hub does not publish": {
			environment: with(f.environment(f.adminKubeconfig), cpcreds.EnvExecInfo, execInfoAt("https://trap.example.com:8443", clusterName)),
			args:        []string{"--managed-serviceaccount=" + msaName},
			wantStderr: []string{`refusing to send the token of cluster "cluster1" to https://trap.example.com:8443`,
				"the hub publishes that cluster at ", proxyServer(clusterName)},
		},
		"forbidden": {
			environment: f.environment(f.consumerKubeconfig(t, "no-rbac", false)),
			args:        []string{"--managed-serviceaccount=" + msaName},
			wantStderr:  []string{fmt.Sprintf("permission to get secrets in namespace %q", f.namespace)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := run(t, tc.environment, tc.args...)

			if got.exitCode != 1 || got.stdout != "" {
				t.Errorf("exit code %d, stdout %q; want 1 and nothing", got.exitCode, got.stdout)
			}
			line, rest, _ := strings.Cut(got.stderr, "\n")
			t.Log(line)
			if rest != "" || !strings.HasPrefix(line, "[cp-creds] ") {
				t.Errorf("stderr %q is not one line starting with [cp-creds]", got.stderr)
			}
			for _, fragment := range tc.wantStderr {
				if !strings.Contains(line, fragment) {
					t.Errorf("stderr %q does not say %q", line, fragment)
				}
			}
			if strings.Contains(got.stderr, f.token) {
				t.Errorf("stderr leaks the token")
			}
		})
	}
}

// TestConsumerReachesClusterWithToken drives cp-creds the way MultiKueue does:
// client-go runs it for a cluster whose exec extension names cluster1, and
// the managed cluster (here the same API server) accepts the token. Both
// exec config versions: client-go refuses an answer in another version than
// it asked in, so each round trip proves cp-creds answered in the one asked.
func TestConsumerReachesClusterWithToken(t *testing.T) {
	f := newFixture(t)
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // client-go passes its own environment on
	for _, apiVersion := range cpcreds.SupportedAPIVersions {
		t.Run(apiVersion, func(t *testing.T) {
			cfg := f.consumerConfig(clusterName)
			cfg.ExecProvider.APIVersion = apiVersion
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}

			review, err := client.AuthenticationV1().SelfSubjectReviews().Create(framework.ContextFor(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})

			if err != nil {
				t.Fatalf("request with cp-creds' token: %v", err)
			}
			want := fmt.Sprintf("system:serviceaccount:%s:multikueue-sa", f.namespace)
			if diff := cmp.Diff(want, review.Status.UserInfo.Username); diff != "" {
				t.Errorf("authenticated as (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConsumerRefusesAPlantedToken: someone allowed to create Secrets in the
// consumer's namespace plants one, named like the copy of cluster "planted",
// holding a real token of their own. The consumer's request must fail
// rather than be sent as the planter.
func TestConsumerRefusesAPlantedToken(t *testing.T) {
	f := newFixture(t)
	plantersToken, _ := f.serviceAccountToken(t, "planter")
	f.createSecret(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: cpcreds.SecretName("planted", msaName),
		Annotations: map[string]string{cpcreds.AnnotationSourceCluster: "planted", cpcreds.AnnotationSourceManagedServiceAccount: msaName}},
		Data: map[string][]byte{cpcreds.SecretKeyToken: []byte(plantersToken)}})
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	client, err := kubernetes.NewForConfig(f.consumerConfig("planted"))
	if err != nil {
		t.Fatal(err)
	}

	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(framework.ContextFor(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})

	if err == nil {
		t.Fatalf("the request went through as %q; it must fail", review.Status.UserInfo.Username)
	}
	// client-go passes the plugin's stderr line (checked in
	// TestFailuresAreOneLineOnStderr) to its own stderr, not into the error.
	if !strings.Contains(err.Error(), "getting credentials") {
		t.Errorf("error %q is not a failure to get credentials", err)
	}
}

// TestConsumerSendsNoTokenToAServerNobodyPublished: somebody who may write
// ClusterProfiles (or their status) in the consumer's namespace publishes
// an entry naming cluster1 at a server of their own, with its own CA. The
// consumer's client runs cp-creds for it, which refuses: the trap server
// receives no request at all.
func TestConsumerSendsNoTokenToAServerNobodyPublished(t *testing.T) {
	f := newFixture(t)
	var requests atomic.Int32
	trap := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "trapped", http.StatusUnauthorized)
	}))
	defer trap.Close()
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	cfg := f.consumerConfig(clusterName)
	cfg.Host = trap.URL
	cfg.TLSClientConfig.CAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: trap.Certificate().Raw})
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	_, err = client.AuthenticationV1().SelfSubjectReviews().Create(framework.ContextFor(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})

	if err == nil || !strings.Contains(err.Error(), "getting credentials") {
		t.Errorf("error %v; want a failure to get credentials", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the trap server received %d requests; want none", n)
	}
}

// consumerConfig is the rest.Config a consumer such as MultiKueue builds for
// cluster: client-go runs cp-creds with the cluster's exec extension.
func (f *fixture) consumerConfig(cluster string) *rest.Config {
	return &rest.Config{
		Host:            env.Config.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData},
		ExecProvider: &clientcmdapi.ExecConfig{
			APIVersion:         clientauthenticationv1.SchemeGroupVersion.String(),
			Command:            binary,
			Args:               []string{"--managed-serviceaccount=" + msaName},
			Env:                []clientcmdapi.ExecEnvVar{{Name: "KUBECONFIG", Value: f.adminKubeconfig}, {Name: "NAMESPACE", Value: f.namespace}},
			ProvideClusterInfo: true,
			InteractiveMode:    clientcmdapi.NeverExecInteractiveMode,
			// What the ClusterProfile's access provider carries as the
			// client.authentication.k8s.io/exec extension.
			Config: &runtime.Unknown{Raw: []byte(`{"clusterName":"` + cluster + `"}`), ContentType: runtime.ContentTypeJSON},
		},
	}
}

// BenchmarkRun measures a whole run, process start to exit, with one GET
// against a local API server; ms/run is the median.
func BenchmarkRun(b *testing.B) {
	f := newFixture(b)
	identities := []struct{ name, kubeconfig string }{
		{"client-certificate", f.adminKubeconfig},
		{"service-account-token", f.consumerKubeconfig(b, "kueue", true)},
	}
	for _, identity := range identities {
		b.Run(identity.name, func(b *testing.B) {
			environment := f.environment(identity.kubeconfig)
			durations := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				got := run(b, environment, "--managed-serviceaccount="+msaName)
				durations = append(durations, time.Since(start))
				if got.exitCode != 0 {
					b.Fatalf("exit code %d: %s", got.exitCode, got.stderr)
				}
			}
			slices.Sort(durations)
			b.ReportMetric(ms(durations[len(durations)/2]), "ms/run")
			b.ReportMetric(ms(durations[len(durations)*9/10]), "p90-ms/run")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func with(environment map[string]string, key, value string) map[string]string {
	environment[key] = value
	return environment
}

func without(environment map[string]string, key string) map[string]string {
	delete(environment, key)
	return environment
}
