package upgrade_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// refuseDeletes makes the API server refuse every delete of the named
// objects of resource in namespace, with a ValidatingAdmissionPolicy (no
// webhook), and returns once it is in force (seen on a probe Secret). The
// returned function lifts the refusal.
func refuseDeletes(ctx context.Context, t *testing.T, c client.Client, resource admissionregistrationv1.Rule, namespace string,
	names ...string) (lift func()) {
	t.Helper()
	quoted := make([]string, 0, len(names)+1)
	for _, n := range append(names, "refusal-probe") {
		quoted = append(quoted, fmt.Sprintf("'%s'", n))
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: namespace + "-refuse-deletes"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				deletesOf(secrets), deletesOf(resource)}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("!(oldObject.metadata.name in [%s])", strings.Join(quoted, ", ")),
				Message:    "deletes refused for a while (reliability test)",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}}},
		},
	}
	for _, obj := range []client.Object{policy, binding} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
	waitUntilProbeDeleteIs(ctx, t, c, namespace, false)
	return func() {
		if err := c.Delete(ctx, binding); err != nil {
			t.Fatalf("deleting %s: %v", binding.Name, err)
		}
		waitUntilProbeDeleteIs(ctx, t, c, namespace, true)
		if err := c.Delete(ctx, policy); err != nil {
			t.Fatalf("deleting %s: %v", policy.Name, err)
		}
	}
}

var secrets = admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"secrets"}}

func deletesOf(resource admissionregistrationv1.Rule) admissionregistrationv1.NamedRuleWithOperations {
	return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}, Rule: resource}}
}

// waitUntilProbeDeleteIs waits until deleting the probe Secret is allowed
// (or refused): policies take effect a moment after they are written.
func waitUntilProbeDeleteIs(ctx context.Context, t *testing.T, c client.Client, namespace string, allowed bool) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		probe := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "refusal-probe"}}
		g.Expect(client.IgnoreAlreadyExists(c.Create(ctx, probe))).To(Succeed())
		err := c.Delete(ctx, probe, client.DryRunAll)
		g.Expect(err == nil).To(Equal(allowed), "delete of the probe: %v", err)
	}, 30*time.Second, framework.Interval).Should(Succeed())
	if allowed {
		NewWithT(t).Expect(c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "refusal-probe"}})).To(Succeed())
	}
}

// secretsOf are the Secrets of namespace, by name.
func secretsOf(ctx context.Context, g Gomega, c client.Client, namespace string) map[string]corev1.Secret {
	var list corev1.SecretList
	g.Expect(c.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
	out := map[string]corev1.Secret{}
	for _, s := range list.Items {
		out[s.Name] = s
	}
	return out
}

// deletesSent counts the DELETE requests counter saw for path.
func deletesSent(counter *framework.RequestCounter, path string) int {
	n := 0
	for _, r := range counter.Requests() {
		if r == "DELETE "+path {
			n++
		}
	}
	return n
}

// TestTheCopiesCleanupOutlastsAnAPIServerThatRefuses: the credential syncer's
// gate is off and cleanup asked for, so the manager deletes every token copy
// at start. The API server refuses the delete of one copy in the middle of
// the list for a while. The cleanup retries with backoff, and once the
// refusal is lifted no copy is left; every other Secret is untouched.
func TestTheCopiesCleanupOutlastsAnAPIServerThatRefuses(t *testing.T) {
	ctx := framework.ContextFor(t)
	c := env.Client
	const ns = "upg-copies"
	framework.CreateNamespace(ctx, t, c, ns)
	expiry := time.Now().Add(time.Hour)
	copies := []*corev1.Secret{framework.TokenCopy(ns, "c1", "a", "t1", expiry), framework.TokenCopy(ns, "c1", "b", "t2", expiry),
		framework.TokenCopy(ns, "c2", "a", "t3", expiry)}
	forged := framework.TokenCopy(ns, "c3", "a", "t4", expiry)
	forged.Name, forged.Annotations = "forged", nil // labelled as a copy, not one: not the syncer's to delete
	plain := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}, Data: map[string][]byte{"k": []byte("v")}}
	for _, s := range append(copies, forged, plain) {
		NewWithT(t).Expect(c.Create(ctx, s)).To(Succeed())
	}
	lift := refuseDeletes(ctx, t, c, secrets, ns, copies[1].Name)
	kept := secretsOf(ctx, NewWithT(t), c, ns)
	delete(kept, "refusal-probe") // lift deletes it
	for _, s := range copies {
		delete(kept, s.Name)
	}

	counter := framework.NewRequestCounter("secrets", ns)
	framework.StartManager(t, env, framework.ManagerOptions{CleanupDisabled: true, Counter: counter})
	refused := "/api/v1/namespaces/" + ns + "/secrets/" + copies[1].Name
	NewWithT(t).Eventually(func() int { return deletesSent(counter, refused) }, time.Minute, framework.Interval).
		Should(BeNumerically(">=", 2), "the refused delete is retried")
	lift()

	NewWithT(t).Eventually(func(g Gomega) {
		got := secretsOf(ctx, g, c, ns)
		g.Expect(cmp.Diff(kept, got)).To(BeEmpty(), "Secrets of %s (-want +got)", ns)
	}, time.Minute, framework.Interval).Should(Succeed())
	t.Logf("deletes of the refused copy: %d", deletesSent(counter, refused))
}
