package doctor_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	osexec "os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/pkg/apis/clientauthentication"
	clientauthinstall "k8s.io/client-go/pkg/apis/clientauthentication/install"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	"k8s.io/client-go/rest"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/doctor"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

const (
	trapNamespace = "trap-kueue"
	trapCluster   = "trap-c1"
	forgedProfile = "trap-c1-forged"
	// attacker may create ClusterProfiles in trapNamespace and write their
	// status, and may not read its Secrets: it can point an entry anywhere,
	// but can have the token only if something sends it there.
	attacker = "trap-attacker"
	// proxyProvider is the name of the cluster-proxy entry the manager
	// writes, and the provider name the Kueue-like consumer configures.
	proxyProvider = "open-cluster-management"
	// unwrittenProvider is a provider name a consumer configures but no
	// accessProviders entry of the hub's profile carries: the bundle's
	// direct entry, whose gate is off here (the same holds while a cluster
	// registered no client config, or once an entry is withdrawn).
	unwrittenProvider = "open-cluster-management-direct"
)

// TestTheTokenGoesOnlyToAServerTheHubPublishes plays the attacker of issue
// 21 on a real API server, with the real manager (mirror, cluster-proxy
// entry, credential syncer), the built cp-creds and a real token that
// would authenticate wherever it went. The attacker points an entry named
// after a served cluster at its trap, a TLS server that counts every
// request: in a profile of its own, and in the deprecated
// status.credentialProviders of the hub's own profile. cp-creds refuses in
// one line, a pkg/access consumer and `doctor --connect` send the trap
// nothing, and the hub's own entry, through the same plugin and provider
// configuration, still gets the token: the refusals are the server binding
// at work, not a broken plugin.
func TestTheTokenGoesOnlyToAServerTheHubPublishes(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // cp-creds, run by client-go, must read the hub through the kubeconfig
	ctx := framework.ContextFor(t)
	c := env.Client
	mc := utiltesting.MakeManagedCluster(trapCluster).Label(framework.LabelClusterName, trapCluster).Version("v1.35.4").
		Available(metav1.ConditionTrue).Joined().Obj()
	mc.Spec.HubAcceptsClient = true
	framework.CreateCluster(ctx, t, c, mc)
	framework.CreateNamespace(ctx, t, c, trapCluster) // the cluster namespace on the hub
	framework.CreateNamespace(ctx, t, c, trapNamespace)
	framework.Serve(ctx, t, c, trapNamespace, trapCluster)
	// A real token of the test API server: whoever receives it can use it.
	token, expiry := env.ServiceAccountToken(ctx, t, trapCluster, "multikueue-sa", 3*time.Hour)
	createMSA(t, trapCluster, token, expiry, trapNamespace)

	trap := startRecorder(t, token, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// Answers as an API server would, so nothing but the counts tells
		// a consumer that sent the token apart from a working one.
		_, _ = w.Write([]byte(`{"gitVersion":"v1.35.4"}`))
	}))
	userServer := startRecorder(t, token, userServerFor(t, trapCluster))
	// httptest serves one certificate, so the trap presents the very CA the
	// hub publishes for the user server: only the server tells them apart.
	ca := framework.CertificatePEM(userServer.Server)
	if !bytes.Equal(framework.CertificatePEM(trap.Server), ca) {
		t.Fatal("the trap and the user server serve different certificates; the test assumes httptest's one")
	}
	proxyCA := framework.InstallClusterProxy(ctx, t, c, ca)
	framework.StartManager(t, env, framework.ManagerOptions{
		Gates:         map[string]bool{"ClusterProfile": true, "ClusterProfileAccessProvider": true, "ClusterProfileCredSyncer": true},
		ProxyEndpoint: endpointOf(t, userServer.Server),
	})
	proxyServer := userServer.URL + "/" + trapCluster
	// The attacker's entry differs from the hub's in the port alone.
	trapServer := trap.URL + "/" + trapCluster
	copyName := cpcreds.SecretName(trapCluster, msa)

	t.Run("the copy records exactly what the access providers publish", func(t *testing.T) {
		expectPublished(t, proxyServer, ca)
		found, err := framework.SecretNamespaces(ctx, c, copyName)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{trapNamespace}, found); diff != "" {
			t.Errorf("namespaces holding %s, scoped to %s (-want +got):\n%s", copyName, trapNamespace, diff)
		}
	})

	attackerClient := asAttacker(t)
	t.Run("the attacker may not read the token", func(t *testing.T) {
		err := attackerClient.Get(ctx, types.NamespacedName{Namespace: trapNamespace, Name: copyName}, &corev1.Secret{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("the attacker reading Secret %s/%s: got %v, want Forbidden", trapNamespace, copyName, err)
		}
	})
	// (a) A profile of the attacker's own, as healthy-looking as the hub's,
	// whose entry bears the name consumers configure and names the served
	// cluster, so cp-creds picks that cluster's copy.
	forged := profile(trapNamespace, forgedProfile, trapServer, ca)
	forged.Labels[clusterprofile.LabelClusterManager], forged.Spec.ClusterManager.Name = attacker, attacker
	forged.Status.AccessProviders = []cpv1alpha1.AccessProvider{trapEntry(proxyProvider, trapServer, ca)}
	framework.CreateForgedProfile(ctx, t, attackerClient, forged)
	// (b) The hub's own profile, whose credentialProviders no writer of ours
	// owns. pkg/access v0.1.3 merges credentialProviders and
	// accessProviders by name (accessProviders winning) and takes the first
	// of the consumer's provider names found: an entry under a name the
	// consumer configures and no accessProviders entry carries is used as
	// if the hub had written it. Under proxyProvider it would lose to the
	// hub's entry and prove nothing, hence unwrittenProvider.
	framework.UpdateStatus(ctx, t, attackerClient, &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: trapNamespace, Name: trapCluster}},
		func(p *cpv1alpha1.ClusterProfile) {
			p.Status.CredentialProviders = []cpv1alpha1.AccessProvider{trapEntry(unwrittenProvider, trapServer, ca)}
		})

	cpCreds := plugin(t).Command
	refusal := fmt.Sprintf("[cp-creds] refusing to send the token of cluster %q to %s: the hub publishes that cluster at %s; the access entry the consumer used was not written by this bundle (look at the ClusterProfile with `kubectl clusterprofile doctor`)\n",
		trapCluster, trapServer, proxyServer)
	handedOut := pluginRun{Credential: credential(token, expiry)}
	tests := map[string]struct {
		profile   string
		providers []string
		// wantServer is the server pkg/access chose: the trap's proves that
		// the attacker's entry is the one in use.
		wantServer string
		wantPlugin pluginRun
		wantCall   call
	}{
		"an entry in a forged profile": {profile: forgedProfile, providers: []string{proxyProvider}, wantServer: trapServer,
			wantPlugin: pluginRun{ExitCode: 1, Stderr: refusal},
			wantCall:   call{URL: trapServer + "/version", Err: "getting credentials: exec: executable " + cpCreds + " failed with exit code 1"}},
		"credentialProviders of the hub's own profile": {profile: trapCluster, providers: []string{unwrittenProvider}, wantServer: trapServer,
			wantPlugin: pluginRun{ExitCode: 1, Stderr: refusal},
			wantCall:   call{URL: trapServer + "/version", Err: "getting credentials: exec: executable " + cpCreds + " failed with exit code 1"}},
		"control: the hub's own entry": {profile: trapCluster, providers: []string{proxyProvider}, wantServer: proxyServer,
			wantPlugin: handedOut, wantCall: call{Version: serverVersion(t)}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := &cpv1alpha1.ClusterProfile{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: trapNamespace, Name: tc.profile}, p); err != nil {
				t.Fatal(err)
			}
			// What a consumer such as MultiKueue builds from the profile.
			cfg, err := doctor.AccessConfig(tc.providers, trapNamespace, msa, plugin(t)).BuildConfigFromCP(p)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tc.wantServer {
				t.Fatalf("pkg/access chose server %s, want %s", cfg.Host, tc.wantServer)
			}

			if diff := cmp.Diff(tc.wantPlugin, runAsClientGo(t, cfg)); diff != "" {
				t.Errorf("cp-creds run as client-go runs it (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCall, callVersion(t, cfg)); diff != "" {
				t.Errorf("the consumer's request (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]request(nil), trap.requests()); diff != "" {
				t.Errorf("requests at the trap (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("doctor --connect", func(t *testing.T) {
		forgedChecks := map[string]string{
			doctor.CheckProfile: fmt.Sprintf(`The profile belongs to cluster manager %q (label x-k8s.io/cluster-manager=%q), not "open-cluster-management": it was not published by this bundle, so use the profile the mirror publishes or pass --cluster-manager.`, attacker, attacker),
			doctor.CheckExtension: fmt.Sprintf(`The entry's extension client.authentication.k8s.io/exec is {"clusterName":%q}, not {"clusterName": %q}: cp-creds would look for another cluster's token; the access provider writes it, so check who else writes the entry %q.`,
				trapCluster, forgedProfile, proxyProvider),
			doctor.CheckToken: fmt.Sprintf("Secret %s/%s-%s does not exist: the hub has no ManagedCluster %s, so none of its tokens is copied anywhere; this profile was written by another writer, or is left over.",
				trapNamespace, forgedProfile, msa, forgedProfile),
		}
		// Through the credentialProviders entry every check passes but the
		// one that compares its server with the copy's record.
		fallback := row(trapCluster, map[string]string{doctor.CheckPublished: fmt.Sprintf("Refusing to send the token of cluster %q to %s: the hub publishes that cluster at %s; the access entry the consumer used was not written by this bundle (look at the ClusterProfile with `kubectl clusterprofile doctor`).",
			trapCluster, trapServer, proxyServer)})
		fallback.Provider = unwrittenProvider
		// The attacker wrote as whatever its client calls itself; the doctor
		// says who, and that it is not the bundle.
		writer := strings.Split(rest.DefaultKubernetesUserAgent(), "/")[0]
		publishedByAnother := fmt.Sprintf("The profile was published by another mirror (%s), such as OCM's own while this bundle's mirror stays passive.", writer)
		entryByAnother := fmt.Sprintf("The entry %q was written by another writer (%s), such as cluster-proxy's own while this bundle's access provider yields to it.", proxyProvider, writer)
		tests := map[string]struct {
			providers []string
			want      []doctor.Row
		}{
			"a consumer of " + proxyProvider: {providers: []string{proxyProvider}, want: []doctor.Row{
				connected(row(trapCluster, nil), "", serverVersion(t)),
				noted(connected(row(forgedProfile, forgedChecks),
					"Not connected: the checks profile, extension, token failed, and the doctor sends the token only to a profile and an entry that pass them.", ""),
					publishedByAnother, entryByAnother),
			}},
			"a consumer of " + unwrittenProvider: {providers: []string{unwrittenProvider}, want: []doctor.Row{
				connected(fallback, "Not connected: the checks published failed, and the doctor sends the token only to a profile and an entry that pass them.", ""),
				noted(connected(doctor.Row{Cluster: forgedProfile, Checks: []doctor.Check{
					{Name: doctor.CheckProfile, Fix: forgedChecks[doctor.CheckProfile]},
					{Name: doctor.CheckEntry, Fix: fmt.Sprintf("The profile has no entry for the providers %s, only for %s: name one of these in the consumer's provider list (and in --provider), or turn on the provider you configured.",
						unwrittenProvider, proxyProvider)},
					{Name: doctor.CheckToken, Fix: forgedChecks[doctor.CheckToken]},
					{Name: doctor.CheckAccess, OK: true},
				}}, "Not connected: the checks profile, entry, token failed, and the doctor sends the token only to a profile and an entry that pass them.", ""),
					publishedByAnother),
			}},
		}
		for name, tc := range tests {
			t.Run(name, func(t *testing.T) {
				s := settings(trapNamespace)
				s.Providers = tc.providers
				d := &doctor.Doctor{Client: c, Settings: s, Now: time.Now, Connect: true, Plugin: plugin(t)}

				got, err := d.Run(ctx)

				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, got, ignoreLatency); diff != "" {
					t.Errorf("rows (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]request(nil), trap.requests()); diff != "" {
					t.Errorf("requests at the trap (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("the token reached the hub's own entry and nothing else", func(t *testing.T) {
		// One call from the consumer, one from the doctor.
		legitimate := request{Method: http.MethodGet, Path: "/" + trapCluster + "/version", Token: true}
		if diff := cmp.Diff([]request{legitimate, legitimate}, userServer.requests()); diff != "" {
			t.Errorf("requests at the user server (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]request(nil), trap.requests()); diff != "" {
			t.Errorf("requests at the trap (-want +got):\n%s", diff)
		}
	})

	t.Run("the record follows a CA rotation", func(t *testing.T) {
		p := &cpv1alpha1.ClusterProfile{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: trapNamespace, Name: trapCluster}, p); err != nil {
			t.Fatal(err)
		}
		before, err := doctor.AccessConfig([]string{proxyProvider}, trapNamespace, msa, plugin(t)).BuildConfigFromCP(p)
		if err != nil {
			t.Fatal(err)
		}
		rotated := env.Config.CAData // any other CA
		framework.Update(ctx, t, c, proxyCA, func(s *corev1.Secret) { s.Data[accessprovider.UserServerCAKey] = rotated })

		expectPublished(t, proxyServer, rotated)
		// An entry still trusting the old CA is one the hub no longer
		// publishes.
		want := pluginRun{ExitCode: 1, Stderr: fmt.Sprintf("[cp-creds] refusing to send the token of cluster %q to %s: the exec config trusts a CA (sha256 %s) other than the one the hub publishes for that server (sha256 %s); the access entry the consumer used was not written by this bundle\n",
			trapCluster, proxyServer, digest(ca), digest(rotated))}
		if diff := cmp.Diff(want, runAsClientGo(t, before)); diff != "" {
			t.Errorf("cp-creds for the entry before the rotation (-want +got):\n%s", diff)
		}
		if err := c.Get(ctx, types.NamespacedName{Namespace: trapNamespace, Name: trapCluster}, p); err != nil {
			t.Fatal(err)
		}
		after, err := doctor.AccessConfig([]string{proxyProvider}, trapNamespace, msa, plugin(t)).BuildConfigFromCP(p)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(handedOut, runAsClientGo(t, after)); diff != "" {
			t.Errorf("cp-creds for the rotated entry (-want +got):\n%s", diff)
		}
	})
}

// expectPublished waits until the hub's own profile carries exactly the
// cluster-proxy entry for server with ca, and the token copy records
// exactly that server and CA: the whole annotation, written out here
// rather than computed by the code under test.
func expectPublished(t *testing.T, server string, ca []byte) {
	t.Helper()
	ctx := framework.ContextFor(t)
	wantEntries := []cpv1alpha1.AccessProvider{trapEntry(proxyProvider, server, ca)}
	wantRecord := fmt.Sprintf(`[{"server":%q,"caSHA256":%q}]`, server, digest(ca))
	NewWithT(t).Eventually(func(g Gomega) {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: trapNamespace, Name: trapCluster}, p)).To(Succeed())
		g.Expect(cmp.Diff(wantEntries, p.Status.AccessProviders)).To(BeEmpty(), "entries of %s/%s", trapNamespace, trapCluster)
		copied := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: trapNamespace, Name: cpcreds.SecretName(trapCluster, msa)}, copied)).To(Succeed())
		g.Expect(copied.Annotations[cpcreds.AnnotationPublishedServers]).To(Equal(wantRecord))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// trapEntry is an entry named name that sends trapCluster's consumers to
// server, trusting ca.
func trapEntry(name, server string, ca []byte) cpv1alpha1.AccessProvider {
	return cpv1alpha1.AccessProvider{Name: name, Cluster: clientcmdv1.Cluster{Server: server, CertificateAuthorityData: ca,
		Extensions: []clientcmdv1.NamedExtension{cpcreds.ExecExtension(trapCluster)}}}
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// asAttacker is a client of the hub acting as attacker, who may create
// ClusterProfiles in trapNamespace and write their status, and nothing else.
func asAttacker(t *testing.T) client.Client {
	t.Helper()
	ctx := framework.ContextFor(t)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: trapNamespace, Name: attacker},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{cpv1alpha1.GroupVersion.Group}, Resources: []string{"clusterprofiles"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
			{APIGroups: []string{cpv1alpha1.GroupVersion.Group}, Resources: []string{"clusterprofiles/status"}, Verbs: []string{"get", "update", "patch"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: trapNamespace, Name: attacker},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: attacker},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: attacker}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, attacker, err)
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: attacker}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// request is what a recorder saw of one request.
type request struct {
	Method, Path string
	// Token is whether it carried the token as bearer.
	Token bool
}

// recorder is an HTTPS server that records every request it receives
// before its handler answers.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []request
}

func startRecorder(t *testing.T, token string, next http.Handler) *recorder {
	t.Helper()
	r := &recorder{}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, request{Method: req.Method, Path: req.URL.Path, Token: req.Header.Get("Authorization") == "Bearer "+token})
		r.mu.Unlock()
		next.ServeHTTP(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.seen...)
}

// userServerFor does what cluster-proxy's user server does for cluster:
// it takes /<cluster>/... to the cluster's API server (here the test API
// server) with the caller's bearer token and no credential of its own.
func userServerFor(t *testing.T, cluster string) http.Handler {
	t.Helper()
	target, transport := framework.ProxyTo(t, rest.AnonymousClientConfig(env.Config))
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Path = strings.TrimPrefix(r.Out.URL.Path, "/"+cluster)
			r.Out.URL.RawPath = ""
			r.SetURL(target)
		},
		Transport: transport,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/"+cluster+"/") {
			http.NotFound(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	})
}

// endpointOf is the manager's setting that publishes server as
// cluster-proxy's user server.
func endpointOf(t *testing.T, server *httptest.Server) accessprovider.Endpoint {
	t.Helper()
	u, err := url.Parse(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return accessprovider.Endpoint{Host: u.Hostname(), Port: port}
}

// pluginRun is what an exec plugin run gave: the credential it printed,
// its stderr and its exit code.
type pluginRun struct {
	Credential *clientauthenticationv1.ExecCredential
	Stderr     string
	ExitCode   int
}

// credential is what cp-creds prints when it hands token out.
func credential(token string, expiry time.Time) *clientauthenticationv1.ExecCredential {
	return &clientauthenticationv1.ExecCredential{
		TypeMeta: metav1.TypeMeta{APIVersion: clientauthenticationv1.SchemeGroupVersion.String(), Kind: "ExecCredential"},
		Status: &clientauthenticationv1.ExecCredentialStatus{Token: token,
			ExpirationTimestamp: &metav1.Time{Time: expiry.Truncate(time.Second)}},
	}
}

// execInfoCodecs encode ExecCredentials as client-go's exec authenticator
// does.
var execInfoCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	clientauthinstall.Install(s)
	return serializer.NewCodecFactory(s)
}()

// runAsClientGo runs cfg's exec plugin the way client-go's exec
// authenticator does before a request through cfg: the exec config's
// command, args and environment, and KUBERNETES_EXEC_INFO holding the
// cluster client-go derives from cfg (rest.ConfigToExecCluster), in the
// exec config's apiVersion. Nothing else is inherited, so cp-creds reads
// the hub only through the kubeconfig the exec config names.
func runAsClientGo(t *testing.T, cfg *rest.Config) pluginRun {
	t.Helper()
	exec := cfg.ExecProvider
	cluster, err := rest.ConfigToExecCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gv, err := schema.ParseGroupVersion(exec.APIVersion)
	if err != nil {
		t.Fatal(err)
	}
	info, err := runtime.Encode(execInfoCodecs.LegacyCodec(gv),
		&clientauthentication.ExecCredential{Spec: clientauthentication.ExecCredentialSpec{Interactive: false, Cluster: cluster}})
	if err != nil {
		t.Fatal(err)
	}
	environment := []string{"HOME=" + binDir, cpcreds.EnvExecInfo + "=" + string(info)}
	for _, v := range exec.Env {
		environment = append(environment, v.Name+"="+v.Value)
	}
	return runPlugin(t, exec.Command, exec.Args, environment)
}

func runPlugin(t *testing.T, command string, args, environment []string) pluginRun {
	t.Helper()
	cmd := osexec.Command(command, args...)
	cmd.Env = environment
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *osexec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("running %s: %v", command, err)
	}
	run := pluginRun{Stderr: stderr.String(), ExitCode: cmd.ProcessState.ExitCode()}
	if stdout.Len() > 0 {
		run.Credential = &clientauthenticationv1.ExecCredential{}
		if err := json.Unmarshal(stdout.Bytes(), run.Credential); err != nil {
			t.Fatalf("%s printed no ExecCredential (%v): %s", command, err, stdout.String())
		}
	}
	return run
}

// call is what a consumer's GET /version through a rest.Config gave: the
// version, or the URL it failed on and why.
type call struct {
	Version, URL, Err string
}

func callVersion(t *testing.T, cfg *rest.Config) call {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(framework.ContextFor(t))
	var urlErr *url.Error
	switch {
	case errors.As(err, &urlErr):
		return call{URL: urlErr.URL, Err: urlErr.Err.Error()}
	case err != nil:
		return call{Err: err.Error()}
	}
	var info version.Info
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatalf("/version answered %s: %v", raw, err)
	}
	return call{Version: info.GitVersion}
}

// noted adds the writer notes the doctor gives a row.
func noted(r doctor.Row, notes ...string) doctor.Row {
	r.Notes = notes
	return r
}
