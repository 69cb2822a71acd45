// Package metricsauth_test runs the /metrics guard against a real API
// server: its TokenReviews and SubjectAccessReviews, its RBAC.
package metricsauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"open-cluster-management.io/clusterprofile-bundle/pkg/metricsauth"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{}, &env))
}

const namespace = "metrics-guard"

// TestTheGuardAsksTheAPIServer: a ServiceAccount bound to a role that may
// GET /metrics gets through, one without gets 403, a missing or unknown
// token 401, and a second request with the same token is answered from the
// cache, with no review sent.
func TestTheGuardAsksTheAPIServer(t *testing.T) {
	ctx := framework.ContextFor(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	framework.CreateNamespace(ctx, t, env.Client, namespace)
	for _, sa := range []string{"scraper", "outsider"} {
		if err := env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sa}}); err != nil {
			t.Fatal(err)
		}
	}
	grantMetricsReader(ctx, t, cs, "scraper")
	scraper := framework.ServiceAccountToken(ctx, t, env.Client, namespace, "scraper")
	outsider := framework.ServiceAccountToken(ctx, t, env.Client, namespace, "outsider")

	reviews := &requestLog{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(reviews.wrap)
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	filter, err := metricsauth.WithAuthenticationAndAuthorization(cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	guarded, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("metrics"))
	}))
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(guarded)
	defer server.Close()

	steps := []struct {
		name, path, authorization string
		want                      int
		wantReviews               []string
	}{
		{"no token", "/metrics", "", http.StatusUnauthorized, nil},
		{"not a bearer token", "/metrics", "Basic c2NyYXBlcg==", http.StatusUnauthorized, nil},
		{"a token the API server does not know", "/metrics", "Bearer not-a-token", http.StatusUnauthorized, []string{"tokenreviews"}},
		{"the scraper", "/metrics", "Bearer " + scraper, http.StatusOK, []string{"tokenreviews", "subjectaccessreviews"}},
		{"the scraper again: cached", "/metrics", "bearer " + scraper, http.StatusOK, nil},
		{"the scraper on another path", "/debug", "Bearer " + scraper, http.StatusForbidden, []string{"tokenreviews", "subjectaccessreviews"}},
		{"a ServiceAccount without the role", "/metrics", "Bearer " + outsider, http.StatusForbidden, []string{"tokenreviews", "subjectaccessreviews"}},
		{"the outsider again: cached", "/metrics", "Bearer " + outsider, http.StatusForbidden, nil},
	}
	for _, step := range steps {
		reviews.reset()
		if got := get(t, server.URL+step.path, step.authorization); got != step.want {
			t.Errorf("%s: status %d, want %d", step.name, got, step.want)
		}
		if diff := cmp.Diff(step.wantReviews, reviews.resources()); diff != "" {
			t.Errorf("%s: reviews sent (-want +got):\n%s", step.name, diff)
		}
	}
}

// grantMetricsReader binds the ServiceAccount to a ClusterRole allowing
// GET on the non-resource URL /metrics, as the chart's metrics.readers do.
func grantMetricsReader(ctx context.Context, t *testing.T, cs kubernetes.Interface, sa string) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metrics-guard-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-guard-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: sa}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, url, authorization string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode
}

// requestLog records the resource of each API request the guard sends.
type requestLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.seen = append(l.seen, req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:])
		l.mu.Unlock()
		return next.RoundTrip(req)
	})
}

func (l *requestLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = nil
}

func (l *requestLog) resources() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
