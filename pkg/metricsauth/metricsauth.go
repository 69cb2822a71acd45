// Package metricsauth guards the manager's /metrics endpoint the way
// Kubernetes components guard theirs: a request must carry a bearer token
// the API server accepts (TokenReview), for a user the API server allows to
// GET the path (SubjectAccessReview of a non-resource URL). Decisions are
// cached briefly, so a scraper costs two reviews a minute, not two a scrape.
//
// controller-runtime's metrics/filters does the same through k8s.io/apiserver's
// delegating authenticator and authorizer. Those link the API server's CEL
// authorizers, gRPC and OpenTelemetry, which make every manager's binary and
// resident memory larger (docs/performance.md, "What keeps memory down"),
// none of it used by a token and access check.
package metricsauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const (
	// allowedFor and refusedFor are how long a decision is reused: a
	// revoked token or role stops working within a minute (controller-
	// runtime's filter caches the token for a minute too); a refusal is
	// retried sooner, so a scraper just granted access waits little.
	allowedFor = time.Minute
	refusedFor = 30 * time.Second
	// reviewTimeout bounds the two reviews of one request.
	reviewTimeout = 10 * time.Second
)

// WithAuthenticationAndAuthorization is a metricsserver.Options.FilterProvider.
func WithAuthenticationAndAuthorization(config *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the TokenReview client: %w", err)
	}
	authz, err := authorizationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building the SubjectAccessReview client: %w", err)
	}
	g := &guard{
		tokens:    authn.TokenReviews(),
		access:    authz.SubjectAccessReviews(),
		decisions: newDecisionCache(clock.RealClock{}),
	}
	return g.filter, nil
}

// unauthorized answers a request without a token the API server accepts.
var unauthorized = decision{status: http.StatusUnauthorized, message: "Unauthorized"}

// guard reviews requests against the API server.
type guard struct {
	tokens    authenticationclient.TokenReviewInterface
	access    authorizationclient.SubjectAccessReviewInterface
	decisions *decisionCache
}

func (g *guard) filter(log logr.Logger, next http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		d, err := g.decide(req)
		if err != nil {
			log.Error(err, "Reviewing a metrics request failed", "path", req.URL.Path)
			http.Error(w, "Authentication or authorization failed", http.StatusInternalServerError)
			return
		}
		if d.status != http.StatusOK {
			log.V(4).Info("Metrics request refused", "status", d.status, "reason", d.message)
			http.Error(w, d.message, d.status)
			return
		}
		next.ServeHTTP(w, req)
	}), nil
}

// decide answers from the cache or asks the API server; errors are not
// cached, so the next scrape asks again.
func (g *guard) decide(req *http.Request) (decision, error) {
	token, ok := bearerToken(req)
	if !ok {
		return unauthorized, nil
	}
	verb, path := strings.ToLower(req.Method), req.URL.Path
	key := cacheKey(token, verb, path)
	if d, ok := g.decisions.get(key); ok {
		return d, nil
	}
	d, err := g.review(req, token, verb, path)
	if err != nil {
		return decision{}, err
	}
	g.decisions.put(key, d)
	return d, nil
}

// review asks who the token's user is, then whether that user may verb path.
func (g *guard) review(req *http.Request, token, verb, path string) (decision, error) {
	// The reviews end when the scraper goes away too.
	ctx, cancel := context.WithTimeout(req.Context(), reviewTimeout)
	defer cancel()
	tr, err := g.tokens.Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return decision{}, fmt.Errorf("TokenReview: %w", err)
	}
	if !tr.Status.Authenticated {
		return unauthorized, nil
	}
	user := tr.Status.User
	sar, err := g.access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra(user.Extra),
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return decision{}, fmt.Errorf("SubjectAccessReview for user %s: %w", user.Username, err)
	}
	if !sar.Status.Allowed || sar.Status.Denied {
		return decision{status: http.StatusForbidden, message: "Authorization denied for user " + user.Username}, nil
	}
	return decision{status: http.StatusOK}, nil
}

// bearerToken reads "Authorization: Bearer <token>" (the scheme is case
// insensitive, as in the API server).
func bearerToken(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || token == "" {
		return "", false
	}
	return token, true
}

// cacheKey never holds the token itself, only its digest.
func cacheKey(token, verb, path string) string {
	sum := sha256.Sum256([]byte(token))
	return fmt.Sprintf("%x %s %s", sum, verb, path)
}

func extra(in map[string]authenticationv1.ExtraValue) map[string]authorizationv1.ExtraValue {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]authorizationv1.ExtraValue, len(in))
	for k, v := range in {
		out[k] = authorizationv1.ExtraValue(v)
	}
	return out
}
