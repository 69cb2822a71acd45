package clusterprofile

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// conflictRetry is a safety net: a conflict means the object changed since
// it was read, and that change's own event brings the key back anyway.
const conflictRetry = time.Second

// ResultFor turns a reconcile error into its result. Write conflicts are a
// normal part of several writers sharing one object (merge writes under
// optimistic lock, on CRDs with atomic status lists), so they are retried
// quietly rather than logged as errors.
func ResultFor(ctx context.Context, err error) (ctrl.Result, error) {
	if err != nil && apierrors.IsConflict(err) {
		ctrl.LoggerFrom(ctx).V(2).Info("Write conflict; retrying with the newer object", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}
