// Package accessprovider_test runs the access providers against a real API
// server: the cluster-proxy entry, the direct entry, their withdrawal, and
// their coexistence with the mirror and with other writers.
package accessprovider_test

import (
	"context"
	"os"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{}, &env))
}

var (
	proxyGate  = map[string]bool{"ClusterProfile": false, "ClusterProfileAccessProvider": true}
	directGate = map[string]bool{"ClusterProfile": false, "ClusterProfileDirectAccess": true}
	bothGates  = map[string]bool{"ClusterProfile": false, "ClusterProfileAccessProvider": true, "ClusterProfileDirectAccess": true}
)

// createProfile creates a profile the way a mirror (ours or OCM's) publishes
// it, in a namespace that serves its cluster.
func createProfile(ctx context.Context, t *testing.T, namespace, cluster string) *cpv1alpha1.ClusterProfile {
	t.Helper()
	framework.Serve(ctx, t, env.Client, namespace, cluster)
	return createUnservedProfile(ctx, t, namespace, cluster)
}

// createUnservedProfile creates a profile that looks like a published one,
// with nothing that makes its namespace serve its cluster: what anyone
// allowed to create ClusterProfiles can make.
func createUnservedProfile(ctx context.Context, t *testing.T, namespace, cluster string) *cpv1alpha1.ClusterProfile {
	t.Helper()
	p := utiltesting.MakeClusterProfile(namespace, cluster, "open-cluster-management").Obj()
	p.Labels["open-cluster-management.io/cluster-name"] = cluster
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatalf("creating ClusterProfile %s/%s: %v", namespace, cluster, err)
	}
	return p
}

func getProfile(g Gomega, ctx context.Context, namespace, name string) *cpv1alpha1.ClusterProfile {
	p := &cpv1alpha1.ClusterProfile{}
	g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, p)).To(Succeed())
	return p
}

func entries(p *cpv1alpha1.ClusterProfile) map[string]cpv1alpha1.AccessProvider {
	out := map[string]cpv1alpha1.AccessProvider{}
	for _, ap := range p.Status.AccessProviders {
		out[ap.Name] = ap
	}
	return out
}

func condition(p *cpv1alpha1.ClusterProfile, conditionType string) *metav1.Condition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == conditionType {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// expectEntries waits until the profile carries exactly these entry names.
func expectEntries(t *testing.T, ctx context.Context, namespace, name string, names ...string) {
	t.Helper()
	if names == nil {
		names = []string{}
	}
	NewWithT(t).Eventually(func(g Gomega) []string {
		var got []string
		for _, ap := range getProfile(g, ctx, namespace, name).Status.AccessProviders {
			got = append(got, ap.Name)
		}
		if got == nil {
			got = []string{}
		}
		return got
	}, framework.Timeout, framework.Interval).Should(ConsistOf(names), "access providers of %s/%s", namespace, name)
}
