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

// TestCopySourceAndCheckCopyAgree: the syncer's notion of its copies
// (CopySource) and what cp-creds accepts (CheckCopy) are one rule.
func TestCopySourceAndCheckCopyAgree(t *testing.T) {
	tests := map[string]struct {
		secret   *secretBuilder
		wantCopy bool
	}{
		"a copy":                      {secret: syncedSecret(testNamespace, "c1", testMSA), wantCopy: true},
		"planted, no marks":           {secret: plantedSecret(testNamespace, "c1-"+testMSA)},
		"no label":                    {secret: plantedSecret(testNamespace, "c1-"+testMSA).annotation(AnnotationSourceCluster, "c1").annotation(AnnotationSourceManagedServiceAccount, testMSA)},
		"no cluster annotation":       {secret: syncedSecret(testNamespace, "c1", testMSA).withoutAnnotation(AnnotationSourceCluster)},
		"no MSA annotation":           {secret: syncedSecret(testNamespace, "c1", testMSA).withoutAnnotation(AnnotationSourceManagedServiceAccount)},
		"label of another pair":       {secret: syncedSecret(testNamespace, "c1", testMSA).label(SyncedFromValue("c2", testMSA))},
		"long pair with hashed label": {secret: syncedSecret(testNamespace, strings.Repeat("c", 60), testMSA), wantCopy: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			secret := tc.secret.obj()
			cluster, msa, ok := CopySource(secret)
			if ok != tc.wantCopy {
				t.Fatalf("CopySource ok = %v, want %v", ok, tc.wantCopy)
			}
			wantCluster, wantMSA := secret.Annotations[AnnotationSourceCluster], secret.Annotations[AnnotationSourceManagedServiceAccount]
			if ok && (cluster != wantCluster || msa != wantMSA) {
				t.Errorf("CopySource = %q, %q, want %q, %q", cluster, msa, wantCluster, wantMSA)
			}
			if accepted := CheckCopy(secret, wantCluster, wantMSA) == nil; accepted != ok {
				t.Errorf("CheckCopy accepts: %v; CopySource says a copy: %v", accepted, ok)
			}
		})
	}
}
