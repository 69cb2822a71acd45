package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// etcdGateway speaks to the control plane's etcd through its JSON gateway
// (POST /v3/...), which every etcd serves by default; etcd's Go client
// would bring its gRPC API into the module for these three calls.
type etcdGateway struct {
	url    string
	client *http.Client
}

func newEtcdGateway(url string) *etcdGateway {
	return &etcdGateway{url: url, client: &http.Client{Timeout: 5 * time.Minute}}
}

// compacted is what compactAndDefragment did: etcd's database file size
// before and after.
type compacted struct {
	dbBefore, dbAfter int64
	took              time.Duration
}

// compactAndDefragment drops etcd's history up to its current revision and
// returns the freed space to the file system. The floor leaves etcd hundreds
// of megabytes of deleted objects' revisions; the API server compacts every
// five minutes but never defragments, so without this the manager's run
// would find a larger database than the floor found.
func (g *etcdGateway) compactAndDefragment(ctx context.Context) (compacted, error) {
	start := time.Now()
	before, err := g.status(ctx)
	if err != nil {
		return compacted{}, err
	}
	compaction := map[string]any{"revision": strconv.FormatInt(before.Header.Revision, 10), "physical": true}
	if err := g.call(ctx, "/v3/kv/compaction", compaction, nil); err != nil {
		return compacted{}, err
	}
	if err := g.call(ctx, "/v3/maintenance/defragment", map[string]any{}, nil); err != nil {
		return compacted{}, err
	}
	after, err := g.status(ctx)
	if err != nil {
		return compacted{}, err
	}
	return compacted{dbBefore: before.DBSize, dbAfter: after.DBSize, took: time.Since(start)}, nil
}

// etcdStatus is the part of etcd's maintenance status read here. The
// gateway writes 64-bit integers as JSON strings.
type etcdStatus struct {
	Header struct {
		Revision int64 `json:"revision,string"`
	} `json:"header"`
	DBSize int64 `json:"dbSize,string"`
}

func (g *etcdGateway) status(ctx context.Context) (etcdStatus, error) {
	var s etcdStatus
	return s, g.call(ctx, "/v3/maintenance/status", map[string]any{}, &s)
}

// call posts body to path and decodes the answer into out (when not nil).
func (g *etcdGateway) call(ctx context.Context, path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	answer := &bytes.Buffer{}
	if _, err := answer.ReadFrom(resp.Body); err != nil {
		return fmt.Errorf("etcd %s: reading the answer: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, answer)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(answer.Bytes(), out); err != nil {
		return fmt.Errorf("etcd %s: decoding %q: %w", path, answer, err)
	}
	return nil
}
