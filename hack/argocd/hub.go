package main

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	appv1 "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/db"
	"github.com/argoproj/argo-cd/v3/util/settings"
)

// hub holds the clients Argo CD's components build from their own identity:
// the settings manager and the cluster database over it, as in the
// application controller, the API server and the ApplicationSet controller.
type hub struct {
	config    *rest.Config
	kube      kubernetes.Interface
	namespace string
	settings  *settings.SettingsManager
	db        db.ArgoDB
	stop      context.CancelFunc
}

func newHub(ctx context.Context, kubeconfig, namespace string) (*hub, error) {
	// An empty path falls back to the in-cluster config, as Argo CD's pods do.
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("hub kubeconfig: %w", err)
	}
	// Argo CD's commands apply the same QPS, burst and transport defaults.
	if err := appv1.SetK8SConfigDefaults(config); err != nil {
		return nil, fmt.Errorf("hub REST config: %w", err)
	}
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("hub client: %w", err)
	}
	// The settings manager's informers live as long as this context.
	ctx, stop := context.WithCancel(ctx)
	mgr := settings.NewSettingsManager(ctx, kube, namespace)
	return &hub{
		config:    config,
		kube:      kube,
		namespace: namespace,
		settings:  mgr,
		db:        db.NewDB(namespace, mgr, kube),
		stop:      stop,
	}, nil
}

// clusters lists the clusters as util/db does for every Argo CD component.
// util/db adds the in-cluster entry (https://kubernetes.default.svc) when no
// Secret names it; that entry is the probe's own hub, not a cluster the bundle
// wrote, so it is left out unless it came from a Secret (only a Secret gives a
// cluster an ID, its UID).
func (h *hub) clusters(ctx context.Context) ([]appv1.Cluster, error) {
	list, err := h.db.ListClusters(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing Argo CD clusters: %w", err)
	}
	var out []appv1.Cluster
	for _, c := range list.Items {
		if c.ID == "" && c.Server == appv1.KubernetesInternalAPIServerAddr {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// cluster finds one cluster by its name, the key the bundle and the
// ApplicationSet generators use.
func (h *hub) cluster(ctx context.Context, name string) (*appv1.Cluster, error) {
	clusters, err := h.clusters(ctx)
	if err != nil {
		return nil, err
	}
	for i := range clusters {
		if clusters[i].Name == name {
			return &clusters[i], nil
		}
	}
	return nil, fmt.Errorf("no Argo CD cluster named %q in namespace %s", name, h.namespace)
}
