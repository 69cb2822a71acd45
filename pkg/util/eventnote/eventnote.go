// Package eventnote keeps Event notes within what the API server accepts.
package eventnote

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// MaxBytes is the longest note an events.k8s.io Event may carry; the API
// server refuses a longer one, and the recorder drops it without retrying,
// so the report would be lost.
const MaxBytes = 1024

const ellipsis = "…"

// Truncating wraps a recorder so that every note fits in MaxBytes: notes
// quote names (up to 253 characters each) and API errors, and a report
// about long names would otherwise be the one that never arrives.
func Truncating(r events.EventRecorder) events.EventRecorder {
	if r == nil {
		return nil
	}
	return truncating{r}
}

type truncating struct{ events.EventRecorder }

func (t truncating) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	t.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", Truncate(fmt.Sprintf(note, args...)))
}

// Truncate cuts note to MaxBytes, on a character boundary, ending in "…"
// when it was cut.
func Truncate(note string) string {
	if len(note) <= MaxBytes {
		return note
	}
	cut := MaxBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + ellipsis
}
