package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	log "github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/cache"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/diff"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/common"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/tracing"
	argocommon "github.com/argoproj/argo-cd/v3/common"
	appv1 "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	logutils "github.com/argoproj/argo-cd/v3/util/log"
)

type syncOptions struct {
	cluster, manifests, app, destNamespace string
	prune                                  bool
	timeout                                time.Duration
}

type syncOutput struct {
	Cluster     string       `json:"cluster"`
	CacheSynced bool         `json:"cacheSynced"`
	Resources   int          `json:"resources"`
	Phase       string       `json:"phase"`
	Message     string       `json:"message"`
	Results     []syncResult `json:"results"`
	Error       string       `json:"error,omitempty"`
}

type syncResult struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Message   string `json:"message"`
}

// syncRevision stands for the Git revision an Application would sync; the
// sync records it but nothing here depends on it.
const syncRevision = "argocd-check"

func syncCommand(fs *flag.FlagSet) func(context.Context, *hub) (any, error) {
	var o syncOptions
	fs.StringVar(&o.cluster, "cluster", "", "the Argo CD cluster's name")
	fs.StringVar(&o.manifests, "manifests", "", "directory of YAML or JSON manifests (an empty one with --prune deletes the app's objects)")
	fs.StringVar(&o.app, "app", "", "the application whose objects are synced; marks them with its app-instance label")
	fs.StringVar(&o.destNamespace, "dest-namespace", "default", "namespace for namespaced objects that name none")
	fs.BoolVar(&o.prune, "prune", false, "delete the app's live objects that the manifests no longer have")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long the sync may take")
	return func(ctx context.Context, h *hub) (any, error) {
		if o.cluster == "" || o.manifests == "" || o.app == "" {
			return nil, errors.New("sync needs --cluster, --manifests and --app")
		}
		targets, err := readManifests(o.manifests, o.app)
		if err != nil {
			return nil, err
		}
		c, err := h.cluster(ctx, o.cluster)
		if err != nil {
			return nil, err
		}
		out := &syncOutput{Cluster: c.Name, Results: []syncResult{}}
		if err := syncCluster(ctx, h, c, targets, o, out); err != nil {
			out.Error = err.Error()
		}
		return out, nil
	}
}

// readManifests reads the directory as gitops-engine's agent example reads a
// repository path, and marks every object with the app-instance label, Argo
// CD's "label" tracking, by which the next sync knows what to prune.
func readManifests(dir, app string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := strings.ToLower(filepath.Ext(path)); ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		items, err := kube.SplitYAML(data)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", path, err)
		}
		objs = append(objs, items...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading manifests: %w", err)
	}
	for _, obj := range objs {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[argocommon.LabelKeyAppInstance] = app
		obj.SetLabels(labels)
	}
	return objs, nil
}

// syncCluster does what the application controller does for one sync of one
// Application: a cluster cache over the cluster's rest.Config, then a
// reconcile of the targets against the live objects the app manages.
func syncCluster(ctx context.Context, h *hub, c *appv1.Cluster, targets []*unstructured.Unstructured, o syncOptions, out *syncOutput) error {
	config, err := clusterConfigs(c)
	if err != nil {
		return err
	}
	// resource.respectRBAC in argocd-cm decides, as for Argo CD, whether
	// forbidden resources fail the cache or are left out of it.
	respectRBAC, err := h.settings.RespectRBAC()
	if err != nil {
		return fmt.Errorf("argocd-cm: %w", err)
	}
	logger := logutils.NewLogrusLogger(log.WithField("server", c.Server))
	clusterCache := newClusterCache(config.rest, c, respectRBAC, logger)
	if err := clusterCache.EnsureSynced(); err != nil {
		return fmt.Errorf("cluster cache: %w", err)
	}
	defer clusterCache.Invalidate()
	out.CacheSynced = true
	out.Resources = clusterCache.GetClusterInfo().ResourcesCount

	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	phase, message, results, err := runSync(ctx, config, clusterCache, targets, o, logger)
	out.Phase, out.Message = string(phase), message
	for _, r := range results {
		out.Results = append(out.Results, syncResult{
			Kind: r.ResourceKey.Kind, Namespace: r.ResourceKey.Namespace, Name: r.ResourceKey.Name,
			Status: string(r.Status), Message: r.Message,
		})
	}
	if err == nil && phase != common.OperationSucceeded {
		err = fmt.Errorf("sync %s: %s", phase, message)
	}
	return err
}

// clusterConfig is the pair of rest.Configs the application controller
// builds for a sync: RESTConfig's carries Argo CD's transport (with the
// credentials, exec plugin included, folded into it) for the API calls;
// RawRestConfig's keeps the credentials as fields, because kubectl's
// apply runs from a kubeconfig written from it and would find none in the
// other (gitops-engine then falls back to the in-cluster token file).
type clusterConfig struct{ rest, raw *rest.Config }

func clusterConfigs(c *appv1.Cluster) (clusterConfig, error) {
	restConfig, err := c.RESTConfig()
	if err != nil {
		return clusterConfig{}, fmt.Errorf("REST config: %w", err)
	}
	raw, err := c.RawRestConfig()
	if err != nil {
		return clusterConfig{}, fmt.Errorf("raw REST config: %w", err)
	}
	return clusterConfig{rest: restConfig, raw: raw}, nil
}

// appInfo is what the cache keeps of each live object: the app whose label
// it carries, as the agent example keeps its GC mark.
type appInfo struct{ app string }

func newClusterCache(config *rest.Config, c *appv1.Cluster, respectRBAC int, logger logr.Logger) cache.ClusterCache {
	return cache.NewClusterCache(config,
		cache.SetNamespaces(c.Namespaces),
		cache.SetClusterResources(c.ClusterResources),
		cache.SetRespectRBAC(respectRBAC),
		cache.SetLogr(logger),
		cache.SetPopulateResourceInfoHandler(func(un *unstructured.Unstructured, _ bool) (any, bool) {
			app := un.GetLabels()[argocommon.LabelKeyAppInstance]
			return &appInfo{app: app}, app != ""
		}),
	)
}

// runSync is gitops-engine's engine.Sync, spelled out so that the operation's
// phase and message, which Sync folds into an error, reach the output, and
// so that kubectl gets the raw config as in the application controller (the
// engine passes one config for both).
func runSync(ctx context.Context, config clusterConfig, cc cache.ClusterCache, targets []*unstructured.Unstructured, o syncOptions, logger logr.Logger) (common.OperationPhase, string, []common.ResourceSyncResult, error) {
	managed, err := cc.GetManagedLiveObjs(targets, func(r *cache.Resource) bool {
		info, ok := r.Info.(*appInfo)
		return ok && info.app == o.app
	})
	if err != nil {
		return "", "", nil, fmt.Errorf("managed live objects: %w", err)
	}
	result := sync.Reconcile(targets, managed, o.destNamespace, cc)
	diffRes, err := diff.DiffArray(ctx, result.Target, result.Live, diff.WithLogr(logger))
	if err != nil {
		return "", "", nil, fmt.Errorf("diff: %w", err)
	}
	kubectl := &kube.KubectlCmd{Log: logger, Tracer: tracing.NopTracer{}}
	syncCtx, cleanup, err := sync.NewSyncContext(syncRevision, result, config.rest, config.raw, kubectl, o.destNamespace,
		sync.WithPrune(o.prune), sync.WithLogr(logger), sync.WithSkipHooks(!diffRes.Modified))
	if err != nil {
		return "", "", nil, fmt.Errorf("sync context: %w", err)
	}
	defer cleanup()
	return waitForSync(ctx, syncCtx)
}

// waitForSync steps the sync until its operation completes, as the engine
// does; each step applies the next wave or checks the health of the last.
func waitForSync(ctx context.Context, syncCtx sync.SyncContext) (common.OperationPhase, string, []common.ResourceSyncResult, error) {
	for {
		syncCtx.Sync(ctx)
		phase, message, results := syncCtx.GetState()
		if phase.Completed() {
			return phase, message, results, nil
		}
		select {
		case <-ctx.Done():
			syncCtx.Terminate(context.WithoutCancel(ctx))
			phase, message, results = syncCtx.GetState()
			return phase, message, results, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
