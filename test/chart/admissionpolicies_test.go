package chart_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/pkg/installcheck"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// expectedPolicies returns the rendered expected-policies ConfigMap's
// policies.yaml, what the Deployment and the helm test Pod mount.
func expectedPolicies(t testing.TB, objects []*unstructured.Unstructured) string {
	t.Helper()
	for _, u := range objects {
		if u.GetKind() == "ConfigMap" && strings.HasSuffix(u.GetName(), "-admission-policies") {
			data, _, _ := unstructured.NestedStringMap(u.Object, "data")
			return data["policies.yaml"]
		}
	}
	t.Fatal("no expected-policies ConfigMap rendered")
	return ""
}

// expectedPoliciesFile writes it where a process run by the test reads it.
func expectedPoliciesFile(t testing.TB, objects []*unstructured.Unstructured) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policies.yaml")
	if err := os.WriteFile(path, []byte(expectedPolicies(t, objects)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExpectedPoliciesAreTheRenderedOnes: in every variant the ConfigMap
// the manager and `helm test` compare with holds exactly the admission
// policies and bindings the chart installs (so a policy template left out of
// cpm.admissionPolicyTemplates fails here), and the manager and the test
// Pod may get exactly those, by name.
func TestExpectedPoliciesAreTheRenderedOnes(t *testing.T) {
	for _, v := range allVariants() {
		t.Run(v.String(), func(t *testing.T) {
			values := v.values(v.cleanup)
			objects := render(t, defaultRelease, values)
			var rendered []installcheck.PolicyObject
			names := map[string][]string{}
			for _, u := range objects {
				if u.GetKind() != installcheck.KindPolicy && u.GetKind() != installcheck.KindPolicyBinding {
					continue
				}
				spec, _, _ := unstructured.NestedMap(u.Object, "spec")
				rendered = append(rendered, installcheck.PolicyObject{Kind: u.GetKind(), Name: u.GetName(), Spec: spec})
				names[u.GetKind()] = append(names[u.GetKind()], u.GetName())
			}
			expected, err := installcheck.ReadPolicies(strings.NewReader(expectedPolicies(t, objects)))
			if err != nil {
				t.Fatal(err)
			}
			sortPolicies(rendered)
			sortPolicies(expected)
			if diff := cmp.Diff(rendered, expected); diff != "" {
				t.Errorf("expected policies (-installed +expected):\n%s", diff)
			}

			var wantRules []rbacv1.PolicyRule
			for _, kind := range []string{installcheck.KindPolicy, installcheck.KindPolicyBinding} {
				if len(names[kind]) > 0 {
					sort.Strings(names[kind])
					resource := map[string]string{installcheck.KindPolicy: "validatingadmissionpolicies",
						installcheck.KindPolicyBinding: "validatingadmissionpolicybindings"}[kind]
					wantRules = append(wantRules, rbacv1.PolicyRule{APIGroups: []string{"admissionregistration.k8s.io"},
						Resources: []string{resource}, ResourceNames: names[kind], Verbs: []string{"get"}})
				}
			}
			for _, role := range []*unstructured.Unstructured{
				find(objects, "ClusterRole", "clusterprofile-manager-admission-policies"),
				find(renderHooks(t, defaultRelease, values), "ClusterRole", "clusterprofile-manager-test"),
			} {
				var gotRules []rbacv1.PolicyRule
				if role != nil {
					cr := &rbacv1.ClusterRole{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(role.Object, cr); err != nil {
						t.Fatal(err)
					}
					gotRules = cr.Rules
				}
				if diff := cmp.Diff(wantRules, gotRules); diff != "" {
					t.Errorf("who may read the policies (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func sortPolicies(objects []installcheck.PolicyObject) {
	sort.Slice(objects, func(i, j int) bool { return objects[i].String() < objects[j].String() })
}

// TestManagerReportsMissingAndAlteredPolicies runs the manager binary with
// the chart's arguments and RBAC (every gate on, so all five policies) and
// the chart's policies installed, checking every second: its gauges say
// intact; a deleted binding and a binding that only warns are each
// reported, by gauge and by name in the log; restored, intact again. The
// manager is refused nothing.
func TestManagerReportsMissingAndAlteredPolicies(t *testing.T) {
	ctx := framework.ContextFor(t)
	rel := chartrender.Release{Name: "policies", Namespace: "chart-policies"}
	values := allOn().values(false)
	metricsAddr := freePort(t)
	m := startManager(ctx, t, rel, values, "--metrics-bind-address="+metricsAddr, "--metrics-secure=false",
		"--health-probe-bind-address=0", "--admission-policies-check-period=1s")
	// installForManager leaves the token-copies policy out (it binds every
	// other user, other tests' managers included); no other test runs now.
	objects := render(t, rel, values)
	for _, u := range objects {
		if strings.HasSuffix(u.GetName(), "-token-copies") {
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })
		}
	}
	gauges := func() (map[string]string, error) {
		got, err := tryScrape("http://"+metricsAddr+"/metrics", "")
		return unlabelledSeries(got.body, "clusterprofile_admission_policies_intact", "clusterprofile_admission_policy_problems"), err
	}
	g := NewWithT(t)
	intact := map[string]string{"clusterprofile_admission_policies_intact": "1", "clusterprofile_admission_policy_problems": "0"}
	g.Eventually(gauges, framework.Timeout, framework.Interval).Should(Equal(intact), m.output.String)

	t.Log("A binding deleted, another one turned into a warning: both reported.")
	secretWrites := find(objects, installcheck.KindPolicyBinding, "policies-clusterprofile-manager-secret-writes")
	if err := env.Client.Delete(ctx, secretWrites.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	tokenCopies := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	tokenCopies.Name = "policies-clusterprofile-manager-token-copies"
	framework.Update(ctx, t, env.Client, tokenCopies, func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
		b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn}
	})
	g.Eventually(gauges, framework.Timeout, framework.Interval).Should(Equal(map[string]string{
		"clusterprofile_admission_policies_intact": "0", "clusterprofile_admission_policy_problems": "2"}), m.output.String)
	g.Eventually(m.output.String, framework.Timeout, framework.Interval).Should(And(
		ContainSubstring("ValidatingAdmissionPolicyBinding policies-clusterprofile-manager-secret-writes: missing"),
		ContainSubstring(`ValidatingAdmissionPolicyBinding policies-clusterprofile-manager-token-copies: spec.validationActions[0] is \"Warn\", want \"Deny\"`)))

	t.Log("Both restored: intact again.")
	if err := env.Client.Create(ctx, secretWrites.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	framework.Update(ctx, t, env.Client, tokenCopies, func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
		b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
	})
	g.Eventually(gauges, framework.Timeout, framework.Interval).Should(Equal(intact), m.output.String)
	m.stop(t)
	g.Expect(m.api.Forbidden()).To(BeEmpty(), m.output.String())
}

// unlabelledSeries returns the values of the named unlabelled series in a
// scrape's body.
func unlabelledSeries(body string, names ...string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(body, "\n") {
		for _, name := range names {
			if value, ok := strings.CutPrefix(line, name+" "); ok {
				out[name] = value
			}
		}
	}
	return out
}
