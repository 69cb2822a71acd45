package argocd

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		"nothing there, nothing wanted":         {want: actionNone},
		"wanted, the name free: create":         {desired: wantSecret(""), want: actionCreate},
		"wanted, another Secret holds the name": {taken: true, desired: wantSecret(""), want: actionClash},
		"ours, up to date":                      {current: wantSecret(""), desired: wantSecret(""), want: actionNone},
		"ours, another server":                  {current: edited, desired: wantSecret(""), want: actionApply},
		"ours, a label more or less":            {current: relabelled, desired: wantSecret(""), want: actionApply},
		"ours, of an older profile of the name": {current: otherOwner, desired: wantSecret(""), want: actionApply},
		"ours, no longer wanted":                {current: wantSecret(""), want: actionDelete},
		"ours, being deleted":                   {current: deleting, desired: wantSecret(""), want: actionNone},
		"another's Secret, nothing wanted":      {taken: true, want: actionNone},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := plan(tc.current, tc.taken, tc.desired); got != tc.want {
				t.Errorf("plan = %s, want %s", got, tc.want)
			}
		})
	}
}

func ptrTime() *metav1.Time {
	now := metav1.Now()
	return &now
}
