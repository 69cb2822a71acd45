// Package logging sets up the one logger every binary of the bundle uses.
package logging

import (
	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Setup builds the zap logger from its flags and routes controller-runtime's
// logging and klog's (client-go, the addon-framework) to it.
func Setup(opts *zap.Options) logr.Logger {
	logger := logr.New(newLazyValues(zap.New(zap.UseFlagOptions(opts)).GetSink()))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	return logger
}
