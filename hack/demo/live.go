//go:build linux

package main

import (
	"context"
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
)

// labelCluster sets (value a JSON string) or removes (value null) the
// worker label of a ManagedCluster.
func (d *demo) labelCluster(ctx context.Context, name, value string) error {
	patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, workerLabel, value))
	return d.hub.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, client.RawPatch(types.MergePatchType, patch))
}

// liveChange takes cluster2 out of the worker set: its profile and token
// copy leave kueue-system, and stay in argocd.
func (d *demo) liveChange(ctx context.Context) error {
	step("Live change: cluster2 loses label %s, so it leaves set %q (bound into %s)", workerLabel, workerSet, kueueNS)
	if err := d.labelCluster(ctx, "cluster2", "null"); err != nil {
		return err
	}
	profile := types.NamespacedName{Namespace: kueueNS, Name: "cluster2"}
	copied := types.NamespacedName{Namespace: kueueNS, Name: "cluster2-" + consumer.ManagedServiceAccount}
	err := d.waitFor(ctx, "profile "+profile.String()+" and token copy "+copied.String()+" removed", func(ctx context.Context) (bool, error) {
		errProfile := d.hub.Get(ctx, profile, &cpv1alpha1.ClusterProfile{})
		errCopy := d.hub.Get(ctx, copied, &corev1.Secret{})
		return apierrors.IsNotFound(errProfile) && apierrors.IsNotFound(errCopy), nil
	})
	if err != nil {
		return err
	}
	return d.printProfiles(ctx)
}

// keepRunning prints how to reach everything and waits for Ctrl-C.
func (d *demo) keepRunning(ctx context.Context) error {
	step("Everything keeps running (-keep); Ctrl-C stops it")
	fmt.Printf("    hub (admin):        export KUBECONFIG=%s\n", d.env.Hub.KubeconfigPath)
	for _, c := range d.env.Clusters {
		fmt.Printf("    %s (admin):   %s\n", c.Name, c.KubeconfigPath)
	}
	fmt.Printf("    consumer (kueue):   %s\n", d.consumerKubeconfig)
	fmt.Printf("    cluster-proxy user server: %s\n", d.env.Proxy.URL)
	fmt.Printf("    process logs:       %s\n", d.env.LogDir())
	fmt.Printf("    try: kubectl --kubeconfig %s get clusterprofiles -A\n", filepath.Clean(d.env.Hub.KubeconfigPath))
	<-ctx.Done()
	return nil
}
