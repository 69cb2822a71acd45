//go:build linux

package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// managerLease is the manager's leader election Lease in its namespace.
const managerLease = "clusterprofile-manager.open-cluster-management.io"

// upgradeSettle is how long setUp watches the fleet after the upgraded
// manager took its Lease: far longer than its first pass over two clusters.
const upgradeSettle = 15 * time.Second

// upgrade is what setUp saw of the upgrade from the previous release.
var upgrade struct {
	// previousImage and currentImage are the manager's image before and
	// after.
	previousImage, currentImage string
	// before and after are the profiles and token copies in consumerNS of
	// the clusters there were, before the upgrade and once the upgraded
	// manager has run.
	clusters      int
	before, after []publishedObject
}

// publishedObject is a profile's or a copy's identity: a delete and
// recreate shows as a new UID and creation time.
type publishedObject struct {
	Kind, Name string
	UID        string
	Created    time.Time
	// TokenSum is the SHA-256 of a copy's token (kept out of the logs).
	TokenSum string
}

// installPreviousThenUpgrade installs the previous release from the local
// registry, waits until it publishes every cluster's profile and token copy
// in consumerNS, and upgrades to this release from the registry, as a
// platform engineer upgrading would; it records the fleet before and after
// for TestUpgradeFromThePreviousReleaseKeepsEveryProfileAndCopy.
func installPreviousThenUpgrade(ctx context.Context) error {
	if err := env.InstallPreviousBundle(ctx, releaseName, releaseNamespace); err != nil {
		return err
	}
	if err := bindSet(ctx, consumerNS, defaultSet); err != nil {
		return err
	}
	var err error
	upgrade.clusters = len(env.Clusters)
	if upgrade.previousImage, err = managerImage(ctx); err != nil {
		return err
	}
	if upgrade.before, err = waitFleetPublished(ctx); err != nil {
		return fmt.Errorf("the previous release publishing the fleet: %w", err)
	}
	upgraded := time.Now()
	if err := env.UpgradeBundle(ctx, releaseName, releaseNamespace, nil); err != nil {
		return err
	}
	if upgrade.currentImage, err = managerImage(ctx); err != nil {
		return err
	}
	if err := waitLeaseTakenSince(ctx, upgraded); err != nil {
		return err
	}
	time.Sleep(upgradeSettle)
	upgrade.after, err = publishedFleet(ctx)
	return err
}

// TestUpgradeFromThePreviousReleaseKeepsEveryProfileAndCopy: setUp
// installed the previous release (its chart and image from the local
// registry), let it publish the fleet, and upgraded to this release's chart
// and image from the registry. Every profile and token copy is the same
// object after the upgrade: none deleted and recreated, none lost, every
// copy still holding its token.
func TestUpgradeFromThePreviousReleaseKeepsEveryProfileAndCopy(t *testing.T) {
	requireEnv(t)
	if want := env.Registry.BundleRepository + ":" + env.Registry.PreviousVersion; upgrade.previousImage != want {
		t.Errorf("before the upgrade the manager ran %q, want the previous release's %q", upgrade.previousImage, want)
	}
	if want := env.Registry.BundleReference(); upgrade.currentImage != want {
		t.Errorf("after the upgrade the manager runs %q, want %q", upgrade.currentImage, want)
	}
	if len(upgrade.before) != 2*upgrade.clusters {
		t.Fatalf("before the upgrade: %d profiles and copies, want one of each per cluster: %+v", len(upgrade.before), upgrade.before)
	}
	if diff := cmp.Diff(upgrade.before, upgrade.after); diff != "" {
		t.Errorf("the upgrade changed the published profiles and copies (-before +after):\n%s", diff)
	}
}

// waitFleetPublished waits until every cluster has its profile and its
// token copy in consumerNS, and returns them.
func waitFleetPublished(ctx context.Context) ([]publishedObject, error) {
	var fleet []publishedObject
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		if fleet, err = publishedFleet(ctx); err != nil {
			return false, err
		}
		return len(fleet) == 2*upgrade.clusters, nil
	})
	return fleet, err
}

// publishedFleet lists the profiles and token copies (with a token) of the
// suite's clusters in consumerNS, in a stable order.
func publishedFleet(ctx context.Context) ([]publishedObject, error) {
	var fleet []publishedObject
	for _, c := range env.Clusters[:upgrade.clusters] {
		profile := &cpv1alpha1.ClusterProfile{}
		if err := hub.Get(ctx, key(consumerNS, c.Name), profile); client.IgnoreNotFound(err) != nil {
			return nil, err
		} else if err == nil {
			fleet = append(fleet, publishedObject{Kind: "ClusterProfile", Name: profile.Name, UID: string(profile.UID), Created: profile.CreationTimestamp.Time})
		}
		copied := &corev1.Secret{}
		if err := hub.Get(ctx, key(consumerNS, c.Name+"-"+msaName), copied); client.IgnoreNotFound(err) != nil {
			return nil, err
		} else if err == nil && len(copied.Data["token"]) > 0 {
			fleet = append(fleet, publishedObject{Kind: "Secret", Name: copied.Name, UID: string(copied.UID),
				Created: copied.CreationTimestamp.Time, TokenSum: fmt.Sprintf("%x", sha256.Sum256(copied.Data["token"]))})
		}
	}
	return fleet, nil
}

// managerImage is the image of the manager's Deployment.
func managerImage(ctx context.Context) (string, error) {
	d := &appsv1.Deployment{}
	if err := hub.Get(ctx, key(releaseNamespace, releaseName), d); err != nil {
		return "", err
	}
	return d.Spec.Template.Spec.Containers[0].Image, nil
}

// waitLeaseTakenSince waits until a manager acquired the leader Lease after
// since: the upgraded one, once the previous one let go.
func waitLeaseTakenSince(ctx context.Context, since time.Time) error {
	return wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		lease := &coordinationv1.Lease{}
		if err := hub.Get(ctx, key(releaseNamespace, managerLease), lease); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		acquired := lease.Spec.AcquireTime
		return acquired != nil && acquired.After(since), nil
	})
}
