package coexistence

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"open-cluster-management.io/clusterprofile-bundle/pkg/capability"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/eventnote"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/filteredcache"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
)

const (
	ReasonYieldingToUpstream = "YieldingToUpstream"
	ReasonTakingOver         = "TakingOverFromUpstream"
	// ReasonTwinDecoyIgnored is reported on a Deployment named like a twin's
	// manager that would turn its writer on but that no hub admin installed.
	ReasonTwinDecoyIgnored = "TwinDecoyIgnored"
)

// TwinWatch follows one twin's Deployments and ClusterManagementAddOn and
// answers whether the bundle's capability must yield to it. Several
// capabilities may share one: the caches are made once, on the first Start.
//
// Yielding only ever means not creating or rewriting what the twin writes:
// revoking what this bundle's rules do not allow goes on regardless (see the
// capabilities), so even a trusted twin cannot keep a token or an entry
// where the hub does not publish it.
type TwinWatch struct {
	Twin  Twin
	Trust Trust

	once     sync.Once
	startErr error
	// deployments reads the twin's Deployments: the cache, once started.
	deployments client.Reader
	// addOns reads the twin's ClusterManagementAddOn (metadata); nil when
	// that API is not served, so the twin cannot be installed.
	addOns   client.Reader
	recorder events.EventRecorder
	// yielding is the last answer, to report each change once.
	mu       sync.Mutex
	reported *bool
	// decoys are the ignored Deployments last reported, by namespace/name.
	decoys *reportonce.Memory
}

// NewTwinWatch watches twin, trusting what trust says.
func NewTwinWatch(twin Twin, trust Trust) *TwinWatch {
	return &TwinWatch{Twin: twin, Trust: trust, decoys: reportonce.New()}
}

// NewTwinWatchReading is a watch of twin that reads its Deployments and
// ClusterManagementAddOn through reader, with no cache of its own (for
// tests of what yields).
func NewTwinWatchReading(twin Twin, trust Trust, reader client.Reader, recorder events.EventRecorder) *TwinWatch {
	return &TwinWatch{Twin: twin, Trust: trust, deployments: reader, addOns: reader, recorder: recorder, decoys: reportonce.New()}
}

// Start makes the watch's caches on mgr: the twin's Deployments (by name,
// in the upstream namespaces or, to report decoys, everywhere) and its
// ClusterManagementAddOn's metadata (by name). RBAC grants exactly that.
func (w *TwinWatch) Start(mgr ctrl.Manager) error {
	if w == nil {
		return nil
	}
	w.once.Do(func() { w.startErr = w.start(mgr) })
	return w.startErr
}

func (w *TwinWatch) start(mgr ctrl.Manager) error {
	w.recorder = eventnote.Truncating(mgr.GetEventRecorder("clusterprofile-coexistence"))
	selection := cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", w.Twin.Deployment), Transform: keepManagerSpec}
	if !w.Trust.ReportDecoys {
		selection.Namespaces = map[string]cache.Config{}
		for _, ns := range w.Trust.namespaces() {
			selection.Namespaces[ns] = cache.Config{}
		}
	}
	deployments, err := filteredcache.New(mgr, &appsv1.Deployment{}, selection)
	if err != nil {
		return err
	}
	w.deployments = deployments
	if !capability.APIServed(mgr.GetRESTMapper(), addOnMetadata().GroupVersionKind()) {
		mgr.GetLogger().WithName("coexistence").Info("ClusterManagementAddOn API not served; no upstream addon can be installed, so none is yielded to",
			"component", w.Twin.Component)
		return nil
	}
	addOns, err := filteredcache.New(mgr, addOnMetadata(), cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", w.Twin.AddOn)})
	if err != nil {
		return err
	}
	w.addOns = addOns
	return nil
}

// addOnMetadata is an empty ClusterManagementAddOn, metadata only.
func addOnMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(schema.GroupVersion(addonv1beta1.GroupVersion).WithKind("ClusterManagementAddOn"))
	return m
}

// keepManagerSpec keeps what EnabledBy reads of a Deployment: its name,
// deletion, replicas and containers' command lines.
func keepManagerSpec(in any) (any, error) {
	d, ok := in.(*appsv1.Deployment)
	if !ok {
		return in, nil
	}
	containers := make([]corev1.Container, 0, len(d.Spec.Template.Spec.Containers))
	for _, c := range d.Spec.Template.Spec.Containers {
		containers = append(containers, corev1.Container{Name: c.Name, Command: c.Command, Args: c.Args})
	}
	out := &appsv1.Deployment{TypeMeta: d.TypeMeta}
	out.ObjectMeta = *d.ObjectMeta.DeepCopy()
	out.ManagedFields, out.Annotations = nil, nil
	out.Spec.Replicas = d.Spec.Replicas
	out.Spec.Template.Spec.Containers = containers
	return out, nil
}

// addOnInstalled tells whether the twin's ClusterManagementAddOn exists and
// is not being deleted.
func (w *TwinWatch) addOnInstalled(ctx context.Context) (bool, error) {
	if w.addOns == nil {
		return false, nil
	}
	addOn := addOnMetadata()
	err := w.addOns.Get(ctx, types.NamespacedName{Name: w.Twin.AddOn}, addOn)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading ClusterManagementAddOn %s: %w", w.Twin.AddOn, err)
	}
	return addOn.DeletionTimestamp.IsZero(), nil
}

// Yielding tells whether a Deployment a hub admin installed runs the twin's
// writer (Judge), and reports each change of the answer once (log line,
// Event on the Deployment, yielding_to_upstream metric) and each decoy it
// ignores (TwinDecoyIgnored, twin_decoys_ignored). Before Start it is false.
func (w *TwinWatch) Yielding(ctx context.Context) (bool, error) {
	if w == nil || w.deployments == nil {
		return false, nil
	}
	list := &appsv1.DeploymentList{}
	if err := w.deployments.List(ctx, list); err != nil {
		return false, fmt.Errorf("listing %s Deployments: %w", w.Twin.Deployment, err)
	}
	installed, err := w.addOnInstalled(ctx)
	if err != nil {
		return false, err
	}
	var running, upstream, ignored []*appsv1.Deployment
	verdicts := map[string]string{}
	for i := range list.Items {
		d := &list.Items[i]
		if d.Name != w.Twin.Deployment {
			continue // the cache holds only these; a test's reader may hold more
		}
		if slices.Contains(w.Trust.namespaces(), d.Namespace) {
			upstream = append(upstream, d)
		}
		switch verdict := w.Twin.Judge(d, w.Trust, installed); verdict {
		case Running:
			running = append(running, d)
		case DecoyNamespace, DecoyNoAddOn:
			ignored = append(ignored, d)
			verdicts[client.ObjectKeyFromObject(d).String()] = string(verdict)
		}
	}
	sort.Slice(running, func(i, j int) bool { return running[i].Namespace < running[j].Namespace })
	yielding := len(running) > 0
	w.report(ctx, yielding, running, upstream)
	w.reportDecoys(ctx, ignored, verdicts)
	return yielding, nil
}

func (w *TwinWatch) report(ctx context.Context, yielding bool, running, upstream []*appsv1.Deployment) {
	metrics.SetYieldingToUpstream(w.Twin.Capability, yielding)
	w.mu.Lock()
	changed := w.reported == nil || *w.reported != yielding
	w.reported = &yielding
	w.mu.Unlock()
	if !changed {
		return
	}
	log := ctrl.LoggerFrom(ctx).WithValues("capability", w.Twin.Capability)
	if yielding {
		d := running[0]
		log.Info("Yielding to "+w.Twin.Component+"'s own ClusterProfile writer: it is enabled, so this capability writes nothing new until it is turned off "+
			"(it still revokes what the hub does not publish)", "deployment", klog.KObj(d), "gates", w.Twin.Gates)
		w.event(d, corev1.EventTypeWarning, ReasonYieldingToUpstream, fmt.Sprintf(
			"%s's ClusterProfile writer is enabled here (%s); clusterprofile-manager's %s yields to it and takes over when it is turned off. Enable only one of them.",
			w.Twin.Component, strings.Join(w.Twin.Gates, " or "), w.Twin.Capability))
		return
	}
	if len(upstream) == 0 {
		log.V(2).Info("No " + w.Twin.Component + " ClusterProfile writer; this capability is active")
		return
	}
	log.Info(w.Twin.Component + "'s own ClusterProfile writer is off; this capability is active")
	for _, d := range upstream {
		w.event(d, corev1.EventTypeNormal, ReasonTakingOver, fmt.Sprintf(
			"%s's ClusterProfile writer is off; clusterprofile-manager's %s writes in its place.", w.Twin.Component, w.Twin.Capability))
	}
}

// reportDecoys sets the twin_decoys_ignored metric and reports each newly
// ignored Deployment once.
func (w *TwinWatch) reportDecoys(ctx context.Context, ignored []*appsv1.Deployment, verdicts map[string]string) {
	counts := map[Verdict]int{DecoyNamespace: 0, DecoyNoAddOn: 0}
	for _, verdict := range verdicts {
		counts[Verdict(verdict)]++
	}
	for verdict, n := range counts {
		metrics.SetTwinDecoysIgnored(w.Twin.Capability, string(verdict), n)
	}
	fresh := w.decoys.Update(w.Twin.Capability, verdicts)
	for _, d := range ignored {
		key := client.ObjectKeyFromObject(d).String()
		if !slices.Contains(fresh, key) {
			continue
		}
		why := w.whyIgnored(d, Verdict(verdicts[key]))
		ctrl.LoggerFrom(ctx).Info("Ignoring a Deployment named like "+w.Twin.Component+"'s manager: "+why,
			"deployment", klog.KObj(d), "capability", w.Twin.Capability)
		w.event(d, corev1.EventTypeWarning, ReasonTwinDecoyIgnored, fmt.Sprintf(
			"This Deployment turns on %s's ClusterProfile writer (%s), but %s. clusterprofile-manager ignores it: its %s neither yields to it nor stops revoking.",
			w.Twin.Component, strings.Join(w.Twin.Gates, " or "), why, w.Twin.Capability))
	}
}

func (w *TwinWatch) whyIgnored(d *appsv1.Deployment, verdict Verdict) string {
	if verdict == DecoyNoAddOn {
		return fmt.Sprintf("ClusterManagementAddOn %s does not exist, so no installation of %s made it", w.Twin.AddOn, w.Twin.Component)
	}
	return fmt.Sprintf("namespace %s is not one that hub admins install upstream components into (the chart's coexistence.upstreamNamespaces: %s); "+
		"if it is %s's real manager, add its namespace there", d.Namespace, strings.Join(w.Trust.namespaces(), ", "), w.Twin.Component)
}

func (w *TwinWatch) event(d *appsv1.Deployment, eventType, reason, note string) {
	if w.recorder != nil {
		w.recorder.Eventf(d, nil, eventType, reason, "Coexistence", note)
	}
}

// Watch enqueues every profile (all) when a Deployment in an upstream
// namespace turns the twin's writer on or off and when the twin's
// ClusterManagementAddOn appears or goes, so the capability yields or takes
// over at once. A Deployment elsewhere enqueues nothing (a tenant could
// otherwise have every profile reconciled at will); it is only reported.
func (w *TwinWatch) Watch(b *builder.Builder, all handler.MapFunc) *builder.Builder {
	if w == nil {
		return b
	}
	deployments, ok := w.deployments.(cache.Cache)
	if !ok {
		return b
	}
	b = b.WatchesRawSource(source.Kind[client.Object](deployments, &appsv1.Deployment{},
		handler.EnqueueRequestsFromMapFunc(w.fromDeployment(all)), w.writerSwitched()))
	if addOns, ok := w.addOns.(cache.Cache); ok {
		b = b.WatchesRawSource(source.Kind[client.Object](addOns, addOnMetadata(),
			handler.EnqueueRequestsFromMapFunc(all), addOnCameOrWent()))
	}
	return b
}

// fromDeployment maps a Deployment in an upstream namespace to every
// profile, and reports one elsewhere without enqueueing anything.
func (w *TwinWatch) fromDeployment(all handler.MapFunc) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		if slices.Contains(w.Trust.namespaces(), obj.GetNamespace()) {
			return all(ctx, obj)
		}
		if _, err := w.Yielding(ctx); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Reporting Deployments named like an upstream manager", "component", w.Twin.Component)
		}
		return nil
	}
}

// writerSwitched passes a Deployment that appears or goes, and an update
// that turns the writer on or off.
func (w *TwinWatch) writerSwitched() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, oldOK := e.ObjectOld.(*appsv1.Deployment)
		updated, newOK := e.ObjectNew.(*appsv1.Deployment)
		return !oldOK || !newOK || w.Twin.EnabledBy(old) != w.Twin.EnabledBy(updated)
	}}
}

// addOnCameOrWent passes a ClusterManagementAddOn that appears, goes or
// starts being deleted.
func addOnCameOrWent() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
}
