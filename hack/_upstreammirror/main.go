// Command upstream-clusterprofile-mirror runs Open Cluster Management's own
// ClusterProfile mirror (ocm v1.2.0's registration hub lifecycle and status
// controllers, as the hub runs them behind its ClusterProfile gate: one
// worker each, 30-minute informer resyncs) and nothing else, so that the
// benchmark (test/bench) measures it on the same world as this project's
// mirror.
//
// It lives in a directory the go tool ignores (its name starts with "_"):
// it imports ocm, which this module does not require. hack/ocmlocal.sh builds
// it in a scratch module pinned to ocm v1.2.0.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"open-cluster-management.io/ocm/pkg/registration/hub/clusterprofile"
	"open-cluster-management.io/ocm/pkg/registration/hub/managedclustersetbinding"
	cpclient "sigs.k8s.io/cluster-inventory-api/client/clientset/versioned"
	cpinformers "sigs.k8s.io/cluster-inventory-api/client/informers/externalversions"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "Kubeconfig of the hub.")
	qps := flag.Float64("kube-api-qps", 50, "Client QPS (negative: no client-side limit).")
	burst := flag.Int("kube-api-burst", 100, "Client burst.")
	flag.Parse()
	if err := run(*kubeconfig, float32(*qps), *burst); err != nil {
		fmt.Fprintln(os.Stderr, "upstream-clusterprofile-mirror:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, qps float32, burst int) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = qps, burst
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	clusters, err := clusterclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	profiles, err := cpclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	clusterInformers := clusterinformers.NewSharedInformerFactory(clusters, 30*time.Minute)
	profileInformers := cpinformers.NewSharedInformerFactory(profiles, 30*time.Minute)
	bindings := clusterInformers.Cluster().V1beta2().ManagedClusterSetBindings()
	// The hub's binding controller registers this index; it is not run here.
	if err := bindings.Informer().AddIndexers(cache.Indexers{managedclustersetbinding.ByClusterSetIndex: bySet}); err != nil {
		return err
	}
	lifecycle := clusterprofile.NewClusterProfileLifecycleController(kubeClient, clusterInformers.Cluster().V1().ManagedClusters(),
		clusterInformers.Cluster().V1beta2().ManagedClusterSets(), bindings, profiles, profileInformers.Apis().V1alpha1().ClusterProfiles())
	status := clusterprofile.NewClusterProfileStatusController(clusterInformers.Cluster().V1().ManagedClusters(), profiles,
		profileInformers.Apis().V1alpha1().ClusterProfiles())
	clusterInformers.Start(ctx.Done())
	profileInformers.Start(ctx.Done())
	go lifecycle.Run(ctx, 1)
	go status.Run(ctx, 1)
	<-ctx.Done()
	return nil
}

func bySet(obj any) ([]string, error) {
	if binding, ok := obj.(*clusterv1beta2.ManagedClusterSetBinding); ok {
		return []string{binding.Spec.ClusterSet}, nil
	}
	return nil, nil
}
