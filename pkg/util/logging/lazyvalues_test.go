package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	uzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// recordingSink records what reaches it: the values it was given and the
// lines written, each with the values it had then.
type recordingSink struct {
	calls  *[]string
	values []any
}

func (s recordingSink) Init(logr.RuntimeInfo)                  {}
func (s recordingSink) Enabled(level int) bool                 { return level == 0 }
func (s recordingSink) WithName(name string) logr.LogSink      { return s }
func (s recordingSink) Error(err error, msg string, kv ...any) { s.line(msg, kv) }
func (s recordingSink) Info(level int, msg string, kv ...any)  { s.line(msg, kv) }

func (s recordingSink) WithValues(kv ...any) logr.LogSink {
	*s.calls = append(*s.calls, fmt.Sprintf("WithValues%v", kv))
	return recordingSink{calls: s.calls, values: append(append([]any{}, s.values...), kv...)}
}

func (s recordingSink) line(msg string, kv []any) {
	*s.calls = append(*s.calls, fmt.Sprintf("%s %v %v", msg, s.values, kv))
}

func TestLazyValuesReachTheSinkOnlyWithALine(t *testing.T) {
	var calls []string
	logger := logr.New(newLazyValues(recordingSink{calls: &calls}))
	// Three appends leave room in the controller's values: its two
	// reconciles must not write into it, each over the other's name.
	controller := logger.WithValues("controller", "mirror").WithValues("group", "cluster").WithValues("kind", "ManagedCluster")
	reconcile := controller.WithValues("name", "cluster-1")
	sibling := controller.WithValues("name", "cluster-2")
	reconcile.V(2).Info("not written")
	reconcile.Info("written", "step", 1)
	sibling.Error(errors.New("boom"), "failed")

	values := "controller mirror group cluster kind ManagedCluster name"
	want := []string{
		"WithValues[" + values + " cluster-1]",
		"written [" + values + " cluster-1] [step 1]",
		"WithValues[" + values + " cluster-2]",
		"failed [" + values + " cluster-2] []",
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("what reached the sink (-want +got):\n%s", diff)
	}
}

func TestLazyValuesWriteWhatZapWouldHave(t *testing.T) {
	var direct, lazy bytes.Buffer
	newZap := func(out *bytes.Buffer) logr.Logger {
		return zap.New(zap.WriteTo(out), zap.RawZapOpts(uzap.AddCaller()),
			zap.Encoder(zapcore.NewJSONEncoder(zapcore.EncoderConfig{MessageKey: "msg", NameKey: "logger", CallerKey: "caller",
				EncodeCaller: zapcore.ShortCallerEncoder})))
	}
	write := func(logger logr.Logger) int {
		_, _, line, _ := runtime.Caller(0)
		logger.WithName("mirror").WithValues("name", "cluster-1").Info("applied", "writes", 2)
		return line + 1
	}
	write(newZap(&direct))
	line := write(logr.New(newLazyValues(newZap(&lazy).GetSink())))

	want := map[string]any{"msg": "applied", "logger": "mirror", "name": "cluster-1", "writes": float64(2),
		"caller": fmt.Sprintf("logging/lazyvalues_test.go:%d", line)}
	for name, out := range map[string]*bytes.Buffer{"zap": &direct, "lazy": &lazy} {
		got := map[string]any{}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("%s wrote %q: %v", name, out, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s's line (-want +got):\n%s", name, diff)
		}
	}
}

// BenchmarkReconcileLogger makes a logger as controller-runtime makes one
// for every reconcile (the object, then the reconcile ID) and logs nothing
// at the default level, as most reconciles do.
func BenchmarkReconcileLogger(b *testing.B) {
	for name, wrap := range map[string]func(logr.Logger) logr.Logger{
		"zap":  func(l logr.Logger) logr.Logger { return l },
		"lazy": func(l logr.Logger) logr.Logger { return logr.New(newLazyValues(l.GetSink())) },
	} {
		b.Run(name, func(b *testing.B) {
			controller := wrap(zap.New(zap.WriteTo(io.Discard))).WithValues("controller", "mirror",
				"controllerGroup", "cluster.open-cluster-management.io", "controllerKind", "ManagedCluster")
			b.ReportAllocs()
			for b.Loop() {
				log := controller.WithValues("ManagedCluster", klog.KRef("", "cluster-00001"), "namespace", "", "name", "cluster-00001")
				log = log.WithValues("reconcileID", "8f14e45f-ceea-467f-a0e6-7e6f2b1e4f7c")
				log.V(2).Info("applying")
			}
		})
	}
}
