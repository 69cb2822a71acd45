// Package ssa is this project's one way to send a Server-Side Apply: a body
// that carries only the fields the writer owns, ownership forced (a
// controller is the authority for the fields it applies, and a conflict
// would otherwise leave the object stale forever), through
// controller-runtime's client, with what the API server stored decoded
// back into the object.
package ssa

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Apply applies body to obj's object (obj names it by namespace and name)
// as fieldManager. body is anything that marshals to the apply JSON:
// client-go's apply configurations, the project's own payloads, or
// json.RawMessage.
func Apply(ctx context.Context, c client.Writer, obj client.Object, body any, fieldManager string) error {
	patch, err := rawApply(body)
	if err != nil {
		return err
	}
	return c.Patch(ctx, obj, patch, client.FieldOwner(fieldManager), client.ForceOwnership)
}

// ApplyStatus applies body to the status subresource of obj's object.
func ApplyStatus(ctx context.Context, c client.StatusClient, obj client.Object, body any, fieldManager string, opts ...client.SubResourcePatchOption) error {
	patch, err := rawApply(body)
	if err != nil {
		return err
	}
	opts = append([]client.SubResourcePatchOption{client.FieldOwner(fieldManager), client.ForceOwnership}, opts...)
	return c.Status().Patch(ctx, obj, patch, opts...)
}

func rawApply(body any) (client.Patch, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the apply body: %w", err)
	}
	return client.RawPatch(types.ApplyPatchType, data), nil
}
