package capability

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TeardownPage bounds each list a teardown makes: it runs at every start
// with a gate off (the default), and a hub may hold tens of thousands of
// profiles and copies. A page is decoded whole, with every writer's
// managedFields, while the informers load at the same moment, so a larger
// page raises the manager's peak memory at a restart; at this size it does
// not show (docs/performance.md, "What keeps memory down").
const TeardownPage = 100

// EachListed lists what opts select, TeardownPage items at a time, and
// calls act on every item; act reports whether it changed the item. It
// returns how many items act changed and every error act returned, joined,
// so that one item that cannot be changed does not hold up the rest (the
// Runner retries the whole teardown). reader must not be a cache: a
// teardown runs before the caches of a disabled capability exist, and
// must see managedFields.
func EachListed(ctx context.Context, reader client.Reader, list client.ObjectList,
	act func(context.Context, client.Object) (bool, error), opts ...client.ListOption) (int, error) {
	changed := 0
	var errs []error
	for more := true; more; more = list.GetContinue() != "" {
		page := append(opts, client.Limit(TeardownPage), client.Continue(list.GetContinue()))
		if err := reader.List(ctx, list, page...); err != nil {
			return changed, fmt.Errorf("listing %T: %w", list, err)
		}
		_ = meta.EachListItem(list, func(item runtime.Object) error {
			done, err := act(ctx, item.(client.Object))
			if err != nil {
				errs = append(errs, err)
			}
			if done {
				changed++
			}
			return nil
		})
	}
	return changed, errors.Join(errs...)
}
