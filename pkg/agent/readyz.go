package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// ReadyzResult is what the API server said about its own readiness checks.
// etcd is one of them, which is how the agent observes etcd: managed control
// planes never expose etcd itself.
type ReadyzResult struct {
	// Observed is false when the API server answered but not with a
	// readiness report (forbidden, not found, an unknown format).
	Observed bool
	// Ready is the API server's verdict.
	Ready bool
	// Passed and Failed name the checks, in the order the server listed them.
	Passed []string
	Failed []string
	// Problem says why the report could not be observed.
	Problem string
}

const (
	readyzPassedLine = "readyz check passed"
	readyzFailedLine = "readyz check failed"
)

// ParseReadyz reads the body of `GET /readyz?verbose`:
//
//	[+]ping ok
//	[+]etcd ok
//	[-]poststarthook/start-apiextensions-informers failed: reason withheld
//	readyz check failed
//
// The closing line is the verdict; without it the server is ready when it
// listed checks and none failed. A body with neither is not observed.
func ParseReadyz(body string) ReadyzResult {
	var r ReadyzResult
	verdict := ""
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "[+]"):
			if name := checkName(line); name != "" {
				r.Passed = append(r.Passed, name)
			}
		case strings.HasPrefix(line, "[-]"):
			if name := checkName(line); name != "" {
				r.Failed = append(r.Failed, name)
			}
		case line == readyzPassedLine || line == readyzFailedLine:
			verdict = line
		}
	}
	switch {
	case verdict != "":
		r.Observed, r.Ready = true, verdict == readyzPassedLine && len(r.Failed) == 0
	case len(r.Passed)+len(r.Failed) > 0:
		r.Observed, r.Ready = true, len(r.Failed) == 0
	default:
		r.Problem = "the /readyz answer is not a readiness report"
	}
	return r
}

// checkName returns the name in "[+]name ok" or "[-]name failed: reason".
func checkName(line string) string {
	fields := strings.Fields(line[len("[+]"):])
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// ReadyzResponse judges an HTTP answer of `GET /readyz?verbose`. The status
// code is the API server's verdict (200 ready, 500 not ready) and the body
// names the checks; any other status means the report was not observed.
func ReadyzResponse(statusCode int, body string) ReadyzResult {
	switch statusCode {
	case http.StatusOK, http.StatusInternalServerError, http.StatusServiceUnavailable:
		r := ParseReadyz(body)
		r.Observed, r.Ready, r.Problem = true, statusCode == http.StatusOK, ""
		return r
	default:
		return ReadyzResult{Problem: fmt.Sprintf("/readyz answered HTTP %d", statusCode)}
	}
}

// errNoAnswer marks a managed API server that did not answer at all.
var errNoAnswer = errors.New("managed API server did not answer")

// probeReadyz asks the managed API server for its verbose readiness report.
// It fails only when no answer came back at all; an answer that says "not
// ready" is a result.
func probeReadyz(ctx context.Context, rc rest.Interface) (ReadyzResult, error) {
	// DoRaw, unlike Do, keeps the whole body of a non-2xx text answer.
	body, err := rc.Get().AbsPath("/readyz").Param("verbose", "true").DoRaw(ctx)
	statusCode := http.StatusOK
	if err != nil {
		var status apierrors.APIStatus
		if !errors.As(err, &status) || status.Status().Code == 0 {
			return ReadyzResult{}, fmt.Errorf("%w: GET /readyz: %w", errNoAnswer, err)
		}
		statusCode = int(status.Status().Code)
	}
	return ReadyzResponse(statusCode, string(body)), nil
}
