package chart_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// renderHooks returns the chart's hook objects (which `helm template` and
// the plain manifests leave out), as Helm renders them for an install.
func renderHooks(t testing.TB, rel chartrender.Release, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.ClientOnly, install.DryRun, install.Replace = true, true, true
	install.ReleaseName, install.Namespace = rel.Name, rel.Namespace
	install.KubeVersion = &chartrender.KubeVersion
	if values == nil {
		values = map[string]any{}
	}
	r, err := install.Run(loadChart(t), values)
	if err != nil {
		t.Fatal(err)
	}
	var objects []*unstructured.Unstructured
	for _, h := range r.Hooks {
		objs, err := chartrender.Objects(h.Manifest)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, objs...)
	}
	return objects
}

var (
	checkOnce   sync.Once
	checkBinary string
	checkErr    error
)

// buildCheck builds cmd/clusterprofile-check once.
func buildCheck(t testing.TB) string {
	t.Helper()
	checkOnce.Do(func() {
		checkBinary = filepath.Join(filepath.Dir(managerBinary), "clusterprofile-check")
		cmd := exec.Command("go", "build", "-o", checkBinary, "./cmd/clusterprofile-check")
		cmd.Dir = framework.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			checkErr = err
			checkBinary = string(out)
		}
	})
	if checkErr != nil {
		t.Fatalf("building clusterprofile-check: %v\n%s", checkErr, checkBinary)
	}
	return checkBinary
}

func TestHelmTestHookRendersOnlyWhenEnabled(t *testing.T) {
	keys := func(values map[string]any) []string {
		got := []string{}
		for _, u := range renderHooks(t, defaultRelease, values) {
			if u.GetAnnotations()["helm.sh/hook"] != "test" {
				t.Errorf("%s is a hook but not a test hook: %v", objectKey(u), u.GetAnnotations())
			}
			got = append(got, objectKey(u))
		}
		sort.Strings(got)
		return got
	}
	ns := defaultRelease.Namespace
	want := []string{
		"Pod " + ns + "/clusterprofile-manager-test", "Role " + ns + "/clusterprofile-manager-test",
		"RoleBinding " + ns + "/clusterprofile-manager-test", "ServiceAccount " + ns + "/clusterprofile-manager-test",
	}
	if diff := cmp.Diff(want, keys(nil)); diff != "" {
		t.Errorf("helm test hooks (-want +got):\n%s", diff)
	}
	withPolicies := append([]string{"ClusterRole clusterprofile-manager-test", "ClusterRoleBinding clusterprofile-manager-test"}, want...)
	if diff := cmp.Diff(withPolicies, keys(gates{mirror: true}.values(false))); diff != "" {
		t.Errorf("helm test hooks of a release with admission policies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{}, keys(map[string]any{"helmTest": map[string]any{"enabled": false}})); diff != "" {
		t.Errorf("hooks with helmTest.enabled=false (-want +got):\n%s", diff)
	}
}

// TestHelmTestPassesOnAWorkingInstall runs what `helm test` runs: the hook
// Pod's command and arguments, as the hook's ServiceAccount with the hook's
// Role and ClusterRole, against the manager binary running with the chart's
// arguments and the chart's admission policies installed. It passes while
// the manager leads, its Deployment is ready and the policies are as
// rendered, and fails, naming the reason, while the Deployment has no ready
// replica, and while a policy binding is deleted or only warns. (A test
// control plane runs no kubelet or Deployment controller: the test writes
// the Deployment's status as they would. The Pod's mounted expected-policies
// file is the rendered ConfigMap's content, written locally.)
func TestHelmTestPassesOnAWorkingInstall(t *testing.T) {
	ctx := framework.ContextFor(t)
	rel := chartrender.Release{Name: "helmtest", Namespace: "chart-helm-test"}
	values := gates{mirror: true}.values(false)
	startManager(ctx, t, rel, values)

	objects := render(t, rel, values)
	deployment := find(objects, "Deployment", "helmtest-clusterprofile-manager").DeepCopy()
	if err := env.Client.Create(ctx, deployment); err != nil {
		t.Fatal(err)
	}
	var pod *unstructured.Unstructured
	for _, u := range renderHooks(t, rel, values) {
		if u.GetKind() == "Pod" {
			pod = u
			if err := env.Client.Create(ctx, u.DeepCopy(), client.DryRunAll); err != nil {
				t.Errorf("the API server rejects the test Pod: %v", err)
			}
			continue
		}
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatalf("creating %s: %v", objectKey(u), err)
		}
		if u.GetNamespace() == "" {
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })
		}
	}
	containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	container := containers[0].(map[string]any)
	command, _, _ := unstructured.NestedStringSlice(container, "command")
	args, _, _ := unstructured.NestedStringSlice(container, "args")
	if diff := cmp.Diff([]string{"/clusterprofile-check"}, command); diff != "" {
		t.Fatalf("test Pod command (-want +got):\n%s", diff)
	}
	api := newAPIRecorder(t, "system:serviceaccount:"+rel.Namespace+":helmtest-clusterprofile-manager-test")
	run := func(extra ...string) (string, error) {
		local := []string{"--kubeconfig=" + api.kubeconfig(t), "--admission-policies-file=" + expectedPoliciesFile(t, objects)}
		cmd := exec.Command(buildCheck(t), append(append(append([]string{}, args...), local...), extra...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}

	setReady := func(ready int32) {
		current := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(deployment), current); err != nil {
			t.Fatal(err)
		}
		current.Status = appsv1.DeploymentStatus{ObservedGeneration: current.Generation, Replicas: 1, ReadyReplicas: ready,
			AvailableReplicas: ready, UpdatedReplicas: 1}
		if err := env.Client.Status().Update(ctx, current); err != nil {
			t.Fatal(err)
		}
	}

	t.Log("No ready replica: the check fails and says why.")
	setReady(0)
	out, err := run("--timeout=3s")
	if err == nil || !strings.Contains(out, "Deployment chart-helm-test/helmtest-clusterprofile-manager has a ready replica: 0 of 1 replicas ready") {
		t.Errorf("the check should fail on the Deployment (%v):\n%s", err, out)
	}

	t.Log("A ready replica: every step passes.")
	setReady(1)
	out, err = run()
	want := "ok: Deployment chart-helm-test/helmtest-clusterprofile-manager has a ready replica\n" +
		"ok: a replica holds and renews Lease chart-helm-test/clusterprofile-manager.open-cluster-management.io\n" +
		"ok: the ClusterProfile API (multicluster.x-k8s.io/v1alpha1) is served\n" +
		"ok: the release's admission policies and bindings exist as rendered\n"
	if err != nil || out != want {
		t.Errorf("the check failed (%v); output (-want +got):\n%s", err, cmp.Diff(want, out))
	}

	t.Log("A policy binding deleted, another one only warning: the check fails and names both.")
	optOut := find(objects, "ValidatingAdmissionPolicyBinding", "helmtest-clusterprofile-manager-publish-opt-out")
	if err := env.Client.Delete(ctx, optOut.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	profiles := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	profiles.Name = "helmtest-clusterprofile-manager-profile-namespaces"
	framework.Update(ctx, t, env.Client, profiles, func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
		b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn}
	})
	out, err = run("--timeout=10s") // long enough for the Lease to be renewed once
	wantFailure := "not true within 10s: the release's admission policies and bindings exist as rendered: " +
		"ValidatingAdmissionPolicyBinding helmtest-clusterprofile-manager-profile-namespaces: spec.validationActions[0] is \"Warn\", want \"Deny\"; " +
		"ValidatingAdmissionPolicyBinding helmtest-clusterprofile-manager-publish-opt-out: missing"
	if err == nil || !strings.Contains(out, wantFailure) {
		t.Errorf("the check should fail on the policies (%v); want %q in:\n%s", err, wantFailure, out)
	}
	if diff := cmp.Diff([]string{}, api.Forbidden()); diff != "" {
		t.Errorf("requests refused to the test's ServiceAccount (-want +got):\n%s", diff)
	}
}
