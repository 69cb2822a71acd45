// Package reliability_test feeds the manager hostile input and faults on a
// real control plane (kube-apiserver and etcd), and checks that every case
// ends in the exact world the project promises, with each problem reported
// once and the rest of the fleet unaffected.
package reliability_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{}, &env))
}

var syncGates = map[string]bool{"ClusterProfile": true, "ClusterProfileCredSyncer": true}

// expectProfile waits until the profile reads as want in what hostile
// input could break, its labels, display name and manager, and carries
// that many properties.
func expectProfile(t *testing.T, ctx context.Context, namespace, name string, want utiltesting.ProfileView, properties int) {
	t.Helper()
	p := &cpv1alpha1.ClusterProfile{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, p)).To(Succeed())
		got := utiltesting.ViewOf(p)
		g.Expect(cmp.Diff(want, got, cmpopts.IgnoreFields(utiltesting.ProfileView{}, "Version", "Properties", "Conditions", "Providers"))).
			To(BeEmpty(), "profile %s/%s (-want +got)", namespace, name)
		g.Expect(got.Properties).To(HaveLen(properties), "properties of profile %s/%s", namespace, name)
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// profileNamespaces returns, sorted, the namespaces holding a profile named name.
func profileNamespaces(g Gomega, ctx context.Context, name string) []string {
	profiles, err := framework.Profiles(ctx, env.Client, name)
	g.Expect(err).NotTo(HaveOccurred())
	namespaces := []string{}
	for ns := range profiles {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	return namespaces
}

// copyNamespaces returns, sorted, the namespaces holding a Secret named name.
func copyNamespaces(g Gomega, ctx context.Context, name string) []string {
	found, err := framework.SecretNamespaces(ctx, env.Client, name)
	g.Expect(err).NotTo(HaveOccurred())
	return found
}

// eventNotes lists the notes of the events.k8s.io Events about one object
// with a reason; a note the recorder saw more than once (a series) says so,
// so that "reported once" is checked, not assumed.
func eventNotes(g Gomega, ctx context.Context, kind, name, reason string) []string {
	events, err := framework.EventsAbout(ctx, env.Client, kind, name, reason)
	g.Expect(err).NotTo(HaveOccurred())
	notes := []string{}
	for _, e := range events {
		note := e.Note
		if e.Series != nil {
			note += fmt.Sprintf(" [seen %d times]", e.Series.Count)
		}
		notes = append(notes, note)
	}
	return notes
}

// createMSA writes a ManagedServiceAccount asking for sync and its token
// Secret, as the managed-serviceaccount agent would.
func createMSA(ctx context.Context, t *testing.T, cluster, name, token string) {
	t.Helper()
	c := env.Client
	tokenSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name,
			Labels: map[string]string{"authentication.open-cluster-management.io/is-managed-serviceaccount": "true"}},
		Data: map[string][]byte{"token": []byte(token), "ca.crt": []byte("CA of " + cluster)},
	}
	if err := c.Create(ctx, tokenSecret); err != nil {
		t.Fatalf("creating token Secret: %v", err)
	}
	msa := &authv1beta1.ManagedServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name,
			Labels: map[string]string{cpcreds.LabelSyncToClusterProfile: "true"}},
		Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{
			Enabled: true, Validity: metav1.Duration{Duration: 8640 * time.Hour}}},
	}
	if err := c.Create(ctx, msa); err != nil {
		t.Fatalf("creating ManagedServiceAccount: %v", err)
	}
	framework.UpdateStatus(ctx, t, c, msa, func(m *authv1beta1.ManagedServiceAccount) {
		m.Status.TokenSecretRef = &authv1beta1.SecretRef{Name: name, LastRefreshTimestamp: metav1.Now()}
	})
}

// ensureNamespace creates a namespace unless it exists.
func ensureNamespace(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, &corev1.Namespace{}); apierrors.IsNotFound(err) {
		framework.CreateNamespace(ctx, t, env.Client, name)
	}
}

// copiesOfCluster lists, sorted as namespace/name, every synced token copy of cluster.
func copiesOfCluster(g Gomega, ctx context.Context, cluster string) []string {
	list := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, list)).To(Succeed())
	var out []string
	for _, s := range list.Items {
		if s.Annotations[cpcreds.AnnotationSourceCluster] == cluster {
			out = append(out, s.Namespace+"/"+s.Name)
		}
	}
	sort.Strings(out)
	return out
}

// accessView is what a consumer reads of a profile's access: entries by
// name (their server), and the conditions other than the mirror's, as
// "Status/Reason: Message".
type accessView struct {
	Entries    map[string]string
	Conditions map[string]string
}

func accessOf(p *cpv1alpha1.ClusterProfile) accessView {
	v := accessView{Conditions: map[string]string{}}
	for _, ap := range p.Status.AccessProviders {
		if v.Entries == nil {
			v.Entries = map[string]string{}
		}
		v.Entries[ap.Name] = ap.Cluster.Server
	}
	for _, c := range p.Status.Conditions {
		if c.Type != "ControlPlaneHealthy" && c.Type != "Joined" {
			v.Conditions[c.Type] = fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return v
}

// expectAccess waits until the profile's access reads as want.
func expectAccess(t *testing.T, ctx context.Context, namespace, name string, want accessView) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, p)).To(Succeed())
		g.Expect(cmp.Diff(want, accessOf(p))).To(BeEmpty(), "access of %s/%s (-want +got)", namespace, name)
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// expectWorld waits until exactly namespaces hold cluster's profile and
// each of them exactly the named token copies, and no other namespace holds
// a copy of the cluster's tokens.
func expectWorld(t *testing.T, ctx context.Context, cluster string, namespaces []string, copies ...string) {
	t.Helper()
	var want []string
	for _, ns := range namespaces {
		for _, name := range copies {
			want = append(want, ns+"/"+name)
		}
	}
	sort.Strings(want)
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(profileNamespaces(g, ctx, cluster)).To(Equal(namespaces))
		g.Expect(copiesOfCluster(g, ctx, cluster)).To(Equal(want))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// statusView is a profile's status entries by key: properties as
// name=value, condition types, access entry names, each sorted.
type statusView struct {
	Properties, Conditions, Entries []string
}

func statusOf(p *cpv1alpha1.ClusterProfile) statusView {
	var v statusView
	for _, prop := range p.Status.Properties {
		v.Properties = append(v.Properties, prop.Name+"="+prop.Value)
	}
	for _, c := range p.Status.Conditions {
		v.Conditions = append(v.Conditions, c.Type)
	}
	for _, ap := range p.Status.AccessProviders {
		v.Entries = append(v.Entries, ap.Name)
	}
	sort.Strings(v.Properties)
	sort.Strings(v.Conditions)
	sort.Strings(v.Entries)
	return v
}

// expectStatus waits until the profile's status entries read as want.
func expectStatus(t *testing.T, ctx context.Context, c client.Client, key types.NamespacedName, want statusView) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		p := &cpv1alpha1.ClusterProfile{}
		g.Expect(c.Get(ctx, key, p)).To(Succeed())
		g.Expect(cmp.Diff(want, statusOf(p))).To(BeEmpty(), "status of %s (-want +got)", key)
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// retryStatus changes a profile's status as writers before Server-Side
// Apply do: a merge patch of whole lists under optimistic lock.
func retryStatus(ctx context.Context, t *testing.T, c client.Client, key types.NamespacedName, mutate func(*cpv1alpha1.ClusterProfile)) {
	t.Helper()
	retryStatusAs(ctx, t, c, key, "", mutate)
}

// retryStatusAs is retryStatus under a field manager ("": the client's default).
func retryStatusAs(ctx context.Context, t *testing.T, c client.Client, key types.NamespacedName, manager string, mutate func(*cpv1alpha1.ClusterProfile)) {
	t.Helper()
	var opts []client.SubResourcePatchOption
	if manager != "" {
		opts = append(opts, client.FieldOwner(manager))
	}
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		current := &cpv1alpha1.ClusterProfile{}
		if err := c.Get(ctx, key, current); err != nil {
			return err
		}
		patched := current.DeepCopy()
		mutate(patched)
		return c.Status().Patch(ctx, patched, client.MergeFromWithOptions(current, client.MergeFromWithOptimisticLock{}), opts...)
	})
	if err != nil {
		t.Fatalf("writing the status of %s: %v", key, err)
	}
}

// standardProperties are the two well-known properties the mirror adds to
// every profile (KEP-2149), as statusView lists them: the cluster's id (its
// name, without an id.k8s.io claim) and the set that binds it there.
func standardProperties(cluster, set string) []string {
	return []string{"cluster.clusterset.k8s.io=" + cluster, "clusterset.k8s.io=" + set}
}
