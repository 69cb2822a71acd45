// Command dashboard generates the Grafana dashboard of clusterprofile-manager
// with Grafana's typed Foundation SDK into
// charts/clusterprofile-manager/files/dashboards/, which the chart ships as a
// ConfigMap (monitoring.dashboards.enabled). Run it with `make dashboard`; a
// test fails when the checked-in JSON differs from a fresh build, and
// test/monitoring runs every query of the chart's copy on a real Prometheus.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// OutputFile is where the dashboard goes, from the repository root.
const OutputFile = "charts/clusterprofile-manager/files/dashboards/clusterprofile-manager.json"

// leaseName is the manager's leader election Lease (pkg/hubmanager).
const leaseName = "clusterprofile-manager.open-cluster-management.io"

func main() {
	out := flag.String("out", OutputFile, "file to write")
	flag.Parse()
	data, err := Build()
	if err == nil {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "generating the dashboard:", err)
		os.Exit(1)
	}
}

var datasource = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// sel is the label selector every query uses: the manager's job(s).
const sel = `{job=~"$job"}`

func query(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Expr(expr).LegendFormat(legend).Datasource(datasource)
}

func statPanel(title, description, unit string, q *prometheus.DataqueryBuilder) *stat.PanelBuilder {
	return stat.NewPanelBuilder().Title(title).Description(description).Unit(unit).Datasource(datasource).
		Span(4).Height(4).GraphMode(common.BigValueGraphModeArea).WithTarget(q)
}

func graph(title, description, unit string, queries ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().Title(title).Description(description).Unit(unit).Datasource(datasource).
		Span(12).Height(8).Min(0)
	for _, q := range queries {
		p = p.WithTarget(q)
	}
	return p
}

// Build returns the dashboard JSON.
func Build() ([]byte, error) {
	b := dashboard.NewDashboardBuilder("ClusterProfile manager").
		Uid("clusterprofile-manager").
		Description("clusterprofile-manager: ClusterProfiles published, writes and errors by writer, reconcile latency, work queues, synced tokens and their expiry, memory.").
		Tags([]string{"open-cluster-management", "clusterprofile"}).
		Refresh("1m").
		Time("now-6h", "now").
		Timezone(common.TimeZoneBrowser).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Data source").Type("prometheus")).
		WithVariable(dashboard.NewQueryVariableBuilder("job").Label("Job").
			Query(dashboard.StringOrMap{String: cog.ToPtr("label_values(clusterprofile_feature_enabled, job)")}).
			Datasource(datasource).Multi(true).IncludeAll(true).Refresh(dashboard.VariableRefreshOnTimeRangeChanged))
	for _, row := range []func(*dashboard.DashboardBuilder) *dashboard.DashboardBuilder{
		profilesRow, writesRow, controllersRow, tokensRow, processRow,
	} {
		b = row(b)
	}
	d, err := b.Build()
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// profilesRow shows the profiles published and the mirror's state.
func profilesRow(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithRow(dashboard.NewRowBuilder("Profiles")).
		WithPanel(statPanel("Profiles published",
			"ClusterProfiles of this cluster manager, in every namespace (per-namespace counts are deliberately not a metric label: `kubectl get clusterprofiles -A`).",
			"short", query(`max(clusterprofile_published_profiles`+sel+`)`, "profiles"))).
		WithPanel(statPanel("Namespaces with profiles", "Namespaces holding at least one ClusterProfile of this cluster manager.",
			"short", query(`max(clusterprofile_published_namespaces`+sel+`)`, "namespaces"))).
		WithPanel(statPanel("Profiles per namespace", "Average ClusterProfiles per namespace that has any.",
			"short", query(`max(clusterprofile_published_profiles`+sel+`) / max(clusterprofile_published_namespaces`+sel+`)`, "per namespace"))).
		WithPanel(statPanel("Leading replicas", "Replicas holding the leader Lease: 1 is healthy, 0 means nothing is reconciled.",
			"short", query(`sum(leader_election_master_status{job=~"$job", name="`+leaseName+`"})`, "leading"))).
		WithPanel(statPanel("Mirror passive", "1 while OCM's built-in ClusterProfile mirror is enabled and this mirror writes nothing.",
			"short", query(`max(clusterprofile_mirror_passive`+sel+`)`, "passive"))).
		WithPanel(statPanel("CRD with atomic status lists", "1 while the installed ClusterProfile CRD is older than cluster-inventory-api v0.1.2 (merged writes).",
			"short", query(`max(clusterprofile_crd_atomic_status_lists`+sel+`)`, "atomic")))
}

// writesRow shows writes and errors by writer.
func writesRow(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithRow(dashboard.NewRowBuilder("Writes")).
		WithPanel(graph("ClusterProfile writes by writer", "Write requests per second, by field manager and operation.", "reqps",
			query(`sum by (writer, operation) (rate(clusterprofile_writes_total`+sel+`[$__rate_interval]))`, "{{writer}} {{operation}}"))).
		WithPanel(graph("ClusterProfile write errors by writer", "Failed write requests per second, by field manager and operation.", "reqps",
			query(`sum by (writer, operation) (rate(clusterprofile_write_errors_total`+sel+`[$__rate_interval]))`, "{{writer}} {{operation}}"))).
		WithPanel(graph("Synced token Secret writes", "Writes of token copies per second, by operation and result.", "reqps",
			query(`sum by (operation, result) (rate(clusterprofile_synced_secret_writes_total`+sel+`[$__rate_interval]))`, "{{operation}} {{result}}"))).
		WithPanel(graph("Reported problems", "Newly reported name clashes, Secret name collisions and skipped claims.", "short",
			query(`sum(increase(clusterprofile_name_clashes_total`+sel+`[$__rate_interval]))`, "name clashes"),
			query(`sum(increase(clusterprofile_synced_secret_collisions_total`+sel+`[$__rate_interval]))`, "Secret collisions"),
			query(`sum(increase(clusterprofile_skipped_claims_total`+sel+`[$__rate_interval]))`, "skipped claims")))
}

// controllersRow shows reconciles and work queues.
func controllersRow(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithRow(dashboard.NewRowBuilder("Controllers")).
		WithPanel(graph("Reconcile latency (p50, p99)", "Time a reconcile takes, by controller.", "s",
			query(`histogram_quantile(0.5, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket`+sel+`[$__rate_interval])))`, "p50 {{controller}}"),
			query(`histogram_quantile(0.99, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket`+sel+`[$__rate_interval])))`, "p99 {{controller}}"))).
		WithPanel(graph("Reconciles by result", "Reconciles per second, by controller and result.", "ops",
			query(`sum by (controller, result) (rate(controller_runtime_reconcile_total`+sel+`[$__rate_interval]))`, "{{controller}} {{result}}"))).
		WithPanel(graph("Work queue depth", "Items waiting, by queue.", "short",
			query(`sum by (name) (workqueue_depth`+sel+`)`, "{{name}}"))).
		WithPanel(graph("Work queue wait (p99)", "Time an item waits before a worker takes it, by queue.", "s",
			query(`histogram_quantile(0.99, sum by (name, le) (rate(workqueue_queue_duration_seconds_bucket`+sel+`[$__rate_interval])))`, "{{name}}")))
}

// tokensRow shows the synced tokens and their expiry.
func tokensRow(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithRow(dashboard.NewRowBuilder("Synced tokens")).
		WithPanel(statPanel("Token copies", "Synced ManagedServiceAccount token copies.",
			"short", query(`max(clusterprofile_synced_tokens`+sel+`)`, "copies"))).
		WithPanel(statPanel("Earliest token expiry", "Time until the earliest synced token copy expires (negative: expired).",
			"s", query(`min(clusterprofile_synced_token_earliest_expiry_seconds`+sel+`)`, "earliest"))).
		WithPanel(statPanel("Copies expiring within the hour", "Token copies that expire within the next hour or have expired.",
			"short", query(`max(clusterprofile_synced_tokens_expiring_within_hour`+sel+`)`, "expiring")))
}

// processRow shows memory and CPU.
func processRow(b *dashboard.DashboardBuilder) *dashboard.DashboardBuilder {
	return b.
		WithRow(dashboard.NewRowBuilder("Process")).
		WithPanel(graph("Memory", "Resident memory and Go heap in use, by replica.", "bytes",
			query(`process_resident_memory_bytes`+sel, "RSS {{instance}}"),
			query(`go_memstats_heap_inuse_bytes`+sel, "heap {{instance}}"))).
		WithPanel(graph("CPU", "CPU seconds per second, by replica.", "short",
			query(`rate(process_cpu_seconds_total`+sel+`[$__rate_interval])`, "{{instance}}")))
}
