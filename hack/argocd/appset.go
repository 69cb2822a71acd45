package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/argoproj/argo-cd/v3/applicationset/generators"
	appv1 "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/settings"
)

type paramsOutput struct {
	Params []map[string]any `json:"params"`
}

// appSet is the ApplicationSet the generators work for: they read only its
// name, namespace and template mode.
func appSet(h *hub, goTemplate bool) *appv1.ApplicationSet {
	return &appv1.ApplicationSet{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-check", Namespace: h.namespace},
		Spec:       appv1.ApplicationSetSpec{GoTemplate: goTemplate},
	}
}

func appsetClustersCommand(fs *flag.FlagSet) func(context.Context, *hub) (any, error) {
	selector := fs.String("selector", "", "label selector on the cluster Secrets, as the generator's selector (k=v[,k2=v2])")
	goTemplate := fs.Bool("go-template", false, "generate parameters for goTemplate: true (nested metadata instead of flat keys)")
	return func(ctx context.Context, h *hub) (any, error) {
		sel, err := metav1.ParseToLabelSelector(*selector)
		if err != nil {
			return nil, fmt.Errorf("--selector: %w", err)
		}
		// The controller passes its manager's cached client; a direct one
		// lists the same Secrets without a manager around it.
		c, err := ctrlclient.New(h.config, ctrlclient.Options{})
		if err != nil {
			return nil, fmt.Errorf("controller-runtime client: %w", err)
		}
		gen := generators.NewClusterGenerator(c, h.namespace)
		spec := &appv1.ApplicationSetGenerator{Clusters: &appv1.ClusterGenerator{Selector: *sel}}
		params, err := gen.GenerateParams(spec, appSet(h, *goTemplate), c)
		if err != nil {
			return nil, fmt.Errorf("cluster generator: %w", err)
		}
		return paramsOutput{Params: nonNil(params)}, nil
	}
}

func appsetDecisionsCommand(fs *flag.FlagSet) func(context.Context, *hub) (any, error) {
	configMap := fs.String("configmap", "", "the ConfigMap in Argo CD's namespace that describes the duck type (apiVersion, kind, statusListKey, matchKey)")
	labelSelector := fs.String("label-selector", "", "selects the decision resources, e.g. cluster.open-cluster-management.io/placement=NAME")
	goTemplate := fs.Bool("go-template", false, "generate parameters for goTemplate: true")
	return func(ctx context.Context, h *hub) (any, error) {
		if *configMap == "" || *labelSelector == "" {
			return nil, errors.New("appset-decisions needs --configmap and --label-selector")
		}
		sel, err := metav1.ParseToLabelSelector(*labelSelector)
		if err != nil {
			return nil, fmt.Errorf("--label-selector: %w", err)
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		gen, err := newDuckTypeGenerator(ctx, h)
		if err != nil {
			return nil, err
		}
		spec := &appv1.ApplicationSetGenerator{ClusterDecisionResource: &appv1.DuckTypeGenerator{
			ConfigMapRef: *configMap, LabelSelector: *sel,
		}}
		params, err := gen.GenerateParams(spec, appSet(h, *goTemplate), nil)
		if err != nil {
			return nil, fmt.Errorf("cluster decision resource generator: %w", err)
		}
		return paramsOutput{Params: nonNil(params)}, nil
	}
}

// newDuckTypeGenerator builds the generator as the ApplicationSet controller's
// command does: over a cluster informer that has synced before the first use,
// since the generator matches decisions against the informer's clusters.
func newDuckTypeGenerator(ctx context.Context, h *hub) (generators.Generator, error) {
	dyn, err := dynamic.NewForConfig(h.config)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	informer, err := settings.NewClusterInformer(h.kube, h.namespace)
	if err != nil {
		return nil, fmt.Errorf("cluster informer: %w", err)
	}
	go informer.Run(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil, errors.New("cluster informer did not sync")
	}
	return generators.NewDuckTypeGenerator(ctx, dyn, h.kube, h.namespace, informer), nil
}

// nonNil keeps "params" a list in the JSON when nothing matched.
func nonNil(params []map[string]any) []map[string]any {
	if params == nil {
		return []map[string]any{}
	}
	return params
}
