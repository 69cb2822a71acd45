package argocd

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
)

func TestPlan(t *testing.T) {
	edited := wantSecret("")
	edited.Data["server"] = []byte("https://elsewhere.example")
	relabelled := wantSecret("")
	relabelled.Labels["region"] = "us"
	otherOwner := wantSecret("")
	otherOwner.OwnerReferences[0].UID = "uid-of-an-older-profile"
	deleting := wantSecret("")
	deleting.DeletionTimestamp = ptrTime()
	cases := map[string]struct {
		current *corev1.Secret
		taken   bool
		desired *corev1.Secret
		want    action
	}{
		"nothing there, nothing wanted":               {want: actionNone},
		"wanted, the name free: create":               {desired: wantSecret(""), want: actionCreate},
		"wanted, another Secret holds the name":       {taken: true, desired: wantSecret(""), want: actionClash},
		"ours, up to date":                            {current: wantSecret(""), desired: wantSecret(""), want: actionNone},
		"ours, up to date, as the cache holds it":     {current: cached(wantSecret("")), desired: wantSecret(""), want: actionNone},
		"ours, another server":                        {current: edited, desired: wantSecret(""), want: actionApply},
		"ours, another server, as the cache holds it": {current: cached(edited), desired: wantSecret(""), want: actionApply},
		"ours, a label more or less":                  {current: relabelled, desired: wantSecret(""), want: actionApply},
		"ours, of an older profile of the name":       {current: otherOwner, desired: wantSecret(""), want: actionApply},
		"ours, no longer wanted":                      {current: wantSecret(""), want: actionDelete},
		"ours, being deleted":                         {current: deleting, desired: wantSecret(""), want: actionNone},
		"another's Secret, nothing wanted":            {taken: true, want: actionNone},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := plan(tc.current, tc.taken, tc.desired); got != tc.want {
				t.Errorf("plan = %s, want %s", got, tc.want)
			}
		})
	}
}

// cached is a Secret as the cache of our Secrets holds it: digests of its
// data.
func cached(s *corev1.Secret) *corev1.Secret {
	out, err := secretdigest.Transform()(s.DeepCopy())
	if err != nil {
		panic(err)
	}
	return out.(*corev1.Secret)
}

func TestAwaitProperties(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	created := func(ago time.Duration, status cpv1alpha1.ClusterProfileStatus) *cpv1alpha1.ClusterProfile {
		return &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-ago))}, Status: status}
	}
	byAnAccessProvider := cpv1alpha1.ClusterProfileStatus{Conditions: []metav1.Condition{{Type: "ClusterProxyAccess"}},
		AccessProviders: []cpv1alpha1.AccessProvider{{Name: "open-cluster-management"}}}
	withProperty := cpv1alpha1.ClusterProfileStatus{Properties: []cpv1alpha1.Property{{Name: "clusterset.k8s.io", Value: "prod"}}}
	claimsOnly := cpv1alpha1.ClusterProfileStatus{Properties: []cpv1alpha1.Property{{Name: "region.open-cluster-management.io", Value: "eu"}}}
	writtenBy := func(p *cpv1alpha1.ClusterProfile, manager, subresource string) *cpv1alpha1.ClusterProfile {
		p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, Subresource: subresource}}
		return p
	}
	cases := map[string]struct {
		profile *cpv1alpha1.ClusterProfile
		want    time.Duration
	}{
		"just created, no property yet: wait the rest of statusSettle":                {profile: created(500*time.Millisecond, cpv1alpha1.ClusterProfileStatus{}), want: statusSettle - 500*time.Millisecond},
		"created 1.1 s ago, 2.1 s by its whole-second timestamp: still wait":          {profile: created(2100*time.Millisecond, cpv1alpha1.ClusterProfileStatus{}), want: statusSettle - 2100*time.Millisecond},
		"an access provider wrote the status first: wait all the same":                {profile: created(0, byAnAccessProvider), want: statusSettle},
		"no standard property statusSettle after its creation (none to come): create": {profile: created(statusSettle, cpv1alpha1.ClusterProfileStatus{}), want: 0},
		"the clusterset property written: create":                                     {profile: created(0, withProperty), want: 0},
		"the mirror's first status, the claims' properties without the standard ones (the id not recorded yet): wait": {
			profile: writtenBy(created(time.Second, claimsOnly), clusterprofile.MirrorFieldManager, "status"),
			want:    statusSettle - time.Second},
		"still no status 30 s after the create (a cold start's load): wait": {
			profile: created(30*time.Second, cpv1alpha1.ClusterProfileStatus{}), want: statusSettle - 30*time.Second},
		"created in the future (clocks apart): statusSettle at most": {profile: created(-time.Hour, cpv1alpha1.ClusterProfileStatus{}), want: statusSettle},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := awaitProperties(tc.profile, now); got != tc.want {
				t.Errorf("awaitProperties = %s, want %s", got, tc.want)
			}
		})
	}
}

func ptrTime() *metav1.Time {
	now := metav1.Now()
	return &now
}
