package multikueue_test

import (
	"context"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"open-cluster-management.io/clusterprofile-bundle/pkg/multikueue"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var env *framework.Env

// TestMain starts a control plane with Kueue's MultiKueue CRDs, straight
// from the module cache at the pinned Kueue version.
func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{KueueCRDs: true}, &env))
}

// kueueView is what Kueue reads of one of its objects.
type kueueView struct {
	Labels map[string]string
	Spec   any
}

// kueueObjects lists the objects of kind whose names start with prefix
// (each test names its clusters with its own prefix), by name.
func kueueObjects(g Gomega, ctx context.Context, kind, prefix string) map[string]kueueView {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(multikueue.GroupVersion.WithKind(kind + "List"))
	g.Expect(env.Client.List(ctx, list)).To(Succeed())
	out := map[string]kueueView{}
	for _, item := range list.Items {
		if !strings.HasPrefix(item.GetName(), prefix) {
			continue
		}
		out[item.GetName()] = kueueView{Labels: item.GetLabels(), Spec: item.Object["spec"]}
	}
	return out
}

// expectKueueObjects waits until the objects of kind whose names start with
// prefix are exactly want.
func expectKueueObjects(t *testing.T, ctx context.Context, kind, prefix string, want map[string]kueueView) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) map[string]kueueView {
		return kueueObjects(g, ctx, kind, prefix)
	}, framework.Timeout, framework.Interval).Should(Equal(want), "%ss", kind)
}

// ours is the view of a MultiKueueCluster we keep for a profile.
func ours(name string) kueueView {
	return kueueView{Labels: map[string]string{multikueue.LabelCreatedBy: "open-cluster-management"},
		Spec: map[string]any{"clusterSource": map[string]any{"clusterProfileRef": map[string]any{"name": name}}}}
}

// ourConfig is the view of the MultiKueueConfig listing clusters.
func ourConfig(clusters ...any) kueueView {
	return kueueView{Labels: map[string]string{multikueue.LabelCreatedBy: "open-cluster-management"},
		Spec: map[string]any{"clusters": clusters}}
}

// eventsAbout lists the events.k8s.io Events with reason about one object.
func eventsAbout(g Gomega, ctx context.Context, kind, name, reason string) []eventsv1.Event {
	events, err := framework.EventsAbout(ctx, env.Client, kind, name, reason)
	g.Expect(err).NotTo(HaveOccurred())
	return events
}
