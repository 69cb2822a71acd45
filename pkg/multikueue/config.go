package multikueue

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
)

// ConfigReconciler keeps the MultiKueueConfig named by Options.ConfigName
// listing the MultiKueueClusters we created.
//
// Queue key: the MultiKueueConfig's name (one key). Every MultiKueueCluster
// event and every event on the config map to it.
type ConfigReconciler struct {
	client    client.Client
	objects   client.Reader
	apiReader client.Reader
	recorder  events.EventRecorder
	opts      Options
	reports   *reportonce.Memory
}

// NewConfigReconciler builds the config controller's reconciler.
func NewConfigReconciler(c client.Client, readers Readers, recorder events.EventRecorder, opts Options) *ConfigReconciler {
	return &ConfigReconciler{client: c, objects: readers.Cache, apiReader: readers.API, recorder: recorder, opts: opts,
		reports: reportonce.New()}
}

// SetupWithManager wires the watches.
func (r *ConfigReconciler) SetupWithManager(mgr ctrl.Manager) error {
	toConfig := handler.EnqueueRequestsFromMapFunc(r.config)
	return ctrl.NewControllerManagedBy(mgr).Named(ConfigControllerName).
		Watches(newUnstructured(ClusterKind), toConfig).
		Watches(newUnstructured(ConfigKind), toConfig).
		Complete(r)
}

// Reconcile brings the MultiKueueConfig in line with our MultiKueueClusters.
func (r *ConfigReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	clusters, err := r.ourClusters(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	current, err := readObject(ctx, r.objects, ConfigKind, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	desired, left := DesiredConfig(req.Name, clusters, r.opts.ManagerName)
	act := plan(current, desired, r.opts.ManagerName)
	r.report(ctx, current, act, left)
	switch act {
	case actionApply:
		return ctrl.Result{}, applyOwned(ctx, r.client, r.apiReader, current, desired)
	case actionDelete:
		return ctrl.Result{}, deleteOwned(ctx, r.client, r.apiReader, current)
	}
	return ctrl.Result{}, nil
}

// ourClusters names the MultiKueueClusters labelled as ours and not being
// deleted.
func (r *ConfigReconciler) ourClusters(ctx context.Context) ([]string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(ClusterKind.GroupVersion().WithKind(ClusterKind.Kind + "List"))
	if err := r.objects.List(ctx, list, client.MatchingLabels{LabelCreatedBy: r.opts.ManagerName}); err != nil {
		return nil, fmt.Errorf("listing MultiKueueClusters: %w", err)
	}
	var names []string
	for _, item := range list.Items {
		if item.GetDeletionTimestamp().IsZero() {
			names = append(names, item.GetName())
		}
	}
	return names, nil
}

// report says once that the config's name is taken, or that the config
// cannot list every cluster.
func (r *ConfigReconciler) report(ctx context.Context, current *unstructured.Unstructured, act action, left int) {
	findings := map[string]string{}
	if act == actionClash {
		findings["clash"] = r.opts.ConfigName
	}
	if left > 0 {
		findings["tooLarge"] = fmt.Sprint(left)
	}
	for _, topic := range r.reports.Update(r.opts.ConfigName, findings) {
		log := ctrl.LoggerFrom(ctx)
		if topic == "clash" {
			log.Info("Not writing the MultiKueueConfig: one we did not create holds the name", "multiKueueConfig", r.opts.ConfigName)
			r.event(current, ReasonConfigClash, "MultiKueueConfig %s exists and was not created by the ClusterProfile bundle; leaving it alone", r.opts.ConfigName)
			continue
		}
		log.Info("The MultiKueueConfig lists the first clusters only", "max", MaxConfigClusters, "leftOut", left)
		r.event(current, ReasonConfigTooLarge, "MultiKueueConfig %s lists %d clusters, the most it may; %d left out", r.opts.ConfigName, MaxConfigClusters, left)
	}
}

func (r *ConfigReconciler) event(regarding *unstructured.Unstructured, reason, note string, args ...any) {
	if r.recorder != nil && regarding != nil {
		r.recorder.Eventf(regarding, nil, corev1.EventTypeWarning, reason, actionMultiKueue, note, args...)
	}
}
