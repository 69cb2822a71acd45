package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const readyzAllOK = `[+]ping ok
[+]log ok
[+]etcd ok
[+]etcd-readiness ok
[+]informer-sync ok
[+]poststarthook/start-apiextensions-informers ok
[+]shutdown ok
readyz check passed
`

func TestParseReadyz(t *testing.T) {
	cases := map[string]struct {
		body string
		want ReadyzResult
	}{
		"all ok": {
			body: readyzAllOK,
			want: ReadyzResult{Observed: true, Ready: true, Passed: []string{
				"ping", "log", "etcd", "etcd-readiness", "informer-sync", "poststarthook/start-apiextensions-informers", "shutdown"}},
		},
		"etcd failing": {
			body: "[+]ping ok\n[-]etcd failed: reason withheld\n[+]informer-sync ok\nreadyz check failed\n",
			want: ReadyzResult{Observed: true, Passed: []string{"ping", "informer-sync"}, Failed: []string{"etcd"}},
		},
		"several failing": {
			body: "[+]ping ok\n[-]etcd failed: reason withheld\n[-]poststarthook/start-apiextensions-informers failed: reason withheld\n" +
				"[-]shutdown failed: reason withheld\nreadyz check failed",
			want: ReadyzResult{Observed: true, Passed: []string{"ping"},
				Failed: []string{"etcd", "poststarthook/start-apiextensions-informers", "shutdown"}},
		},
		"excluded check": {
			body: "[+]ping ok\n[+]etcd excluded: ok\nreadyz check passed\n",
			want: ReadyzResult{Observed: true, Ready: true, Passed: []string{"ping", "etcd"}},
		},
		"checks without a verdict line": {
			body: "[+]ping ok\n[-]etcd failed: reason withheld\n",
			want: ReadyzResult{Observed: true, Passed: []string{"ping"}, Failed: []string{"etcd"}},
		},
		"windows line ends": {
			body: "[+]ping ok\r\n[+]etcd ok\r\nreadyz check passed\r\n",
			want: ReadyzResult{Observed: true, Ready: true, Passed: []string{"ping", "etcd"}},
		},
		"garbage": {
			body: "<html><body>502 Bad Gateway</body></html>\n[+]\n",
			want: ReadyzResult{Problem: "the /readyz answer is not a readiness report"},
		},
		"empty": {
			body: "",
			want: ReadyzResult{Problem: "the /readyz answer is not a readiness report"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseReadyz(tc.body)); diff != "" {
				t.Errorf("ParseReadyz (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadyzResponse(t *testing.T) {
	cases := map[string]struct {
		status int
		body   string
		want   ReadyzResult
	}{
		"200 with report": {
			status: 200, body: "[+]ping ok\n[+]etcd ok\nreadyz check passed\n",
			want: ReadyzResult{Observed: true, Ready: true, Passed: []string{"ping", "etcd"}},
		},
		"200 with a plain ok": {
			status: 200, body: "ok",
			want: ReadyzResult{Observed: true, Ready: true},
		},
		"500 names the failing checks": {
			status: 500, body: "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n",
			want: ReadyzResult{Observed: true, Passed: []string{"ping"}, Failed: []string{"etcd"}},
		},
		"500 with garbage is still not ready": {
			status: 500, body: "internal error",
			want: ReadyzResult{Observed: true},
		},
		"forbidden is not observed": {
			status: 403, body: `{"kind":"Status"}`,
			want: ReadyzResult{Problem: "/readyz answered HTTP 403"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ReadyzResponse(tc.status, tc.body)); diff != "" {
				t.Errorf("ReadyzResponse (-want +got):\n%s", diff)
			}
		})
	}
}

// A real API server lists about fifty checks, more than client-go keeps of
// an error body; the failing one at the end must still be named.
func TestProbeReadyzReadsLongFailingReports(t *testing.T) {
	var body strings.Builder
	for i := range 80 {
		fmt.Fprintf(&body, "[+]poststarthook/hook-number-%02d ok\n", i)
	}
	body.WriteString("[-]etcd failed: reason withheld\nreadyz check failed\n")
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || r.URL.Query().Get("verbose") != "true" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(body.String()))
	}))
	defer server.Close()

	got, err := probeReadyz(context.Background(), discoveryREST(t, server.URL))
	if err != nil {
		t.Fatalf("probeReadyz: %v", err)
	}
	if diff := cmp.Diff([]string{"etcd"}, got.Failed); diff != "" {
		t.Errorf("failed checks (-want +got):\n%s", diff)
	}
	if !got.Observed || got.Ready || len(got.Passed) != 80 {
		t.Errorf("got observed=%v ready=%v with %d passed checks, want observed, not ready, 80 passed", got.Observed, got.Ready, len(got.Passed))
	}
}

func TestProbeReadyzWithoutAnswer(t *testing.T) {
	server := httptest.NewServer(http.NotFoundHandler())
	url := server.URL
	server.Close() // nothing listens any more

	_, err := probeReadyz(context.Background(), discoveryREST(t, url))
	if !errors.Is(err, errNoAnswer) {
		t.Errorf("probeReadyz error = %v, want errNoAnswer", err)
	}
}

func discoveryREST(t *testing.T, host string) rest.Interface {
	t.Helper()
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	return kube.Discovery().RESTClient()
}
