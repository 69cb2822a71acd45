package clusterprofile

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StableCondition returns c with the transition time it should carry: the
// existing condition's when the status did not change (so an unchanged
// condition is not a change), else now at the second precision the API
// server stores.
func StableCondition(existing []metav1.Condition, c metav1.Condition, now time.Time) metav1.Condition {
	if old := findCondition(existing, c.Type); old != nil && old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
		return c
	}
	c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	return c
}
