package cpcreds

import (
	"strings"
	"testing"
)

func TestSyncedFromValue(t *testing.T) {
	if got := SyncedFromValue("c1", "multikueue"); got != "c1-multikueue" {
		t.Errorf("short pair = %q", got)
	}
	long := SyncedFromValue(strings.Repeat("c", 60), "multikueue")
	if len(long) > 63 || !strings.HasPrefix(long, "sha256-") {
		t.Errorf("long pair must become a valid hashed label value, got %q", long)
	}
	if long != SyncedFromValue(strings.Repeat("c", 60), "multikueue") || long == SyncedFromValue(strings.Repeat("c", 61), "multikueue") {
		t.Error("the hash must be stable and tell pairs apart")
	}
}
