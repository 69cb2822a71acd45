package framework

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/rest"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EventsAbout lists the events.k8s.io Events about one object with a reason.
func EventsAbout(ctx context.Context, c client.Reader, kind, name, reason string) ([]eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	if err := c.List(ctx, list); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out, nil
}

// SecretNamespaces returns, sorted, the namespaces holding a Secret named
// name (where a token copy of that name exists).
func SecretNamespaces(ctx context.Context, c client.Reader, name string) ([]string, error) {
	list := &corev1.SecretList{}
	if err := c.List(ctx, list); err != nil {
		return nil, err
	}
	found := []string{}
	for _, s := range list.Items {
		if s.Name == name {
			found = append(found, s.Namespace)
		}
	}
	sort.Strings(found)
	return found, nil
}

// ProxyTo is what a test's reverse proxy in front of cfg's API server
// needs: the server's URL and a transport that authenticates as cfg does.
func ProxyTo(t testing.TB, cfg *rest.Config) (*url.URL, http.RoundTripper) {
	t.Helper()
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	return target, transport
}

// CertificatePEM is a test HTTPS server's certificate, PEM-encoded: what a
// client configured to reach it (a kubeconfig, an access entry) trusts as CA.
func CertificatePEM(server *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
}

// ProfileNames are the namespace/names of the profiles c lists with opts.
func ProfileNames(ctx context.Context, t testing.TB, c client.Reader, opts ...client.ListOption) sets.Set[string] {
	t.Helper()
	list := &cpv1alpha1.ClusterProfileList{}
	if err := c.List(ctx, list, opts...); err != nil {
		t.Fatal(err)
	}
	names := sets.New[string]()
	for _, p := range list.Items {
		names.Insert(p.Namespace + "/" + p.Name)
	}
	return names
}
