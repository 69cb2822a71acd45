package chart_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// objectKeys names the rendered objects, sorted.
func objectKeys(objects []*unstructured.Unstructured) map[string]bool {
	keys := map[string]bool{}
	for _, u := range objects {
		keys[objectKey(u)] = true
	}
	return keys
}

// TestOperationsValuesRenderTheirObjects: each monitoring and availability
// value adds exactly its objects, and nothing is rendered while it is off.
func TestOperationsValuesRenderTheirObjects(t *testing.T) {
	ns := defaultRelease.Namespace
	cases := map[string]struct {
		values      map[string]any
		wantAdded   []string
		wantRemoved []string
	}{
		"defaults: none of them": {},
		"serviceMonitor": {
			values:    map[string]any{"monitoring": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}},
			wantAdded: []string{"ServiceMonitor " + ns + "/clusterprofile-manager"},
		},
		"prometheusRule": {
			values:    map[string]any{"monitoring": map[string]any{"prometheusRule": map[string]any{"enabled": true}}},
			wantAdded: []string{"PrometheusRule " + ns + "/clusterprofile-manager"},
		},
		"dashboards": {
			values:    map[string]any{"monitoring": map[string]any{"dashboards": map[string]any{"enabled": true}}},
			wantAdded: []string{"ConfigMap " + ns + "/clusterprofile-manager-dashboard"},
		},
		"dashboards in Grafana's namespace": {
			values:    map[string]any{"monitoring": map[string]any{"dashboards": map[string]any{"enabled": true, "namespace": "grafana"}}},
			wantAdded: []string{"ConfigMap grafana/clusterprofile-manager-dashboard"},
		},
		"one replica, PDB forced on": {
			values:    map[string]any{"podDisruptionBudget": map[string]any{"enabled": true}},
			wantAdded: []string{"PodDisruptionBudget " + ns + "/clusterprofile-manager"},
		},
		"two replicas: PDB on by default": {
			values:    map[string]any{"replicas": 2},
			wantAdded: []string{"PodDisruptionBudget " + ns + "/clusterprofile-manager"},
		},
		"two replicas, PDB turned off": {
			values: map[string]any{"replicas": 2, "podDisruptionBudget": map[string]any{"enabled": false}},
		},
		"networkPolicy": {
			values:    map[string]any{"networkPolicy": map[string]any{"enabled": true}},
			wantAdded: []string{"NetworkPolicy " + ns + "/clusterprofile-manager"},
		},
		"metrics readers": {
			values: map[string]any{"metrics": map[string]any{"readers": []any{
				map[string]any{"kind": "ServiceAccount", "name": "prometheus-k8s", "namespace": "monitoring"}}}},
			wantAdded: []string{"ClusterRoleBinding clusterprofile-manager-metrics-reader"},
		},
		"plain HTTP metrics: no token and access reviews": {
			values:      map[string]any{"metrics": map[string]any{"secure": false}},
			wantRemoved: []string{"ClusterRole clusterprofile-manager-metrics-auth", "ClusterRoleBinding clusterprofile-manager-metrics-auth"},
		},
	}
	base := objectKeys(render(t, defaultRelease, nil))
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := objectKeys(render(t, defaultRelease, tc.values))
			added, removed := []string{}, []string{}
			for k := range got {
				if !base[k] {
					added = append(added, k)
				}
			}
			for k := range base {
				if !got[k] {
					removed = append(removed, k)
				}
			}
			sort.Strings(added)
			sort.Strings(removed)
			want := struct{ Added, Removed []string }{append([]string{}, tc.wantAdded...), append([]string{}, tc.wantRemoved...)}
			if diff := cmp.Diff(want, struct{ Added, Removed []string }{added, removed}); diff != "" {
				t.Errorf("objects compared with the default rendering (-want +got):\n%s", diff)
			}
		})
	}
}

func convert[T any](t testing.TB, u *unstructured.Unstructured) *T {
	t.Helper()
	if u == nil {
		t.Fatal("object not rendered")
		return nil
	}
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestServiceMonitorMatchesTheService: the ServiceMonitor selects the
// metrics Service (labels, namespace, port name) and scrapes it as the
// manager serves it: HTTPS with the Prometheus ServiceAccount's token by
// default, plain HTTP with metrics.secure=false.
func TestServiceMonitorMatchesTheService(t *testing.T) {
	cases := map[string]struct {
		values       map[string]any
		wantEndpoint map[string]any
	}{
		"secure": {
			values: map[string]any{"monitoring": map[string]any{"serviceMonitor": map[string]any{"enabled": true,
				"additionalLabels": map[string]any{"release": "kube-prometheus-stack"}}}},
			wantEndpoint: map[string]any{"port": "metrics", "path": "/metrics", "interval": "30s", "scrapeTimeout": "10s",
				"scheme": "https", "bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
				"tlsConfig": map[string]any{"insecureSkipVerify": true}},
		},
		"plain HTTP": {
			values: map[string]any{"metrics": map[string]any{"secure": false, "port": 8080},
				"monitoring": map[string]any{"serviceMonitor": map[string]any{"enabled": true, "interval": "1m"}}},
			wantEndpoint: map[string]any{"port": "metrics", "path": "/metrics", "interval": "1m", "scrapeTimeout": "10s", "scheme": "http"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objects := render(t, defaultRelease, tc.values)
			sm := find(objects, "ServiceMonitor", "clusterprofile-manager")
			svc := convert[corev1.Service](t, find(objects, "Service", "clusterprofile-manager-metrics"))
			matchLabels, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
			if !labels.SelectorFromSet(matchLabels).Matches(labels.Set(svc.Labels)) {
				t.Errorf("the ServiceMonitor selects %v, the Service has labels %v", matchLabels, svc.Labels)
			}
			for _, u := range objects {
				if u.GetKind() == "Service" && u.GetName() != svc.Name && labels.SelectorFromSet(matchLabels).Matches(labels.Set(u.GetLabels())) {
					t.Errorf("the ServiceMonitor also selects %s", objectKey(u))
				}
			}
			namespaces, _, _ := unstructured.NestedStringSlice(sm.Object, "spec", "namespaceSelector", "matchNames")
			if diff := cmp.Diff([]string{svc.Namespace}, namespaces); diff != "" {
				t.Errorf("namespaceSelector (-want +got):\n%s", diff)
			}
			endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			if diff := cmp.Diff([]any{tc.wantEndpoint}, endpoints); diff != "" {
				t.Errorf("endpoints (-want +got):\n%s", diff)
			}
			if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].TargetPort != intstr.FromString("metrics") {
				t.Errorf("Service ports %+v: want one port named metrics targeting the container port metrics", svc.Spec.Ports)
			}
			if got, want := sm.GetLabels()["release"], "kube-prometheus-stack"; name == "secure" && got != want {
				t.Errorf("additionalLabels not applied: %v", sm.GetLabels())
			}
		})
	}
}

// TestPodDisruptionBudgetMatchesTheDeployment: the PDB selects exactly the
// Deployment's pods.
func TestPodDisruptionBudgetMatchesTheDeployment(t *testing.T) {
	cases := map[string]struct {
		values map[string]any
		want   policyv1.PodDisruptionBudgetSpec
	}{
		"default budget": {
			values: map[string]any{"replicas": 3},
			want:   policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
		},
		"minAvailable wins": {
			values: map[string]any{"replicas": 3, "podDisruptionBudget": map[string]any{"minAvailable": "50%"}},
			want:   policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("50%"))},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objects := render(t, defaultRelease, tc.values)
			pdb := convert[policyv1.PodDisruptionBudget](t, find(objects, "PodDisruptionBudget", "clusterprofile-manager"))
			deployment := convert[appsv1.Deployment](t, find(objects, "Deployment", "clusterprofile-manager"))
			tc.want.Selector = deployment.Spec.Selector
			if diff := cmp.Diff(tc.want, pdb.Spec); diff != "" {
				t.Errorf("PDB spec (-want +got):\n%s", diff)
			}
			selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
			if err != nil || !selector.Matches(labels.Set(deployment.Spec.Template.Labels)) {
				t.Errorf("the PDB selector %v does not select the pod template's labels %v (%v)", pdb.Spec.Selector, deployment.Spec.Template.Labels, err)
			}
		})
	}
}

// peer is a source of traffic to the manager's pods.
type peer struct {
	name string
	// pod and namespace labels; nil pod labels means not a pod (the node:
	// kubelet probes).
	podLabels, namespaceLabels map[string]string
}

// admits decides, as NetworkPolicy semantics say, whether the policy lets
// from reach the pod's container port named port (or numbered number).
func admits(t testing.TB, np *networkingv1.NetworkPolicy, podLabels map[string]string, from peer, port string, number int32) bool {
	t.Helper()
	selector, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	if !selector.Matches(labels.Set(podLabels)) {
		return true // not isolated by this policy
	}
	for _, rule := range np.Spec.Ingress {
		portOK := len(rule.Ports) == 0
		for _, p := range rule.Ports {
			portOK = portOK || p.Port == nil || *p.Port == intstr.FromString(port) || (number != 0 && *p.Port == intstr.FromInt32(number))
		}
		if !portOK {
			continue
		}
		if len(rule.From) == 0 {
			return true
		}
		for _, f := range rule.From {
			if f.IPBlock != nil {
				continue // not modelled: the tests use selectors
			}
			if from.podLabels == nil {
				continue // the node is no pod: only a rule without from admits it
			}
			// Without a namespaceSelector a peer is in the policy's namespace.
			nsOK, podOK := from.namespaceLabels["kubernetes.io/metadata.name"] == np.Namespace, f.PodSelector == nil
			if f.NamespaceSelector != nil {
				s, _ := metav1.LabelSelectorAsSelector(f.NamespaceSelector)
				nsOK = s.Matches(labels.Set(from.namespaceLabels))
			}
			if f.PodSelector != nil {
				s, _ := metav1.LabelSelectorAsSelector(f.PodSelector)
				podOK = s.Matches(labels.Set(from.podLabels))
			}
			if nsOK && podOK {
				return true
			}
		}
	}
	return false
}

// TestNetworkPolicyAdmitsTheScraperAndTheProbes: the manager's pods take
// traffic on the metrics port (from metricsFrom, or anyone) and the probe
// port (from the node), and on nothing else; the policy's port names are
// the container's.
func TestNetworkPolicyAdmitsTheScraperAndTheProbes(t *testing.T) {
	prometheus := peer{name: "prometheus", podLabels: map[string]string{"app.kubernetes.io/name": "prometheus"},
		namespaceLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}
	other := peer{name: "another pod", podLabels: map[string]string{"app": "curious"},
		namespaceLabels: map[string]string{"kubernetes.io/metadata.name": "team-a"}}
	kubelet := peer{name: "kubelet"}
	type reach struct{ Peer, Port string }
	cases := map[string]struct {
		metricsFrom []any
		want        map[reach]bool
	}{
		"metrics open to all (authenticated)": {
			want: map[reach]bool{
				{"prometheus", "metrics"}: true, {"another pod", "metrics"}: true, {"kubelet", "metrics"}: true,
				{"kubelet", "health"}: true, {"another pod", "health"}: true, {"another pod", "9443"}: false,
			},
		},
		"metrics from the monitoring namespace only": {
			metricsFrom: []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}},
			want: map[reach]bool{
				{"prometheus", "metrics"}: true, {"another pod", "metrics"}: false, {"kubelet", "metrics"}: false,
				{"kubelet", "health"}: true, {"another pod", "health"}: true, {"another pod", "9443"}: false,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objects := render(t, defaultRelease, map[string]any{"networkPolicy": map[string]any{"enabled": true, "metricsFrom": tc.metricsFrom}})
			np := convert[networkingv1.NetworkPolicy](t, find(objects, "NetworkPolicy", "clusterprofile-manager"))
			deployment := convert[appsv1.Deployment](t, find(objects, "Deployment", "clusterprofile-manager"))
			if diff := cmp.Diff([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes); diff != "" {
				t.Errorf("policy types (-want +got):\n%s", diff)
			}
			ports := map[string]int32{}
			for _, p := range deployment.Spec.Template.Spec.Containers[0].Ports {
				ports[p.Name] = p.ContainerPort
			}
			for _, rule := range np.Spec.Ingress {
				for _, p := range rule.Ports {
					if _, ok := ports[p.Port.String()]; !ok {
						t.Errorf("the policy names port %s, the container has %v", p.Port.String(), ports)
					}
				}
			}
			got := map[reach]bool{}
			for r := range tc.want {
				from := map[string]peer{"prometheus": prometheus, "another pod": other, "kubelet": kubelet}[r.Peer]
				number := ports[r.Port]
				if r.Port == "9443" {
					number = 9443
				}
				got[r] = admits(t, np, deployment.Spec.Template.Labels, from, r.Port, number)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("who reaches which port (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTopologySpreadConstraintsSelectTheManagersPods(t *testing.T) {
	objects := render(t, defaultRelease, map[string]any{"topologySpreadConstraints": []any{
		map[string]any{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"},
		map[string]any{"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
			"labelSelector": map[string]any{"matchLabels": map[string]any{"team": "fleet"}}},
	}})
	deployment := convert[appsv1.Deployment](t, find(objects, "Deployment", "clusterprofile-manager"))
	want := []corev1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: deployment.Spec.Selector},
		{MaxSkew: 2, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "fleet"}}},
	}
	if diff := cmp.Diff(want, deployment.Spec.Template.Spec.TopologySpreadConstraints); diff != "" {
		t.Errorf("topologySpreadConstraints (-want +got):\n%s", diff)
	}
	if spec := convert[appsv1.Deployment](t, find(render(t, defaultRelease, nil), "Deployment", "clusterprofile-manager")).Spec.Template.Spec; spec.TopologySpreadConstraints != nil {
		t.Errorf("constraints rendered by default: %v", spec.TopologySpreadConstraints)
	}
}

// TestDashboardConfigMapCarriesTheGeneratedDashboard: Grafana's sidecar
// label, and the generated JSON unchanged.
func TestDashboardConfigMapCarriesTheGeneratedDashboard(t *testing.T) {
	objects := render(t, defaultRelease, map[string]any{"monitoring": map[string]any{"dashboards": map[string]any{"enabled": true,
		"annotations": map[string]any{"grafana_folder": "Fleet"}}}})
	cm := convert[corev1.ConfigMap](t, find(objects, "ConfigMap", "clusterprofile-manager-dashboard"))
	if cm.Labels["grafana_dashboard"] != "1" || cm.Annotations["grafana_folder"] != "Fleet" {
		t.Errorf("labels %v, annotations %v: want grafana_dashboard=1 and the folder annotation", cm.Labels, cm.Annotations)
	}
	file, err := os.ReadFile(filepath.Join(chartrender.ChartDir(chartName), "files", "dashboards", "clusterprofile-manager.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(file, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(cm.Data["clusterprofile-manager.json"]), &got); err != nil {
		t.Fatalf("the ConfigMap's dashboard is not JSON: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dashboard in the ConfigMap (-file +ConfigMap):\n%s", diff)
	}
}

// alertRules returns the rendered PrometheusRule's rules.
func alertRules(t testing.TB, values map[string]any) []map[string]any {
	t.Helper()
	u := find(render(t, defaultRelease, values), "PrometheusRule", "clusterprofile-manager")
	if u == nil {
		t.Fatal("no PrometheusRule rendered")
		return nil
	}
	groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "groups")
	var rules []map[string]any
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			rules = append(rules, r.(map[string]any))
		}
	}
	return rules
}

func withPrometheusRule(rule map[string]any) map[string]any {
	rule["enabled"] = true
	return map[string]any{"monitoring": map[string]any{"prometheusRule": rule}}
}

// TestAlertsFollowTheValues: durations, thresholds, window, job and labels
// come from the values; every alert links its runbook section, which
// docs/operations.md has.
func TestAlertsFollowTheValues(t *testing.T) {
	runbooks, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(runbooks), -1) {
		anchors[strings.ToLower(strings.ReplaceAll(strings.TrimSpace(m[1]), " ", "-"))] = true
	}
	defaults := alertRules(t, withPrometheusRule(map[string]any{}))
	wantFor := map[string]string{
		"ClusterProfileWritesFailing": "15m", "ClusterProfileReconcileErrors": "30m", "ClusterProfileWorkqueueBacklog": "15m",
		"ClusterProfileWorkqueueSlow": "15m", "ClusterProfileNameClash": "0m", "ClusterProfileSyncedSecretCollision": "0m",
		"ClusterProfileMirrorPassive": "15m", "ClusterProfileSyncedTokenExpiring": "15m", "ClusterProfileManagerDown": "5m",
		"ClusterProfileManagerNotLeading": "5m", "ClusterProfileCapabilityWaitingForAPI": "30m",
		"ClusterProfileAdmissionPolicyMissing": "5m", "ClusterProfileUnscopedTokens": "1h",
		"ClusterProfileYieldingToUpstream": "1h",
	}
	gotFor := map[string]string{}
	for _, r := range defaults {
		name := r["alert"].(string)
		gotFor[name] = r["for"].(string)
		annotations := r["annotations"].(map[string]any)
		url := annotations["runbook_url"].(string)
		anchor := strings.ToLower(name)
		if !strings.HasSuffix(url, "/docs/operations.md#"+anchor) {
			t.Errorf("%s: runbook_url %q does not point at docs/operations.md#%s", name, url, anchor)
		}
		if !anchors[anchor] {
			t.Errorf("%s: docs/operations.md has no runbook heading %q", name, name)
		}
		if !strings.Contains(r["expr"].(string), `job="clusterprofile-manager-metrics"`) {
			t.Errorf("%s: expression not scoped to the ServiceMonitor's job: %s", name, r["expr"])
		}
		if sev := r["labels"].(map[string]any)["severity"]; sev != "warning" && sev != "critical" {
			t.Errorf("%s: severity %v", name, sev)
		}
	}
	if diff := cmp.Diff(wantFor, gotFor); diff != "" {
		t.Errorf("alerts and their default for (-want +got):\n%s", diff)
	}

	tuned := alertRules(t, withPrometheusRule(map[string]any{
		"job": "cpm", "window": "2m", "alertLabels": map[string]any{"team": "fleet"},
		"for":        map[string]any{"writesFailing": "5s", "managerDown": "1m"},
		"thresholds": map[string]any{"writeErrorRatio": 0.25, "tokenExpirySeconds": 7200},
	}))
	byName := map[string]map[string]any{}
	for _, r := range tuned {
		byName[r["alert"].(string)] = r
		if r["labels"].(map[string]any)["team"] != "fleet" {
			t.Errorf("%s: alertLabels not applied: %v", r["alert"], r["labels"])
		}
	}
	writes := byName["ClusterProfileWritesFailing"]
	if writes["for"] != "5s" || !strings.Contains(writes["expr"].(string), `{job="cpm"}[2m]`) || !strings.HasSuffix(writes["expr"].(string), "> 0.25") {
		t.Errorf("ClusterProfileWritesFailing ignores the values: for %v, expr %s", writes["for"], writes["expr"])
	}
	if byName["ClusterProfileManagerDown"]["for"] != "1m" || byName["ClusterProfileReconcileErrors"]["for"] != "30m" {
		t.Errorf("for values: %v, %v", byName["ClusterProfileManagerDown"]["for"], byName["ClusterProfileReconcileErrors"]["for"])
	}
	if !strings.HasSuffix(byName["ClusterProfileSyncedTokenExpiring"]["expr"].(string), "< 7200") {
		t.Errorf("token threshold ignored: %s", byName["ClusterProfileSyncedTokenExpiring"]["expr"])
	}
}

// TestOperationsObjectsPassServerValidation sends the objects the
// operations values add (the PDB, NetworkPolicy, dashboard ConfigMap, the
// readers' binding, and the Deployment with a certificate Secret and spread
// constraints) to the API server as dry-run creates. The ServiceMonitor and
// PrometheusRule are Prometheus Operator kinds the test control plane does
// not serve; promtool and a real Prometheus check the rules (test/monitoring).
func TestOperationsObjectsPassServerValidation(t *testing.T) {
	ctx := framework.ContextFor(t)
	rel := chartrender.Release{Name: "ops", Namespace: "chart-ops-dryrun"}
	framework.CreateNamespace(ctx, t, env.Client, rel.Namespace)
	framework.CreateNamespace(ctx, t, env.Client, "chart-ops-grafana")
	values := map[string]any{
		"replicas":                  2,
		"metrics":                   map[string]any{"certSecretName": "metrics-tls", "readers": []any{map[string]any{"kind": "ServiceAccount", "name": "prometheus-k8s", "namespace": "monitoring"}}},
		"networkPolicy":             map[string]any{"enabled": true, "metricsFrom": []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}}},
		"topologySpreadConstraints": []any{map[string]any{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}},
		"monitoring": map[string]any{
			"dashboards":     map[string]any{"enabled": true, "namespace": "chart-ops-grafana"},
			"serviceMonitor": map[string]any{"enabled": true},
			"prometheusRule": map[string]any{"enabled": true},
		},
	}
	for _, u := range render(t, rel, values) {
		switch u.GetKind() {
		case "CustomResourceDefinition", "ServiceMonitor", "PrometheusRule":
			continue
		}
		if err := env.Client.Create(ctx, u.DeepCopy(), client.DryRunAll); err != nil {
			t.Errorf("the API server rejects %s: %v", objectKey(u), err)
		}
	}
}
