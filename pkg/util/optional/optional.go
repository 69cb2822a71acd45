// Package optional reads objects that may well not exist, where absence is
// an answer rather than an error.
package optional

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Get reads the object named key through reader into obj and returns obj;
// nil (T's zero value), and no error, when there is no such object.
func Get[T client.Object](ctx context.Context, reader client.Reader, key client.ObjectKey, obj T, opts ...client.GetOption) (T, error) {
	if err := reader.Get(ctx, key, obj, opts...); err != nil {
		var none T
		return none, client.IgnoreNotFound(err)
	}
	return obj, nil
}
