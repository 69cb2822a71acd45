package chart_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// The manager's side of secure metrics: every install may review tokens and
// access (the filter in front of /metrics does both).
func init() {
	accesses["review a bearer token (secure metrics)"] = access{
		want: func(variant) outcome { return allowed },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "not-a-token"}})
		},
	}
	accesses["review a scraper's access to /metrics (secure metrics)"] = access{
		want: func(variant) outcome { return allowed },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: "someone", NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}})
		},
	}
}

// TestSecureMetricsWithTheChartsRBAC runs the manager binary with the
// chart's arguments (HTTPS, authentication and authorization on /metrics)
// and RBAC: a ServiceAccount listed in metrics.readers scrapes with its
// token; no token gets 401, a token without the role 403; the manager is
// refused nothing while it checks them.
func TestSecureMetricsWithTheChartsRBAC(t *testing.T) {
	ctx := framework.ContextFor(t)
	rel := chartrender.Release{Name: "secure", Namespace: "chart-secure-metrics"}
	values := gates{mirror: true}.values(false)
	values["metrics"] = map[string]any{"readers": []any{
		map[string]any{"kind": "ServiceAccount", "name": "scraper", "namespace": rel.Namespace}}}
	addr := freePort(t)
	m := startManager(ctx, t, rel, values, "--metrics-bind-address="+addr, "--health-probe-bind-address=0")
	for _, sa := range []string{"scraper", "outsider"} {
		if err := env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: rel.Namespace, Name: sa}}); err != nil {
			t.Fatal(err)
		}
	}
	url := "https://" + addr + "/metrics"
	g := NewWithT(t)
	// Until the manager listens, the scrape fails (status 0).
	g.Eventually(func() int {
		got, _ := tryScrape(url, framework.ServiceAccountToken(ctx, t, env.Client, rel.Namespace, "scraper"))
		return got.status
	}, framework.Timeout, framework.Interval).Should(Equal(http.StatusOK))
	got := scrape(t, url, framework.ServiceAccountToken(ctx, t, env.Client, rel.Namespace, "scraper"))
	g.Expect(got.body).To(ContainSubstring(`clusterprofile_feature_enabled{feature="ClusterProfile"} 1`))
	g.Expect(scrape(t, url, "").status).To(Equal(http.StatusUnauthorized))
	g.Expect(scrape(t, url, "not-a-token").status).To(Equal(http.StatusUnauthorized))
	g.Expect(scrape(t, url, framework.ServiceAccountToken(ctx, t, env.Client, rel.Namespace, "outsider")).status).To(Equal(http.StatusForbidden))
	g.Expect(scrape(t, "http://"+addr+"/metrics", "").status).To(Equal(http.StatusBadRequest), "plain HTTP on the TLS port")
	m.stop(t)
	g.Expect(m.api.Forbidden()).To(BeEmpty(), m.output.String())
}

type scrapeResult struct {
	status int
	body   string
}

// scrape GETs url with a bearer token (none when empty), trusting the
// manager's self-signed certificate.
func scrape(t testing.TB, url, token string) scrapeResult {
	t.Helper()
	got, err := tryScrape(url, token)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// tryScrape is scrape for a manager that may not listen yet.
func tryScrape(url, token string) (scrapeResult, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return scrapeResult{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Do(req)
	if err != nil {
		return scrapeResult{}, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return scrapeResult{}, err
	}
	return scrapeResult{status: resp.StatusCode, body: string(body)}, nil
}
