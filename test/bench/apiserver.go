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

// profileWrites is how many write requests for ClusterProfiles (and their
// status) the API server has served so far, by anyone.
func (a *apiServer) profileWrites(ctx context.Context) (int, error) {
	body, err := a.client.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	set, err := parseExposition(bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	total := 0.0
	for _, verb := range apiServerWriteVerbs {
		total += set.sum("apiserver_request_total", map[string]string{"resource": "clusterprofiles", "verb": verb})
	}
	return int(total), nil
}
