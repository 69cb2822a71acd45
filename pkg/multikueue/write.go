package multikueue

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/optional"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/ssa"
)

type schemaKind = schema.GroupVersionKind

func newUnstructured(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// readObject reads a cluster-scoped Kueue object; nil when absent.
func readObject(ctx context.Context, reader client.Reader, gvk schema.GroupVersionKind, name string) (*unstructured.Unstructured, error) {
	u, err := optional.Get(ctx, reader, types.NamespacedName{Name: name}, newUnstructured(gvk))
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", gvk.Kind, name, err)
	}
	return u, nil
}

// applyOwned creates desired, or brings an existing object in line after
// checking, on the API server, that we created it: the label alone, which
// the cache shows, is anyone's to set.
func applyOwned(ctx context.Context, c client.Client, apiReader client.Reader, current, desired *unstructured.Unstructured) error {
	log := ctrl.LoggerFrom(ctx).WithValues("kind", desired.GetKind(), "name", desired.GetName())
	if current != nil {
		live, err := readObject(ctx, apiReader, desired.GroupVersionKind(), desired.GetName())
		if err != nil || live == nil {
			return err // gone: its delete event brings us back
		}
		if !ours(live, desired.GetLabels()[LabelCreatedBy]) {
			log.Info("Leaving alone an object that carries our label but that we did not write")
			return nil
		}
		log.V(2).Info("Updating")
	} else {
		log.V(2).Info("Creating")
	}
	err := ssa.Apply(ctx, c, desired.DeepCopy(), desired.Object, FieldManager)
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", desired.GetKind(), desired.GetName(), err)
	}
	return nil
}

// deleteOwned deletes current if, on the API server, it is still ours and
// still the very object we saw.
func deleteOwned(ctx context.Context, c client.Client, apiReader client.Reader, current *unstructured.Unstructured) error {
	live, err := readObject(ctx, apiReader, current.GroupVersionKind(), current.GetName())
	if err != nil || live == nil || !ours(live, current.GetLabels()[LabelCreatedBy]) {
		return err
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Deleting what is no longer wanted", "kind", live.GetKind(), "name", live.GetName())
	uid := live.GetUID()
	err = c.Delete(ctx, live, client.Preconditions{UID: &uid, ResourceVersion: ptr.To(live.GetResourceVersion())})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s: %w", live.GetKind(), live.GetName(), err)
	}
	return nil
}
