package coexistence

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/eventnote"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/filteredcache"
)

const (
	ReasonYieldingToUpstream = "YieldingToUpstream"
	ReasonTakingOver         = "TakingOverFromUpstream"
)

// Twin is an upstream component that can run the twin of one of this
// bundle's capabilities: the same ClusterProfile writer behind a feature
// gate of its own manager. It is recognised by its manager Deployment's
// arguments, which only whoever installs that component (a hub admin) can
// set: nothing a tenant writes on a profile or a Secret counts.
type Twin struct {
	// Capability names the bundle's capability in logs, Events and the
	// yielding_to_upstream metric.
	Capability string
	// Component names the upstream component in messages.
	Component string
	// Deployment is the name of its manager Deployment (in the namespace
	// its chart is installed into, any).
	Deployment string
	// Gates turn its ClusterProfile writer on (the older name in OCM's
	// guide, the newer one in its latest charts).
	Gates []string
}

// ClusterProxyWriter is cluster-proxy's own writer of the
// open-cluster-management entry (helm featureGates.clusterProfileAccessProvider,
// newer featureGates.clusterProfile).
var ClusterProxyWriter = Twin{Capability: "access-proxy", Component: "cluster-proxy",
	Deployment: "cluster-proxy-addon-manager", Gates: []string{"ClusterProfileAccessProvider", "ClusterProfile"}}

// ManagedServiceAccountSyncer is managed-serviceaccount's own token syncer
// (helm featureGates.clusterProfileCredSyncer, newer featureGates.clusterProfile).
var ManagedServiceAccountSyncer = Twin{Capability: "credsync", Component: "managed-serviceaccount",
	Deployment: "managed-serviceaccount-addon-manager", Gates: []string{"ClusterProfileCredSyncer", "ClusterProfile"}}

// EnabledBy tells whether d runs the twin: it is the twin's Deployment, not
// being deleted, not scaled to zero, and a container's arguments turn one of
// the twin's gates on.
func (t Twin) EnabledBy(d *appsv1.Deployment) bool {
	if d == nil || d.Name != t.Deployment || !d.DeletionTimestamp.IsZero() || ptr.Deref(d.Spec.Replicas, 1) == 0 {
		return false
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		gates := FeatureGates(append(append([]string{}, c.Command...), c.Args...))
		for _, g := range t.Gates {
			if gates[g] {
				return true
			}
		}
	}
	return false
}

// FeatureGates reads the --feature-gates flags of a command line (as
// component-base parses them: A=true,B=false, given as --feature-gates=…
// or --feature-gates …; a later flag adds to the earlier ones).
func FeatureGates(argv []string) map[string]bool {
	gates := map[string]bool{}
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		var value string
		switch {
		case strings.HasPrefix(arg, "--feature-gates="):
			value = strings.TrimPrefix(arg, "--feature-gates=")
		case arg == "--feature-gates" && i+1 < len(argv):
			i++
			value = argv[i]
		default:
			continue
		}
		for _, pair := range strings.Split(value, ",") {
			name, raw, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if enabled, err := strconv.ParseBool(strings.TrimSpace(raw)); ok && err == nil {
				gates[strings.TrimSpace(name)] = enabled
			}
		}
	}
	return gates
}

// TwinWatch follows one twin's Deployment and answers whether the bundle's
// capability must yield to it. Several capabilities may share one: the
// cache is made once, on the first Start.
type TwinWatch struct {
	Twin Twin

	once     sync.Once
	startErr error
	cache    cache.Cache
	// reader reads the twin's Deployments: the cache, once started.
	reader   client.Reader
	recorder events.EventRecorder
	// yielding is the last answer, to report each change once.
	mu       sync.Mutex
	reported *bool
}

// NewTwinWatch watches twin.
func NewTwinWatch(twin Twin) *TwinWatch { return &TwinWatch{Twin: twin} }

// Start makes the watch's cache on mgr: Deployments of the twin's name only,
// in every namespace (RBAC grants get, list and watch on that name only).
func (w *TwinWatch) Start(mgr ctrl.Manager) error {
	if w == nil {
		return nil
	}
	w.once.Do(func() {
		w.recorder = eventnote.Truncating(mgr.GetEventRecorder("clusterprofile-coexistence"))
		w.cache, w.startErr = filteredcache.New(mgr, &appsv1.Deployment{}, cache.ByObject{
			Field:     fields.OneTermEqualSelector("metadata.name", w.Twin.Deployment),
			Transform: keepManagerSpec,
		})
		w.reader = w.cache
	})
	return w.startErr
}

// NewTwinWatchReading is a watch of twin that reads its Deployments
// through reader, with no cache of its own (for tests of what yields).
func NewTwinWatchReading(twin Twin, reader client.Reader) *TwinWatch {
	return &TwinWatch{Twin: twin, reader: reader}
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

// Yielding tells whether a Deployment of the twin runs its writer, and
// reports each change of the answer once (log line, Event on the
// Deployment, yielding_to_upstream metric). Before Start it is false.
func (w *TwinWatch) Yielding(ctx context.Context) (bool, error) {
	if w == nil || w.reader == nil {
		return false, nil
	}
	list := &appsv1.DeploymentList{}
	if err := w.reader.List(ctx, list); err != nil {
		return false, fmt.Errorf("listing %s Deployments: %w", w.Twin.Deployment, err)
	}
	var running []*appsv1.Deployment
	var all []appsv1.Deployment
	for i := range list.Items {
		if list.Items[i].Name != w.Twin.Deployment {
			continue // the cache holds only these; a test's reader may hold more
		}
		all = append(all, list.Items[i])
		if w.Twin.EnabledBy(&list.Items[i]) {
			running = append(running, &list.Items[i])
		}
	}
	sort.Slice(running, func(i, j int) bool { return running[i].Namespace < running[j].Namespace })
	yielding := len(running) > 0
	w.report(ctx, yielding, running, all)
	return yielding, nil
}

func (w *TwinWatch) report(ctx context.Context, yielding bool, running []*appsv1.Deployment, all []appsv1.Deployment) {
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
		log.Info("Yielding to "+w.Twin.Component+"'s own ClusterProfile writer: it is enabled, so this capability writes nothing until it is turned off",
			"deployment", klog.KObj(d), "gates", w.Twin.Gates)
		w.event(d, corev1.EventTypeWarning, ReasonYieldingToUpstream, fmt.Sprintf(
			"%s's ClusterProfile writer is enabled here (%s); clusterprofile-manager's %s yields to it and takes over when it is turned off. Enable only one of them.",
			w.Twin.Component, strings.Join(w.Twin.Gates, " or "), w.Twin.Capability))
		return
	}
	if len(all) == 0 {
		log.V(2).Info("No " + w.Twin.Component + " ClusterProfile writer; this capability is active")
		return
	}
	log.Info(w.Twin.Component + "'s own ClusterProfile writer is off; this capability is active")
	for i := range all {
		w.event(&all[i], corev1.EventTypeNormal, ReasonTakingOver, fmt.Sprintf(
			"%s's ClusterProfile writer is off; clusterprofile-manager's %s writes in its place.", w.Twin.Component, w.Twin.Capability))
	}
}

func (w *TwinWatch) event(d *appsv1.Deployment, eventType, reason, note string) {
	if w.recorder != nil {
		w.recorder.Eventf(d, nil, eventType, reason, "Coexistence", note)
	}
}

// Watch enqueues every profile (all) when the twin's writer is turned on
// or off, so the capability yields or takes over at once.
func (w *TwinWatch) Watch(b *builder.Builder, all handler.MapFunc) *builder.Builder {
	if w == nil || w.cache == nil {
		return b
	}
	return b.WatchesRawSource(source.Kind[client.Object](w.cache, &appsv1.Deployment{},
		handler.EnqueueRequestsFromMapFunc(all), w.writerSwitched()))
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
