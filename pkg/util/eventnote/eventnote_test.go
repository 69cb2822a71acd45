package eventnote

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
)

func TestTruncate(t *testing.T) {
	cases := map[string]struct {
		note string
		want string
	}{
		"short":         {note: "ok", want: "ok"},
		"exactly 1 KiB": {note: strings.Repeat("a", 1024), want: strings.Repeat("a", 1024)},
		"one byte over": {note: strings.Repeat("a", 1025), want: strings.Repeat("a", 1021) + "…"},
		"cut in a rune": {note: strings.Repeat("a", 1020) + "ééé", want: strings.Repeat("a", 1020) + "…"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Truncate(tc.note)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("note (-want +got):\n%s", diff)
			}
			if len(got) > MaxBytes {
				t.Errorf("note has %d bytes", len(got))
			}
		})
	}
}

func TestTruncatingRecorder(t *testing.T) {
	fake := events.NewFakeRecorder(1)
	Truncating(fake).Eventf(&corev1.Pod{}, nil, corev1.EventTypeWarning, "Reason", "Act", "name %s", strings.Repeat("n", 2000))
	got := <-fake.Events
	want := "Warning Reason name " + strings.Repeat("n", 1024-len("name ")-len("…")) + "…"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
	if Truncating(nil) != nil {
		t.Errorf("a nil recorder stays nil")
	}
}
