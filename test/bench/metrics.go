package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
	cpmetrics "open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/mirror"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
)

// sample is one line of the Prometheus text exposition format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// metricSet is one scrape of the manager's /metrics.
type metricSet []sample

// scrapeClient asks for uncompressed metrics: the benchmark scrapes several
// times a second, and gzip would make the manager it measures allocate a
// compressor each time.
var scrapeClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableCompression: true}}

func scrape(ctx context.Context, url string) (metricSet, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := scrapeClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	return parseExposition(resp.Body)
}

// parseExposition reads the text format by hand: the expfmt package is only
// an indirect dependency of this module, and the format is simple.
func parseExposition(r io.Reader) (metricSet, error) {
	var set metricSet
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, err
		}
		set = append(set, s)
	}
	return set, sc.Err()
}

// parseSample parses `name{label="value",...} value [timestamp]`.
func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end <= 0 {
		return s, fmt.Errorf("malformed metric line %q", line)
	}
	s.name, line = line[:end], line[end:]
	if line[0] == '{' {
		rest, err := parseLabels(line[1:], s.labels)
		if err != nil {
			return s, fmt.Errorf("metric line of %s: %w", s.name, err)
		}
		line = rest
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, fmt.Errorf("metric %s has no value", s.name)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("value of metric %s: %w", s.name, err)
	}
	s.value = v
	return s, nil
}

// parseLabels reads `key="value",...}` into labels and returns what follows.
func parseLabels(in string, labels map[string]string) (string, error) {
	for {
		in = strings.TrimLeft(in, " ,")
		if strings.HasPrefix(in, "}") {
			return in[1:], nil
		}
		eq := strings.Index(in, "=\"")
		if eq <= 0 {
			return "", fmt.Errorf("malformed labels %q", in)
		}
		key := strings.TrimSpace(in[:eq])
		var value strings.Builder
		i := eq + 2
		for ; i < len(in) && in[i] != '"'; i++ {
			if in[i] == '\\' && i+1 < len(in) {
				i++
				switch in[i] {
				case 'n':
					value.WriteByte('\n')
				default: // \\ and \"
					value.WriteByte(in[i])
				}
				continue
			}
			value.WriteByte(in[i])
		}
		if i >= len(in) {
			return "", fmt.Errorf("unterminated label value in %q", in)
		}
		labels[key] = value.String()
		in = in[i+1:]
	}
}

// sum adds the samples of a metric whose labels include match.
func (s metricSet) sum(name string, match map[string]string) float64 {
	total := 0.0
	for _, smp := range s {
		if smp.name == name && labelsMatch(smp.labels, match) {
			total += smp.value
		}
	}
	return total
}

func labelsMatch(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

var (
	mirrorController = map[string]string{"controller": mirror.ControllerName}
	mirrorQueue      = map[string]string{"name": mirror.ControllerName}
	mirrorWriter     = map[string]string{"writer": clusterprofile.MirrorFieldManager}
)

// reconciles is how many reconciles every controller has finished, whatever
// the result.
func (s metricSet) reconciles() int {
	return int(s.sum("controller_runtime_reconcile_total", nil))
}

// mirrorReconciles is how many of them were the mirror's.
func (s metricSet) mirrorReconciles() int {
	return int(s.sum("controller_runtime_reconcile_total", mirrorController))
}

// keysQueued is how many keys every queue took (workqueue_adds_total), in
// all and by queue.
func (s metricSet) keysQueued() (int, map[string]int) {
	total, byQueue := 0, map[string]int{}
	for _, smp := range s {
		if smp.name == "workqueue_adds_total" {
			byQueue[smp.labels["name"]] += int(smp.value)
			total += int(smp.value)
		}
	}
	return total, byQueue
}

// busy tells whether any controller has queued work or a reconcile running.
func (s metricSet) busy() bool {
	return s.sum("workqueue_depth", nil) > 0 || s.sum("controller_runtime_active_workers", nil) > 0
}

// factsHeld is how many of the mirror's reconciles held changed facts of
// this kind back (clusterprofile_facts_held_total).
func (s metricSet) factsHeld(c damping.Change) int {
	return int(s.sum("clusterprofile_facts_held_total", map[string]string{"change": strings.ToLower(c.String())}))
}

// mirrorQueueWait is the total time, in seconds, that keys waited in the
// mirror's queue, and how many waited.
func (s metricSet) mirrorQueueWait() (seconds, count float64) {
	return s.sum("workqueue_queue_duration_seconds_sum", mirrorQueue), s.sum("workqueue_queue_duration_seconds_count", mirrorQueue)
}

func (s metricSet) heapInuseBytes() float64 { return s.sum("go_memstats_heap_inuse_bytes", nil) }

// writeMethods are the HTTP methods that change something on the API server.
var writeMethods = []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// writeCounts are the write requests a manager sent.
type writeCounts struct {
	// Total counts every POST, PUT, PATCH and DELETE of the manager's
	// clients (client-go's rest_client_requests_total), whatever the
	// resource: the API server's cost, not only the mirror's own view.
	Total    int            `json:"total"`
	ByMethod map[string]int `json:"byMethod"`
	// ByOperation is the mirror's clusterprofile_writes_total.
	ByOperation map[string]int `json:"byOperation"`
	// ByWriter is clusterprofile_writes_total by writer (the mirror and the
	// access providers), with the syncer's token copy writes
	// (clusterprofile_synced_secret_writes_total) under its own name.
	ByWriter map[string]int `json:"byWriter"`
	// Errors is the mirror's clusterprofile_write_errors_total.
	Errors int `json:"errors"`
	// Gets counts the manager's GET requests (reads, lists and watch
	// starts alike): what its writes cost the API server besides.
	Gets int `json:"gets"`
}

func (s metricSet) writes() writeCounts {
	w := writeCounts{ByMethod: map[string]int{}, ByOperation: map[string]int{}, ByWriter: map[string]int{}}
	for _, method := range writeMethods {
		n := int(s.sum("rest_client_requests_total", map[string]string{"method": method}))
		w.ByMethod[method] = n
		w.Total += n
	}
	for _, smp := range s {
		switch smp.name {
		case "clusterprofile_writes_total":
			w.ByWriter[smp.labels["writer"]] += int(smp.value)
			if labelsMatch(smp.labels, mirrorWriter) {
				w.ByOperation[smp.labels["operation"]] += int(smp.value)
			}
		case "clusterprofile_synced_secret_writes_total":
			w.ByWriter[credsync.FieldManager] += int(smp.value)
		}
	}
	w.Errors = int(s.sum("clusterprofile_write_errors_total", mirrorWriter))
	w.Gets = int(s.sum("rest_client_requests_total", map[string]string{"method": http.MethodGet}))
	return w
}

// minus is the writes sent between an earlier count and this one.
func (w writeCounts) minus(earlier writeCounts) writeCounts {
	out := writeCounts{
		Total: w.Total - earlier.Total, Errors: w.Errors - earlier.Errors, Gets: w.Gets - earlier.Gets,
		ByMethod: map[string]int{}, ByOperation: map[string]int{}, ByWriter: map[string]int{},
	}
	for k, v := range w.ByWriter {
		out.ByWriter[k] = v - earlier.ByWriter[k]
	}
	for k, v := range w.ByMethod {
		out.ByMethod[k] = v - earlier.ByMethod[k]
	}
	for k, v := range w.ByOperation {
		out.ByOperation[k] = v - earlier.ByOperation[k]
	}
	return out
}

// String is e.g. "20000 (PATCH 20000) [create 10000, status 10000]".
func (w writeCounts) String() string {
	var methods, ops []string
	for _, m := range writeMethods {
		if n := w.ByMethod[m]; n != 0 {
			methods = append(methods, fmt.Sprintf("%s %d", m, n))
		}
	}
	for _, op := range []string{cpmetrics.OpCreate, cpmetrics.OpMetadata, cpmetrics.OpStatus, cpmetrics.OpDelete} {
		if n := w.ByOperation[op]; n != 0 {
			ops = append(ops, fmt.Sprintf("%s %d", op, n))
		}
	}
	out := strconv.Itoa(w.Total)
	if len(methods) > 0 {
		out += " (" + strings.Join(methods, ", ") + ")"
	}
	if len(ops) > 0 {
		out += " [mirror: " + strings.Join(ops, ", ") + "]"
	}
	var others []string
	for _, writer := range slices.Sorted(maps.Keys(w.ByWriter)) {
		if n := w.ByWriter[writer]; n != 0 && writer != clusterprofile.MirrorFieldManager {
			others = append(others, fmt.Sprintf("%s %d", writer, n))
		}
	}
	if len(others) > 0 {
		out += " [" + strings.Join(others, ", ") + "]"
	}
	if w.Errors > 0 {
		out += fmt.Sprintf(" {%d failed}", w.Errors)
	}
	if w.Gets > 0 {
		out += fmt.Sprintf("; GET %d", w.Gets)
	}
	return out
}
