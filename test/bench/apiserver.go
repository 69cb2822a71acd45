package main

import (
	"bytes"
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiServerWriteVerbs are the verbs of apiserver_request_total that change
// an object (APPLY is a Server-Side Apply PATCH).
var apiServerWriteVerbs = []string{"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"}

// apiServer reads the API server's own request counters: the one ruler that
// measures this project's manager and upstream's mirror alike.
type apiServer struct {
	client rest.Interface
}

func newAPIServer(cfg *rest.Config) (*apiServer, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating a client for the API server's metrics: %w", err)
	}
	return &apiServer{client: cs.CoreV1().RESTClient()}, nil
}

// profileCounts are the API server's counters for ClusterProfiles, by
// anyone, so far.
type profileCounts struct {
	// writes are the write requests it served (and their status).
	writes int
	// storageWrites are its writes to etcd: one per write request that
	// changes the profile, and one more each time it redid a request inside
	// because the profile changed under it (another write of it at the same
	// moment, or its cache behind etcd), which costs a whole apply again.
	storageWrites int
}

func (c profileCounts) minus(earlier profileCounts) profileCounts {
	return profileCounts{writes: c.writes - earlier.writes, storageWrites: c.storageWrites - earlier.storageWrites}
}

func (a *apiServer) profileCounts(ctx context.Context) (profileCounts, error) {
	body, err := a.client.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return profileCounts{}, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	set, err := parseExposition(bytes.NewReader(body))
	if err != nil {
		return profileCounts{}, fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	return countProfiles(set), nil
}

// countProfiles reads profileCounts from a scrape of the API server.
func countProfiles(set metricSet) profileCounts {
	var c profileCounts
	for _, verb := range apiServerWriteVerbs {
		c.writes += int(set.sum("apiserver_request_total", map[string]string{"resource": "clusterprofiles", "verb": verb}))
	}
	for _, op := range []string{"create", "update"} {
		c.storageWrites += int(set.sum("etcd_requests_total", map[string]string{"resource": "clusterprofiles", "operation": op}))
	}
	return c
}
