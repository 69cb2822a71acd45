package credsync

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

var scrapeTime = time.Date(2027, 1, 2, 3, 0, 0, 0, time.UTC)

// tokenCopy is a synced copy whose expiry annotation is expires ("" for none).
func tokenCopy(ns, name, expires string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{LabelSyncedFrom: name}}}
	if expires != "" {
		s.Annotations = map[string]string{cpcreds.AnnotationTokenExpiration: expires}
	}
	return s
}

func unscoped(s *corev1.Secret) *corev1.Secret {
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, cpcreds.AnnotationUnscoped, "true")
	return s
}

func inFromScrape(d time.Duration) string { return scrapeTime.Add(d).Format(time.RFC3339) }

func TestSummarizeExpiry(t *testing.T) {
	cases := map[string]struct {
		copies []any
		want   expirySummary
	}{
		"no copies": {want: expirySummary{}},
		"copies without an expiry count only as copies": {
			copies: []any{tokenCopy("a", "c1-m", ""), tokenCopy("b", "c1-m", "not a time")},
			want:   expirySummary{copies: 2},
		},
		"the earliest wins; within the hour counts, the boundary included": {
			copies: []any{
				tokenCopy("a", "c1-m", inFromScrape(48*time.Hour)),
				tokenCopy("b", "c1-m", inFromScrape(time.Hour)),
				tokenCopy("c", "c2-m", inFromScrape(61*time.Minute)),
				tokenCopy("d", "c3-m", inFromScrape(20*time.Minute)),
			},
			want: expirySummary{copies: 4, expiringSoon: 2, earliest: ptr.To(20 * time.Minute)},
		},
		"what is not a Secret is not counted": {
			copies: []any{&corev1.ConfigMap{}, tokenCopy("a", "c1-m", "")},
			want:   expirySummary{copies: 1},
		},
		"unscoped copies are counted": {
			copies: []any{unscoped(tokenCopy("a", "c1-m", "")), unscoped(tokenCopy("b", "c1-m", "")), tokenCopy("b", "c1-n", "")},
			want:   expirySummary{copies: 3, unscoped: 2},
		},
		"an expired copy is the earliest, negative, and expiring": {
			copies: []any{tokenCopy("a", "c1-m", inFromScrape(-5*time.Minute)), tokenCopy("b", "c1-m", inFromScrape(24*time.Hour))},
			want:   expirySummary{copies: 2, expiringSoon: 1, earliest: ptr.To(-5 * time.Minute)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := summarizeExpiry(tc.copies, scrapeTime)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(expirySummary{})); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTokenExpiryCollector checks the exposition: names, help, no labels,
// only copies labelled synced-from, and no earliest expiry without one.
func TestTokenExpiryCollector(t *testing.T) {
	unlabelled := tokenCopy("a", "plain", inFromScrape(time.Minute))
	unlabelled.Labels = nil
	cases := map[string]struct {
		objects []any
		want    string
	}{
		"copies with expiries": {
			objects: []any{tokenCopy("a", "c1-m", inFromScrape(30*time.Minute)), unscoped(tokenCopy("b", "c1-m", inFromScrape(90*time.Minute))), unlabelled},
			want: `
# HELP clusterprofile_synced_token_earliest_expiry_seconds Seconds until the earliest synced token copy expires (negative once expired); absent while no copy carries an expiry.
# TYPE clusterprofile_synced_token_earliest_expiry_seconds gauge
clusterprofile_synced_token_earliest_expiry_seconds 1800
# HELP clusterprofile_synced_tokens Synced ManagedServiceAccount token copies (Secrets labelled authentication.open-cluster-management.io/synced-from).
# TYPE clusterprofile_synced_tokens gauge
clusterprofile_synced_tokens 2
# HELP clusterprofile_synced_tokens_expiring_within_hour Synced token copies that expire within the next hour or have expired.
# TYPE clusterprofile_synced_tokens_expiring_within_hour gauge
clusterprofile_synced_tokens_expiring_within_hour 1
# HELP clusterprofile_synced_tokens_unscoped Synced token copies of ManagedServiceAccounts that name no consumer namespaces, copied into every namespace serving their cluster.
# TYPE clusterprofile_synced_tokens_unscoped gauge
clusterprofile_synced_tokens_unscoped 1
`,
		},
		"no copies": {
			want: `
# HELP clusterprofile_synced_tokens Synced ManagedServiceAccount token copies (Secrets labelled authentication.open-cluster-management.io/synced-from).
# TYPE clusterprofile_synced_tokens gauge
clusterprofile_synced_tokens 0
# HELP clusterprofile_synced_tokens_expiring_within_hour Synced token copies that expire within the next hour or have expired.
# TYPE clusterprofile_synced_tokens_expiring_within_hour gauge
clusterprofile_synced_tokens_expiring_within_hour 0
# HELP clusterprofile_synced_tokens_unscoped Synced token copies of ManagedServiceAccounts that name no consumer namespaces, copied into every namespace serving their cluster.
# TYPE clusterprofile_synced_tokens_unscoped gauge
clusterprofile_synced_tokens_unscoped 0
`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newTokenExpiry(func() time.Time { return scrapeTime })
			c.cached = func(context.Context) ([]any, error) { return tc.objects, nil }
			if err := testutil.CollectAndCompare(c, strings.NewReader(tc.want)); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestTokenExpiryCollectorWithoutReaderReportsNothing(t *testing.T) {
	if n := testutil.CollectAndCount(newTokenExpiry(time.Now)); n != 0 {
		t.Errorf("collected %d metrics before any syncer was set up, want 0", n)
	}
}
