package reliability_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// killingProxy is an HTTPS reverse proxy between a manager process and the
// API server that SIGKILLs the manager at one exact moment: after the API
// server answered a chosen request and before the manager reads the answer.
// The manager knows only that its write went out; whatever it would have
// sent next is never sent, as when its node dies at that instant. The proxy
// forwards with the manager's own credentials, so the API server authorizes
// every request as it would without the proxy.
type killingProxy struct {
	// kubeconfig is the manager's kubeconfig pointing at the proxy.
	kubeconfig string
	// killAfter tells whether a response is the moment to kill, and names it.
	killAfter func(*http.Response) (string, bool)
	armed     chan struct{}
	mu        sync.Mutex
	victim    *managerProcess
	killed    chan string
}

var errKilled = errors.New("the manager was killed before this answer reached it")

// startKillingProxy serves the proxy in front of e's API server.
func startKillingProxy(t *testing.T, e *framework.Env, killAfter func(*http.Response) (string, bool)) *killingProxy {
	t.Helper()
	raw, err := e.AdminKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	target, transport := framework.ProxyTo(t, cfg)
	p := &killingProxy{killAfter: killAfter, armed: make(chan struct{}), killed: make(chan string, 1)}
	server := httptest.NewTLSServer(&httputil.ReverseProxy{
		Rewrite:        func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:      transport,
		ModifyResponse: p.inspect,
		ErrorHandler:   func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) },
	})
	t.Cleanup(func() { server.CloseClientConnections(); server.Close() })
	p.kubeconfig = kubeconfigFor(t, raw, server)
	return p
}

// kubeconfigFor is the manager's kubeconfig with its server moved to the
// proxy, trusting the proxy's certificate.
func kubeconfigFor(t *testing.T, raw []byte, server *httptest.Server) string {
	t.Helper()
	config, err := clientcmd.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	ca := framework.CertificatePEM(server)
	for _, cluster := range config.Clusters {
		cluster.Server = server.URL
		cluster.CertificateAuthorityData = ca
		cluster.CertificateAuthority = ""
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// arm names the process to kill; until then answers wait, so none can slip
// past the kill.
func (p *killingProxy) arm(m *managerProcess) {
	p.mu.Lock()
	p.victim = m
	p.mu.Unlock()
	close(p.armed)
}

// inspect sees every answer before the manager does. Answers are inspected
// one at a time, so once the kill is decided no other answer reaches the
// manager.
func (p *killingProxy) inspect(resp *http.Response) error {
	<-p.armed
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.victim == nil {
		return nil
	}
	what, now := p.killAfter(resp)
	if !now {
		return nil
	}
	p.victim.kill()
	p.victim = nil
	p.killed <- what
	return errKilled
}

// waitKilled waits for the kill and returns what it followed.
func (p *killingProxy) waitKilled(t *testing.T, timeout time.Duration) string {
	t.Helper()
	select {
	case what := <-p.killed:
		return what
	case <-time.After(timeout):
		t.Fatalf("the moment to kill the manager did not come within %s", timeout)
		return ""
	}
}

// profileRequest reads a request for one ClusterProfile: its namespace/name
// and subresource ("" for the object itself).
func profileRequest(r *http.Request) (key, subresource string, ok bool) {
	path, found := strings.CutPrefix(r.URL.Path, "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/")
	parts := strings.Split(path, "/")
	if !found || len(parts) < 3 || parts[1] != "clusterprofiles" {
		return "", "", false
	}
	if len(parts) > 3 {
		subresource = parts[3]
	}
	return parts[0] + "/" + parts[2], subresource, true
}

// profileCreated is the answer to the create of a new ClusterProfile: the
// mirror creates with a Server-Side Apply (PATCH), which the API server
// answers 201 Created when the object is new.
func profileCreated(resp *http.Response) (string, bool) {
	key, subresource, ok := profileRequest(resp.Request)
	return key, ok && subresource == "" && resp.Request.Method == http.MethodPatch && resp.StatusCode == http.StatusCreated
}

// statusWritten is the successful answer to a status write of profile key.
func statusWritten(key string) func(*http.Response) (string, bool) {
	return func(resp *http.Response) (string, bool) {
		got, subresource, ok := profileRequest(resp.Request)
		return got, ok && got == key && subresource == "status" && resp.Request.Method == http.MethodPatch &&
			resp.StatusCode == http.StatusOK
	}
}
