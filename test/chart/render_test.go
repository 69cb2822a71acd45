package chart_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var defaultRelease = chartrender.Release{Name: "clusterprofile-manager", Namespace: "open-cluster-management"}

func TestHelmLintPasses(t *testing.T) {
	cases := map[string]map[string]any{
		"default values":   nil,
		"every gate on":    allOn().values(false),
		"cleanup, all off": gates{}.values(true),
	}
	for name, values := range cases {
		t.Run(name, func(t *testing.T) {
			linter := lint.AllWithKubeVersion(chartrender.ChartDir(chartName), values, defaultRelease.Namespace, &chartrender.KubeVersion)
			var problems []string
			for _, m := range linter.Messages {
				// Info messages (such as "icon is recommended") are advice.
				if m.Severity > support.InfoSev {
					problems = append(problems, m.Error())
				}
			}
			if len(problems) > 0 {
				t.Errorf("helm lint:\n%s", strings.Join(problems, "\n"))
			}
		})
	}
}

// TestEachGateRendersOnlyItsOwnObjects: a disabled feature grants nothing,
// and cleanupDisabledFeatures adds exactly the cleanup role (and the Secret
// policy, since that role may delete Secrets).
func TestEachGateRendersOnlyItsOwnObjects(t *testing.T) {
	for _, v := range allVariants() {
		t.Run(v.String(), func(t *testing.T) {
			objects := render(t, defaultRelease, v.values(v.cleanup))
			var got []string
			for _, u := range objects {
				got = append(got, objectKey(u))
			}
			sort.Strings(got)
			if diff := cmp.Diff(expectedObjects(v), got); diff != "" {
				t.Errorf("rendered objects (-want +got):\n%s", diff)
			}
		})
	}
}

func expectedObjects(v variant) []string {
	ns := defaultRelease.Namespace
	want := []string{
		"ClusterRole clusterprofile-manager-base",
		"ClusterRoleBinding clusterprofile-manager-base",
		"ClusterRole clusterprofile-manager-metrics-auth",
		"ClusterRoleBinding clusterprofile-manager-metrics-auth",
		"ClusterRole clusterprofile-manager-metrics-reader",
		"ConfigMap " + ns + "/clusterprofile-manager-admission-policies",
		"CustomResourceDefinition clusterprofiles.multicluster.x-k8s.io",
		"Deployment " + ns + "/clusterprofile-manager",
		"Role " + ns + "/clusterprofile-manager-leader-election",
		"RoleBinding " + ns + "/clusterprofile-manager-leader-election",
		"Service " + ns + "/clusterprofile-manager-metrics",
		"ServiceAccount " + ns + "/clusterprofile-manager",
	}
	role := func(suffix string) {
		want = append(want, "ClusterRole clusterprofile-manager-"+suffix, "ClusterRoleBinding clusterprofile-manager-"+suffix)
	}
	policy := func(suffix string) {
		want = append(want, "ValidatingAdmissionPolicy clusterprofile-manager-"+suffix,
			"ValidatingAdmissionPolicyBinding clusterprofile-manager-"+suffix)
	}
	if v.mirror {
		role("mirror")
	}
	if v.accessProvider {
		role("access-provider")
	}
	if v.directAccess {
		role("direct-access")
	}
	if v.credSyncer {
		role("cred-syncer")
	}
	if v.multikueue {
		role("multikueue")
	}
	if v.argocd {
		role("argocd")
		want = append(want, "Role argocd/clusterprofile-manager-argocd", "RoleBinding argocd/clusterprofile-manager-argocd")
	}
	if v.placementDecision {
		role("placement-decision")
		want = append(want, "CustomResourceDefinition "+placementDecisionCRD)
	}
	if v.cleanup && !(v.mirror && v.credSyncer && v.multikueue && v.placementDecision) {
		role("cleanup")
	}
	if v.agent {
		role("agent")
		want = append(want, "ClusterManagementAddOn cluster-profile-agent",
			"ManagedClusterSetBinding "+ns+"/global", "Placement "+ns+"/cluster-profile-agent-global")
		policy("rbac-writes")
	}
	if v.credSyncer || v.cleanup || v.argocd {
		policy("secret-writes")
	}
	if v.credSyncer {
		policy("token-copies")
	}
	if v.publishes() {
		policy("publish-opt-out")
	}
	if v.mirror {
		policy("profile-namespaces")
	}
	if v.agent || v.credSyncer || v.cleanup || v.argocd || v.publishes() {
		role("admission-policies") // get on the policies above, by name
	}
	sort.Strings(want)
	return want
}

// TestFeatureGatesFlagMatchesTheValues parses the rendered --feature-gates
// with the manager's own gate, so a misspelt gate name fails here.
func TestFeatureGatesFlagMatchesTheValues(t *testing.T) {
	for _, g := range allGates() {
		t.Run(g.String(), func(t *testing.T) {
			var flag string
			for _, arg := range managerArgs(t, render(t, defaultRelease, g.values(false))) {
				if value, ok := strings.CutPrefix(arg, "--feature-gates="); ok {
					flag = value
				}
			}
			gate := features.NewGate()
			if err := gate.Set(flag); err != nil {
				t.Fatalf("the manager rejects --feature-gates=%s: %v", flag, err)
			}
			got := gates{
				mirror:            gate.Enabled(features.ClusterProfile),
				accessProvider:    gate.Enabled(features.ClusterProfileAccessProvider),
				directAccess:      gate.Enabled(features.ClusterProfileDirectAccess),
				credSyncer:        gate.Enabled(features.ClusterProfileCredSyncer),
				agent:             gate.Enabled(features.ClusterProfileAgent),
				multikueue:        gate.Enabled(features.ClusterProfileMultiKueue),
				argocd:            gate.Enabled(features.ClusterProfileArgoCD),
				placementDecision: gate.Enabled(features.ClusterProfilePlacementDecision),
			}
			if got != g {
				t.Errorf("--feature-gates=%s enables %v, want %v", flag, got, g)
			}
		})
	}
}

func TestManagerArgumentsFollowTheValues(t *testing.T) {
	cases := map[string]struct {
		values map[string]any
		want   []string
	}{
		"defaults": {
			want: []string{
				"--leader-elect=true",
				"--leader-election-namespace=open-cluster-management",
				"--feature-gates=ClusterProfile=false,ClusterProfileAccessProvider=false,ClusterProfileCredSyncer=false,ClusterProfileDirectAccess=false,ClusterProfileAgent=false,ClusterProfileMultiKueue=false,ClusterProfileArgoCD=false,ClusterProfilePlacementDecision=false",
				"--cleanup-disabled-features=false",
				"--cluster-manager-name=open-cluster-management",
				"--cluster-proxy-user-server-port=9092",
				"--direct-access-provider-name=open-cluster-management-direct",
				"--kube-api-qps=50",
				"--kube-api-burst=100",
				"--mirror-workers=16",
				"--facts-min-interval=30s", "--facts-significant-change=0.1", "--facts-refresh=1h", "--facts-settle=2s",
				"--metrics-bind-address=:8443",
				"--metrics-secure=true",
				"--health-probe-bind-address=:8081",
				"--admission-policies-file=/etc/clusterprofile-manager/admission-policies/policies.yaml",
			},
		},
		"every value set": {
			values: map[string]any{
				"featureGates": map[string]any{"clusterProfile": true, "clusterProfileCredSyncer": true, "clusterProfileAgent": true,
					"clusterProfileMultiKueue": true, "clusterProfileArgoCD": true, "clusterProfilePlacementDecision": true},
				"multikueue":               map[string]any{"namespace": "kueue", "config": "fleet"},
				"agent":                    map[string]any{"period": "1m", "leaseStaleAfter": "2m", "unhealthyNodeTolerance": 2},
				"cleanupDisabledFeatures":  true,
				"clusterManagerName":       "fleet-a",
				"userServer":               map[string]any{"host": "proxy.example.com", "port": 443},
				"directAccessProviderName": "fleet-a-direct",
				"kubeAPI":                  map[string]any{"qps": 12.5, "burst": 3000},
				"mirrorWorkers":            4,
				"facts":                    map[string]any{"minInterval": "0", "significantChange": 0.25, "refresh": "2h", "settle": "1s"},
				"credentialSyncer":         map[string]any{"unscopedTokens": "nowhere"},
				"coexistence":              map[string]any{"upstreamNamespaces": []any{"ocm-addons", "hub-addons"}, "reportDecoys": false},
				"argocd": map[string]any{"namespace": "gitops", "managedServiceAccount": "deployer", "accessProvider": "fleet-a-direct",
					"project": "fleet", "cpCredsPath": "/opt/plugins/cp-creds"},
				"extraArgs": []any{"--zap-log-level=2"},
			},
			want: []string{
				"--leader-elect=true",
				"--leader-election-namespace=open-cluster-management",
				"--feature-gates=ClusterProfile=true,ClusterProfileAccessProvider=false,ClusterProfileCredSyncer=true,ClusterProfileDirectAccess=false,ClusterProfileAgent=true,ClusterProfileMultiKueue=true,ClusterProfileArgoCD=true,ClusterProfilePlacementDecision=true",
				"--cleanup-disabled-features=true",
				"--cluster-manager-name=fleet-a",
				"--upstream-namespaces=ocm-addons,hub-addons",
				"--report-twin-decoys=false",
				"--cluster-proxy-user-server-host=proxy.example.com",
				"--cluster-proxy-user-server-port=443",
				"--direct-access-provider-name=fleet-a-direct",
				"--kube-api-qps=12.5",
				"--kube-api-burst=3000",
				"--mirror-workers=4",
				"--facts-min-interval=0", "--facts-significant-change=0.25", "--facts-refresh=2h", "--facts-settle=1s",
				"--unscoped-tokens=nowhere",
				"--agent-image=ghcr.io/open-cluster-management-io/clusterprofile-bundle:0.1.0",
				"--agent-period=1m",
				"--agent-lease-stale-after=2m",
				"--agent-unhealthy-node-tolerance=2",
				"--multikueue-namespace=kueue",
				"--multikueue-config=fleet",
				"--argocd-namespace=gitops",
				"--argocd-managed-serviceaccount=deployer",
				"--argocd-access-provider=fleet-a-direct",
				"--argocd-project=fleet",
				"--argocd-cp-creds-path=/opt/plugins/cp-creds",
				"--metrics-bind-address=:8443",
				"--metrics-secure=true",
				"--health-probe-bind-address=:8081",
				"--admission-policies-file=/etc/clusterprofile-manager/admission-policies/policies.yaml",
				"--zap-log-level=2",
			},
		},
		"rate limit lifted": {
			values: map[string]any{"kubeAPI": map[string]any{"qps": -1}},
			want: []string{
				"--leader-elect=true",
				"--leader-election-namespace=open-cluster-management",
				"--feature-gates=ClusterProfile=false,ClusterProfileAccessProvider=false,ClusterProfileCredSyncer=false,ClusterProfileDirectAccess=false,ClusterProfileAgent=false,ClusterProfileMultiKueue=false,ClusterProfileArgoCD=false,ClusterProfilePlacementDecision=false",
				"--cleanup-disabled-features=false",
				"--cluster-manager-name=open-cluster-management",
				"--cluster-proxy-user-server-port=9092",
				"--direct-access-provider-name=open-cluster-management-direct",
				"--kube-api-qps=-1",
				"--kube-api-burst=100",
				"--mirror-workers=16",
				"--facts-min-interval=30s", "--facts-significant-change=0.1", "--facts-refresh=1h", "--facts-settle=2s",
				"--metrics-bind-address=:8443",
				"--metrics-secure=true",
				"--health-probe-bind-address=:8081",
				"--admission-policies-file=/etc/clusterprofile-manager/admission-policies/policies.yaml",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, managerArgs(t, render(t, defaultRelease, tc.values))); diff != "" {
				t.Errorf("manager args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeploymentIsHardenedAndProbed(t *testing.T) {
	objects := render(t, defaultRelease, map[string]any{
		"replicas": 2,
		"image":    map[string]any{"repository": "registry.example/cpm", "tag": "v9", "pullPolicy": "Always"},
	})
	deployment := find(objects, "Deployment", "clusterprofile-manager")
	replicas, _, _ := unstructured.NestedInt64(deployment.Object, "spec", "replicas")
	if replicas != 2 {
		t.Errorf("replicas = %d, want 2", replicas)
	}
	podSecurity, _, _ := unstructured.NestedMap(deployment.Object, "spec", "template", "spec", "securityContext")
	if diff := cmp.Diff(map[string]any{"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"}}, podSecurity); diff != "" {
		t.Errorf("pod securityContext (-want +got):\n%s", diff)
	}
	c := managerContainer(t, objects)
	got := map[string]any{
		"image":           c["image"],
		"imagePullPolicy": c["imagePullPolicy"],
		"securityContext": c["securityContext"],
		"liveness":        c["livenessProbe"].(map[string]any)["httpGet"],
		"readiness":       c["readinessProbe"].(map[string]any)["httpGet"],
		"ports":           c["ports"],
	}
	want := map[string]any{
		"image":           "registry.example/cpm:v9",
		"imagePullPolicy": "Always",
		"securityContext": map[string]any{
			"allowPrivilegeEscalation": false,
			"readOnlyRootFilesystem":   true,
			"runAsNonRoot":             true,
			"capabilities":             map[string]any{"drop": []any{"ALL"}},
			"seccompProfile":           map[string]any{"type": "RuntimeDefault"},
		},
		"liveness":  map[string]any{"path": "/healthz", "port": "health"},
		"readiness": map[string]any{"path": "/readyz", "port": "health"},
		"ports": []any{
			map[string]any{"name": "metrics", "containerPort": int64(8443), "protocol": "TCP"},
			map[string]any{"name": "health", "containerPort": int64(8081), "protocol": "TCP"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manager container (-want +got):\n%s", diff)
	}
}

func TestImageTagDefaultsToTheAppVersion(t *testing.T) {
	c := managerContainer(t, render(t, defaultRelease, nil))
	want := "ghcr.io/open-cluster-management-io/clusterprofile-bundle:" + loadChart(t).Metadata.AppVersion
	if c["image"] != want {
		t.Errorf("image = %v, want %s", c["image"], want)
	}
}

// TestSchemaRejectsMistakes: every level of the values is closed, so a
// misspelt key fails instead of silently doing nothing.
func TestSchemaRejectsMistakes(t *testing.T) {
	cases := map[string]struct {
		values map[string]any
		// wantErr is a substring of Helm's error, naming the culprit.
		wantErr string
	}{
		"misspelt gate":            {map[string]any{"featureGates": map[string]any{"clusterProfil": true}}, "clusterProfil"},
		"misspelt top-level key":   {map[string]any{"featureGate": map[string]any{}}, "featureGate"},
		"gate given as a string":   {map[string]any{"featureGates": map[string]any{"clusterProfile": "yes"}}, "clusterProfile"},
		"replicas given as a word": {map[string]any{"replicas": "two"}, "replicas"},
		"unknown pull policy":      {map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "pullPolicy"},
		"misspelt image key":       {map[string]any{"image": map[string]any{"repo": "x"}}, "repo"},
		"misspelt resources key":   {map[string]any{"resources": map[string]any{"limit": map[string]any{"cpu": "1"}}}, "limit"},
		"port out of range":        {map[string]any{"userServer": map[string]any{"port": 70000}}, "port"},
		"misspelt kubeAPI key":     {map[string]any{"kubeAPI": map[string]any{"QPS": 10}}, "QPS"},
		"qps given as a word":      {map[string]any{"kubeAPI": map[string]any{"qps": "fast"}}, "qps"},
		"no workers":               {map[string]any{"mirrorWorkers": 0}, "mirrorWorkers"},
		"empty manager name":       {map[string]any{"clusterManagerName": ""}, "clusterManagerName"},
		"extra arg without dashes": {map[string]any{"extraArgs": []any{"zap-log-level=2"}}, "extraArgs"},
		"cleanup given as a word":  {map[string]any{"cleanupDisabledFeatures": "true"}, "cleanupDisabledFeatures"},
		"decision CRD as a word":   {map[string]any{"installPlacementDecisionCRD": "no"}, "installPlacementDecisionCRD"},
		"misspelt toleration key":  {map[string]any{"tolerations": []any{map[string]any{"keys": "a"}}}, "keys"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := chartrender.Render(loadChart(t), defaultRelease, tc.values)
			if err == nil {
				t.Fatalf("rendering with %v succeeded, want a schema error", tc.values)
			}
			if !strings.Contains(err.Error(), "values don't meet the specifications of the schema") || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error does not name %q as a schema violation:\n%v", tc.wantErr, err)
			}
		})
	}
}

// TestSchemaAcceptsKubernetesShapedValues: the open parts of the schema
// (resource names, node selectors, affinity) take what Kubernetes takes.
func TestSchemaAcceptsKubernetesShapedValues(t *testing.T) {
	objects := render(t, defaultRelease, map[string]any{
		"resources":        map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi", "ephemeral-storage": "1Gi"}, "limits": map[string]any{"cpu": 2}},
		"nodeSelector":     map[string]any{"node-role.kubernetes.io/control-plane": ""},
		"tolerations":      []any{map[string]any{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}},
		"affinity":         map[string]any{"podAntiAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{}}},
		"imagePullSecrets": []any{map[string]any{"name": "pull"}},
		"podAnnotations":   map[string]any{"example.com/team": "fleet"},
	})
	spec, _, _ := unstructured.NestedMap(find(objects, "Deployment", "clusterprofile-manager").Object, "spec", "template", "spec")
	for _, key := range []string{"nodeSelector", "tolerations", "affinity", "imagePullSecrets"} {
		if _, ok := spec[key]; !ok {
			t.Errorf("the pod spec has no %s", key)
		}
	}
}

// TestNoWildcardsAndSecretsOnlyWhereNeeded checks every rendered rule: no
// wildcard anywhere; Secrets only by name, except for the syncer and its
// cleanup, which are narrowed by the admission policy instead, and the Argo
// CD integration's Role in Argo CD's namespace alone, narrowed by the same
// policy.
func TestNoWildcardsAndSecretsOnlyWhereNeeded(t *testing.T) {
	for _, v := range allVariants() {
		t.Run(v.String(), func(t *testing.T) {
			for _, u := range render(t, defaultRelease, v.values(v.cleanup)) {
				if u.GetKind() != "ClusterRole" && u.GetKind() != "Role" {
					continue
				}
				role := &rbacv1.ClusterRole{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
					t.Fatal(err)
				}
				for _, rule := range role.Rules {
					for _, list := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.ResourceNames} {
						if slices.Contains(list, "*") {
							t.Errorf("%s has a wildcard: %+v", objectKey(u), rule)
						}
					}
					// Only the scrapers' role, and only GET /metrics.
					metricsReader := u.GetName() == "clusterprofile-manager-metrics-reader" &&
						slices.Equal(rule.NonResourceURLs, []string{"/metrics"}) && slices.Equal(rule.Verbs, []string{"get"})
					if len(rule.NonResourceURLs) > 0 && !metricsReader {
						t.Errorf("%s grants non-resource URLs: %+v", objectKey(u), rule)
					}
					argoCDRole := u.GetKind() == "Role" && u.GetNamespace() == "argocd" && strings.HasSuffix(u.GetName(), "-argocd")
					broad := !strings.HasSuffix(u.GetName(), "-cred-syncer") && !strings.HasSuffix(u.GetName(), "-cleanup") && !argoCDRole
					if slices.Contains(rule.Resources, "secrets") && broad && len(rule.ResourceNames) == 0 {
						t.Errorf("%s grants Secrets beyond named ones: %+v", objectKey(u), rule)
					}
				}
			}
		})
	}
}

// TestCRDsAreTheModulesCopies: each CRD file of the chart is byte for byte
// the one in the pinned cluster-inventory-api module (`make chart-crd`
// refreshes them), and its template renders it unchanged but for the keep
// policy and the chart's labels, when its values say so and only then.
func TestCRDsAreTheModulesCopies(t *testing.T) {
	moduleDir, err := framework.ModuleDir("sigs.k8s.io/cluster-inventory-api")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		// rendered are values that render it, notRendered values that do not.
		rendered, notRendered []map[string]any
	}{
		"multicluster.x-k8s.io_clusterprofiles.yaml": {
			rendered:    []map[string]any{nil, allOn().values(true)},
			notRendered: []map[string]any{{"installCRD": false}},
		},
		"multicluster.x-k8s.io_placementdecisions.yaml": {
			rendered: []map[string]any{
				gates{placementDecision: true}.values(false),
				withValue(gates{placementDecision: true}.values(false), "installCRD", false),
				allOn().values(true),
			},
			notRendered: []map[string]any{
				nil,
				gates{mirror: true, credSyncer: true}.values(true),
				withValue(gates{placementDecision: true}.values(false), "installPlacementDecisionCRD", false),
				withValue(gates{}.values(false), "installPlacementDecisionCRD", true),
			},
		},
	}
	for file, tc := range cases {
		t.Run(file, func(t *testing.T) {
			upstream, err := os.ReadFile(filepath.Join(moduleDir, "config", "crd", "bases", file))
			if err != nil {
				t.Fatal(err)
			}
			copied, err := os.ReadFile(filepath.Join(chartrender.ChartDir(chartName), "files", file))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(upstream, copied) {
				t.Fatalf("charts/%s/files/%s differs from the pinned cluster-inventory-api's; run `make chart-crd`", chartName, file)
			}

			want := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(upstream, want); err != nil {
				t.Fatal(err)
			}
			for _, values := range tc.rendered {
				rendered := find(render(t, defaultRelease, values), "CustomResourceDefinition", want.Name)
				if rendered == nil {
					t.Errorf("no %s rendered with %v", want.Name, values)
					continue
				}
				got := &apiextensionsv1.CustomResourceDefinition{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rendered.Object, got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
					t.Errorf("rendered %s spec with %v (-module +rendered):\n%s", want.Name, values, diff)
				}
				if got.Annotations["helm.sh/resource-policy"] != "keep" {
					t.Errorf("%s is not kept on uninstall: annotations %v", want.Name, got.Annotations)
				}
				for k, v := range want.Annotations {
					if got.Annotations[k] != v {
						t.Errorf("%s lost the module's annotation %s=%s: annotations %v", want.Name, k, v, got.Annotations)
					}
				}
				if got.Labels["app.kubernetes.io/managed-by"] != "Helm" || got.Labels["app.kubernetes.io/instance"] != defaultRelease.Name {
					t.Errorf("%s lacks the chart's labels: %v", want.Name, got.Labels)
				}
			}
			for _, values := range tc.notRendered {
				if find(render(t, defaultRelease, values), "CustomResourceDefinition", want.Name) != nil {
					t.Errorf("%s rendered with %v", want.Name, values)
				}
			}
		})
	}
}

// withValue returns values with key set to value.
func withValue(values map[string]any, key string, value any) map[string]any {
	values[key] = value
	return values
}

func TestRenderingIsDeterministic(t *testing.T) {
	values := allOn().values(true)
	first, err := chartrender.Render(loadChart(t), defaultRelease, values)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		again, err := chartrender.Render(loadChart(t), defaultRelease, values)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("two renders differ (-first +again):\n%s", diff)
		}
	}
}

// TestPlainManifestsAreUpToDate: manifests/ is what `make manifests` renders now.
func TestPlainManifestsAreUpToDate(t *testing.T) {
	root := framework.RepoRoot()
	want, err := chartrender.Manifests(filepath.Join(root, "hack", "manifests", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "manifests", "clusterprofile-manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("manifests/clusterprofile-manager.yaml is stale; run `make manifests` (-fresh +committed):\n%s", diff)
	}
}

// TestReleaseNamesThatLookLikeYAMLScalars: a release called "off" in a
// namespace called "yes", for an Argo CD namespace called "on", must not
// turn labels or namespaces into booleans.
func TestReleaseNamesThatLookLikeYAMLScalars(t *testing.T) {
	rel := chartrender.Release{Name: "off", Namespace: "yes"}
	values := allOn().values(true)
	values["argocd"] = map[string]any{"namespace": "on"}
	for _, u := range render(t, rel, values) {
		labels, _, err := unstructured.NestedStringMap(u.Object, "metadata", "labels")
		if err != nil || labels["app.kubernetes.io/instance"] != "off" {
			t.Errorf("%s: labels %v (%v), want app.kubernetes.io/instance=off", objectKey(u), u.Object["metadata"], err)
		}
		want := "yes"
		if strings.HasSuffix(u.GetName(), "-argocd") {
			want = "on"
		}
		if ns, found, err := unstructured.NestedString(u.Object, "metadata", "namespace"); found && (err != nil || ns != want) {
			t.Errorf("%s: namespace %v (%v), want %s", objectKey(u), u.Object["metadata"], err, want)
		}
	}
}

// TestAgentInstallStrategy: Placements (the default) installs the agent
// where the placements say, the global one included; Manual installs it
// only where someone enables it (`clusteradm addon enable` creates a
// ManagedClusterAddOn), with no placement or global binding rendered.
func TestAgentInstallStrategy(t *testing.T) {
	cases := map[string]struct {
		agent        map[string]any
		wantStrategy map[string]any
		wantObjects  []string
	}{
		"placements, global": {
			agent: map[string]any{},
			wantStrategy: map[string]any{"type": "Placements", "placements": []any{
				map[string]any{"name": "cluster-profile-agent-global", "namespace": "open-cluster-management"}}},
			wantObjects: []string{"ClusterManagementAddOn cluster-profile-agent",
				"ManagedClusterSetBinding open-cluster-management/global", "Placement open-cluster-management/cluster-profile-agent-global"},
		},
		"manual": {
			agent:        map[string]any{"installStrategy": "Manual", "placements": []any{map[string]any{"name": "ignored", "namespace": "x"}}},
			wantStrategy: map[string]any{"type": "Manual"},
			wantObjects:  []string{"ClusterManagementAddOn cluster-profile-agent"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objects := render(t, defaultRelease, map[string]any{"featureGates": map[string]any{"clusterProfileAgent": true}, "agent": tc.agent})
			var got []string
			for _, u := range objects {
				switch u.GetKind() {
				case "ClusterManagementAddOn", "ManagedClusterSetBinding", "Placement":
					got = append(got, objectKey(u))
					if u.GetKind() == "ClusterManagementAddOn" {
						strategy, _, _ := unstructured.NestedMap(u.Object, "spec", "installStrategy")
						if diff := cmp.Diff(tc.wantStrategy, strategy); diff != "" {
							t.Errorf("installStrategy (-want +got):\n%s", diff)
						}
					}
				}
			}
			if diff := cmp.Diff(tc.wantObjects, got); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNotesSayEveryGateIsOffOnlyWhenItIs: the install notes tell the user
// to enable a gate exactly when every gate is off; any one gate on, alone,
// counts.
func TestNotesSayEveryGateIsOffOnlyWhenItIs(t *testing.T) {
	const allOff = "Every feature gate is off"
	for _, g := range append(allGates(), gates{}) {
		notes, err := chartrender.Notes(loadChart(t), defaultRelease, g.values(false))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Contains(notes, allOff), g == (gates{}); got != want {
			t.Errorf("%s: the notes say %q: %t, want %t", g, allOff, got, want)
		}
	}
	for _, gate := range []string{"clusterProfileAgent", "clusterProfileMultiKueue", "clusterProfileArgoCD", "clusterProfilePlacementDecision"} {
		notes, err := chartrender.Notes(loadChart(t), defaultRelease, map[string]any{"featureGates": map[string]any{gate: true}})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(notes, allOff) {
			t.Errorf("only %s on: the notes say %q", gate, allOff)
		}
	}
}
