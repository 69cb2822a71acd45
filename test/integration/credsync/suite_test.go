// Package credsync_test runs the credential syncer against a real API
// server, with the mirror publishing the profiles it serves.
package credsync_test

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/optional"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{}, &env))
}

var syncGates = map[string]bool{"ClusterProfile": true, "ClusterProfileCredSyncer": true}

// fleet publishes clusters into namespaces through one exclusive set each
// test owns, so the mirror creates the profiles the syncer serves.
func fleet(ctx context.Context, t *testing.T, set string, clusters []string, namespaces ...string) {
	t.Helper()
	c := env.Client
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet(set).Obj())
	for _, cluster := range clusters {
		framework.CreateCluster(ctx, t, c, utiltesting.MakeManagedCluster(cluster).ClusterSet(set).Obj())
		if err := c.Get(ctx, types.NamespacedName{Name: cluster}, &corev1.Namespace{}); apierrors.IsNotFound(err) {
			framework.CreateNamespace(ctx, t, c, cluster) // the cluster namespace on the hub
		}
	}
	for _, ns := range namespaces {
		framework.CreateNamespace(ctx, t, c, ns)
		framework.CreateBinding(ctx, t, c, utiltesting.MakeBinding(ns, set).Bound(true).Obj())
	}
}

// createMSA writes a ManagedServiceAccount and its token Secret as the
// managed-serviceaccount agent would.
func createMSA(ctx context.Context, t *testing.T, cluster, name, token string, expiry time.Time, sync bool) *authv1beta1.ManagedServiceAccount {
	t.Helper()
	c := env.Client
	tokenSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name,
			Labels: map[string]string{"authentication.open-cluster-management.io/is-managed-serviceaccount": "true"}},
		Data: map[string][]byte{"token": []byte(token), "ca.crt": []byte("CA of " + cluster), "other": []byte("not copied")},
	}
	if err := c.Create(ctx, tokenSecret); err != nil {
		t.Fatalf("creating token Secret: %v", err)
	}
	msa := &authv1beta1.ManagedServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name},
		Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{
			Enabled: true, Validity: metav1.Duration{Duration: 8640 * time.Hour}}},
	}
	if sync {
		msa.Labels = map[string]string{"authentication.open-cluster-management.io/sync-to-clusterprofile": "true"}
	}
	if err := c.Create(ctx, msa); err != nil {
		t.Fatalf("creating ManagedServiceAccount: %v", err)
	}
	framework.UpdateStatus(ctx, t, c, msa, func(m *authv1beta1.ManagedServiceAccount) {
		m.Status.TokenSecretRef = &authv1beta1.SecretRef{Name: name, LastRefreshTimestamp: metav1.Now()}
		m.Status.ExpirationTimestamp = &metav1.Time{Time: expiry}
	})
	return msa
}

// syncedSecret returns the copy, or nil when there is none.
func syncedSecret(g Gomega, ctx context.Context, namespace, name string) *corev1.Secret {
	s, err := optional.Get(ctx, env.Client, types.NamespacedName{Namespace: namespace, Name: name}, &corev1.Secret{})
	g.Expect(err).NotTo(HaveOccurred())
	return s
}

// expectCopiesIn waits until exactly these namespaces hold the named copy.
func expectCopiesIn(t *testing.T, ctx context.Context, name string, namespaces ...string) {
	t.Helper()
	if namespaces == nil {
		namespaces = []string{}
	}
	sort.Strings(namespaces)
	NewWithT(t).Eventually(func(g Gomega) []string {
		found, err := framework.SecretNamespaces(ctx, env.Client, name)
		g.Expect(err).NotTo(HaveOccurred())
		return found
	}, framework.Timeout, framework.Interval).Should(Equal(namespaces), "namespaces holding Secret %s", name)
}

func eventsAbout(g Gomega, ctx context.Context, kind, name, reason string) []string {
	events, err := framework.EventsAbout(ctx, env.Client, kind, name, reason)
	g.Expect(err).NotTo(HaveOccurred())
	notes := make([]string, 0, len(events))
	for _, e := range events {
		notes = append(notes, e.Note)
	}
	return notes
}

var bindingGVK = schema.GroupVersion(clusterv1beta2.GroupVersion).WithKind("ManagedClusterSetBinding")

func keyOf(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}
