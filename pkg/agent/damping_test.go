package agent

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clusterfake "open-cluster-management.io/api/client/cluster/clientset/versioned/fake"
	"open-cluster-management.io/api/client/cluster/clientset/versioned/typed/cluster/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
)

// TestClaimsFollowTheFactsBudget drives reportClaims through an autoscaling
// cluster's node counts and checks, round by round, what the claims on the
// managed cluster say: a significant change goes out at once after a quiet
// spell, even right after a publication (the slack), then at most once per
// minimum interval, and noise waits for the refresh.
func TestClaimsFollowTheFactsBudget(t *testing.T) {
	//lint:ignore SA1019 OCM's generated fake clientset has no NewClientset
	claims := clusterfake.NewSimpleClientset().ClusterV1alpha1().ClusterClaims()
	a := &Agent{opts: Options{MinWriteInterval: DefaultMinWriteInterval, Facts: damping.Default()}, claims: claims, managed: kubefake.NewClientset()}
	rounds := []struct {
		at        time.Duration
		nodes     string
		published string
	}{
		{at: 0, nodes: "10", published: "10"},
		{at: 10 * time.Second, nodes: "11", published: "10"}, // noise
		{at: 20 * time.Second, nodes: "20", published: "20"}, // significant: the slack, inside the interval and the floor
		{at: 25 * time.Second, nodes: "40", published: "20"}, // significant, the slack spent
		{at: 30 * time.Second, nodes: "40", published: "40"}, // the interval (KEP-4322's 30 s) has passed
		{at: 40 * time.Second, nodes: "80", published: "40"},
		{at: 60 * time.Second, nodes: "80", published: "80"},
		{at: 2 * time.Minute, nodes: "81", published: "80"},  // noise waits for the refresh
		{at: 62 * time.Minute, nodes: "81", published: "81"}, // refreshed
	}
	for _, r := range rounds {
		now := testNow.Add(r.at)
		if err := a.reportClaims(context.Background(), map[string]string{agentapi.ClaimNodes: r.nodes}, now); err != nil {
			t.Fatalf("at %s: %v", r.at, err)
		}
		if diff := cmp.Diff(map[string]string{agentapi.ClaimNodes: r.published}, claimValues(t, claims)); diff != "" {
			t.Errorf("at %s, nodes %s: claims (-want +got):\n%s", r.at, r.nodes, diff)
		}
	}
}

// TestClaimsWithoutDampingFollowEveryChange is the zero rule: the write
// floor alone.
func TestClaimsWithoutDampingFollowEveryChange(t *testing.T) {
	//lint:ignore SA1019 OCM's generated fake clientset has no NewClientset
	claims := clusterfake.NewSimpleClientset().ClusterV1alpha1().ClusterClaims()
	a := &Agent{opts: Options{MinWriteInterval: DefaultMinWriteInterval}, claims: claims, managed: kubefake.NewClientset()}
	for i, nodes := range []string{"10", "11", "12"} {
		if err := a.reportClaims(context.Background(), map[string]string{agentapi.ClaimNodes: nodes}, testNow.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]string{agentapi.ClaimNodes: nodes}, claimValues(t, claims)); diff != "" {
			t.Errorf("claims (-want +got):\n%s", diff)
		}
	}
}

func claimValues(t *testing.T, claims v1alpha1.ClusterClaimInterface) map[string]string {
	t.Helper()
	list, err := claims.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return agentClaimValues(list.Items)
}

// TestClaimsGainTheirOwnerWithoutWaitingForTheBudget: claims written
// before the agent could read its ClusterRole get the owner reference at
// the next round the floor allows, though no fact changed, and the agent
// holds nothing back (no round is asked for at once, again and again).
func TestClaimsGainTheirOwnerWithoutWaitingForTheBudget(t *testing.T) {
	//lint:ignore SA1019 OCM's generated fake clientset has no NewClientset
	claims := clusterfake.NewSimpleClientset().ClusterV1alpha1().ClusterClaims()
	managed := kubefake.NewClientset()
	a := &Agent{opts: Options{MinWriteInterval: DefaultMinWriteInterval, Facts: damping.Default()}, claims: claims, managed: managed}
	want := map[string]string{agentapi.ClaimNodes: "3"}
	if err := a.reportClaims(context.Background(), want, testNow); err != nil {
		t.Fatal(err)
	}
	role, err := managed.RbacV1().ClusterRoles().Create(context.Background(),
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: agentapi.ClusterRole, UID: "role-uid"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.heldUntil = time.Time{}
	if err := a.reportClaims(context.Background(), want, testNow.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if !a.heldUntil.Equal(testNow.Add(DefaultMinWriteInterval)) {
		t.Errorf("inside the floor: held until %s, want the floor's end %s", a.heldUntil, testNow.Add(DefaultMinWriteInterval))
	}
	a.heldUntil = time.Time{}
	if err := a.reportClaims(context.Background(), want, testNow.Add(DefaultMinWriteInterval)); err != nil {
		t.Fatal(err)
	}
	got, err := claims.Get(context.Background(), agentapi.ClaimNodes, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]metav1.OwnerReference{*ClaimsOwner(role)}, got.OwnerReferences); diff != "" {
		t.Errorf("owner references after the floor (-want +got):\n%s", diff)
	}
	if !a.heldUntil.IsZero() {
		t.Errorf("held until %s with nothing left to write", a.heldUntil)
	}
}
