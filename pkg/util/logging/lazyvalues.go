package logging

import (
	"slices"

	"github.com/go-logr/logr"
)

// lazyValues holds the key-value pairs a logger was given and hands them to
// the sink below only when a line is written. controller-runtime gives
// every reconcile's logger its controller, object and reconcile ID, and
// zap encodes such values into a fresh buffer at once; most reconciles
// write no line, so the encoding is work thrown away, on every reconcile
// of every controller. The values are read when a line is written, so they
// must not change meanwhile: names, keys and references, as everywhere here.
type lazyValues struct {
	sink   logr.LogSink
	values []any
}

// newLazyValues wraps the sink of a logger already made (logr.New has
// initialized it); the wrapper's own frame is added to the call depth the
// sink skips to report its caller.
func newLazyValues(sink logr.LogSink) logr.LogSink {
	if withDepth, ok := sink.(logr.CallDepthLogSink); ok {
		sink = withDepth.WithCallDepth(1)
	}
	return lazyValues{sink: sink}
}

// Init does nothing: the sink below was initialized when its own logger
// was made, and initializing it again would skip more frames.
func (l lazyValues) Init(logr.RuntimeInfo) {}

func (l lazyValues) Enabled(level int) bool { return l.sink.Enabled(level) }

func (l lazyValues) Info(level int, msg string, keysAndValues ...any) {
	l.resolved().Info(level, msg, keysAndValues...)
}

func (l lazyValues) Error(err error, msg string, keysAndValues ...any) {
	l.resolved().Error(err, msg, keysAndValues...)
}

// WithValues clips before appending, so that loggers derived from one
// parent never share the tail of its values.
func (l lazyValues) WithValues(keysAndValues ...any) logr.LogSink {
	return lazyValues{sink: l.sink, values: append(slices.Clip(l.values), keysAndValues...)}
}

func (l lazyValues) WithName(name string) logr.LogSink {
	return lazyValues{sink: l.sink.WithName(name), values: l.values}
}

func (l lazyValues) WithCallDepth(depth int) logr.LogSink {
	withDepth, ok := l.sink.(logr.CallDepthLogSink)
	if !ok {
		return l
	}
	return lazyValues{sink: withDepth.WithCallDepth(depth), values: l.values}
}

// resolved is the sink with the pending values, for one line.
func (l lazyValues) resolved() logr.LogSink {
	if len(l.values) == 0 {
		return l.sink
	}
	return l.sink.WithValues(l.values...)
}
