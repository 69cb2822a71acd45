// Package mirror publishes every ManagedCluster as a ClusterProfile in each
// namespace bound to a ManagedClusterSet that contains it, and keeps the
// profiles' labels, spec and status in step with the cluster.
package mirror

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	addonapiv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/coexistence"
	"open-cluster-management.io/clusterprofile-bundle/pkg/membership"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/damping"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/reportonce"
)

// Reconciler publishes one ManagedCluster as ClusterProfiles.
//
// Queue key: ManagedCluster name. Events on sets, bindings, namespaces,
// profiles, the ClusterProfile CRD and ClusterManagers are mapped to the
// clusters whose profiles they can change.
type Reconciler struct {
	client      client.Client
	writer      *clusterprofile.Writer
	recorder    events.EventRecorder
	managerName string
	guard       *coexistence.Guard
	reports     *reportonce.Memory
	agents      bool
	facts       damping.Rule
	// clock times the write budget.
	clock clock.PassiveClock
	// published is each cluster's facts budget.
	published *publications
	// records reads the id records (a cache of the Leases in namespace
	// labelled LabelIDRecord, indexed by IndexIDRecordHolder); namespace is
	// where they are written.
	records   client.Reader
	namespace string
	// writeSlots bounds the profile writes in flight across all of the
	// mirror's reconciles at one per worker: under load (a cold start) the
	// API server gets as many concurrent writes as when each reconcile
	// wrote one at a time, and the other writers their share of it, while a
	// lone change uses every slot for its cluster's profiles.
	writeSlots chan struct{}
}

// NewReconciler builds a mirror that reads through c (normally the cache)
// and writes through it, and reads the id records through records.
func NewReconciler(c client.Client, records client.Reader, recorder events.EventRecorder, opts Options) *Reconciler {
	return &Reconciler{
		records:     records,
		namespace:   opts.Namespace,
		client:      c,
		writer:      clusterprofile.NewWriter(Identity, c),
		recorder:    recorder,
		managerName: opts.ManagerName,
		guard:       opts.Guard,
		reports:     reportonce.New(),
		agents:      opts.AgentReports,
		facts:       opts.Facts,
		clock:       clock.RealClock{},
		published:   &publications{},
		writeSlots:  make(chan struct{}, cmp.Or(max(opts.Workers, 0), defaultWriteSlots)),
	}
}

// SetupWithManager wires the watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1.ManagedCluster{}).
		// A cluster's id depends on the clusters holding its claimed id.
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.clustersSharingID),
			builder.WithPredicates(idChanged())).
		Watches(&clusterv1beta2.ManagedClusterSet{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfSet),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&clusterv1beta2.ManagedClusterSetBinding{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfBinding)).
		WatchesMetadata(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfNamespace),
			builder.WithPredicates(membership.LifecycleChanged())).
		// A profile is keyed by its name, which is its cluster's.
		Watches(&cpv1alpha1.ClusterProfile{}, r.writer.Events(func(p *cpv1alpha1.ClusterProfile) reconcile.Request {
			return reconcile.Request{NamespacedName: types.NamespacedName{Name: p.Name}}
		})).
		Watches(&apiextensionsv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(r.allClusters),
			builder.WithPredicates(isClusterProfileCRD(), predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)})
	if r.agents {
		b = b.Watches(&addonapiv1beta1.ManagedClusterAddOn{}, handler.EnqueueRequestsFromMapFunc(clusterOfAgentAddon))
	}
	if records, ok := r.records.(cache.Cache); ok {
		b = b.WatchesRawSource(source.Kind[client.Object](records, &coordinationv1.Lease{},
			handler.EnqueueRequestsFromMapFunc(r.clustersOfIDRecord)))
	}
	if r.guard != nil && r.guard.Reader != nil {
		b = b.Watches(&operatorv1.ClusterManager{}, handler.EnqueueRequestsFromMapFunc(r.allClusters),
			builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	}
	return b.Complete(r)
}

// Reconcile brings the profiles of one cluster in line with the world.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if passive, err := r.guard.Passive(ctx); err != nil || passive {
		return ctrl.Result{}, err
	}
	cluster, err := membership.Reader{Client: r.client}.Cluster(ctx, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	existing, err := r.writer.Named(ctx, r.client, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	world, err := r.readWorld(ctx, req.Name, cluster, existing)
	if err != nil {
		return ctrl.Result{}, err
	}
	listMaps, err := r.writer.ListMaps(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	desired := DesiredProfiles(req.Name, cluster, world)
	// An id is recorded before any profile carries it, and a cluster that
	// could not take it publishes nothing until it is retried.
	if err := r.settleIDRecords(ctx, req.Name, desired.ID); err != nil {
		return ctrl.Result{}, err
	}
	now := r.clock.Now()
	planned, planErr := plan(planInput{
		clusterName: req.Name, managerName: r.managerName, desired: desired,
		existing: existing, namespaces: world.Namespaces, listMaps: listMaps,
		facts: factsBudget{rule: r.facts, budget: r.published.at(req.Name), now: now},
	})
	r.reportFindings(ctx, cluster, req.Name, desired, planned.steps)
	r.reportClusterNamespaces(ctx, world)
	r.reportHeldFacts(ctx, desired, planned)
	if len(desired.SetByNamespace) == 0 {
		r.published.forget(req.Name)
	} else {
		r.published.note(req.Name, planned.factsHeld != damping.Unchanged, now)
	}
	if len(planned.steps) == 0 {
		log.V(4).Info("ClusterProfiles up to date", "profiles", len(desired.SetByNamespace))
		return ctrl.Result{RequeueAfter: planned.factsHeldFor}, planErr
	}
	result, err := clusterprofile.ResultFor(ctx, errors.Join(planErr, r.execute(ctx, cluster, planned.steps, now)))
	if err == nil && result.RequeueAfter == 0 {
		result.RequeueAfter = planned.factsHeldFor
	}
	return result, err
}

// readWorld reads the sets, the bindings of the sets that contain the
// cluster, the namespaces of those bindings and of existing profiles, the
// clusters that may hold its claimed id, the id records of that id and of
// the cluster named name, and the agent's report.
func (r *Reconciler) readWorld(ctx context.Context, name string, cluster *clusterv1.ManagedCluster, existing []*cpv1alpha1.ClusterProfile) (World, error) {
	namespaces := make([]string, 0, len(existing))
	for _, p := range existing {
		namespaces = append(namespaces, p.Namespace)
	}
	publishing, err := membership.Reader{Client: r.client}.ClusterPublishing(ctx, cluster, namespaces)
	if err != nil {
		return World{}, err
	}
	world := World{Publishing: publishing}
	if world.IDCandidates, err = r.idCandidates(ctx, cluster); err != nil {
		return world, err
	}
	if world.IDRecords, err = r.idRecords(ctx, name, cluster); err != nil {
		return world, err
	}
	if r.agents && cluster != nil {
		if world.Agent, err = r.agentReport(ctx, cluster.Name); err != nil {
			return world, err
		}
	}
	return world, nil
}

// idCandidates reads, through IndexClusterIDCandidate, the clusters named
// like the cluster's id.k8s.io claim or claiming it too; none when it claims
// none.
func (r *Reconciler) idCandidates(ctx context.Context, cluster *clusterv1.ManagedCluster) ([]clusterv1.ManagedCluster, error) {
	if cluster == nil || !cluster.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	claimed := ClaimedID(cluster)
	if claimed == "" {
		return nil, nil
	}
	holders := &clusterv1.ManagedClusterList{}
	if err := r.client.List(ctx, holders, client.MatchingFields{IndexClusterIDCandidate: claimed}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing ManagedClusters holding id %q: %w", claimed, err)
	}
	return holders.Items, nil
}

// agentReport reads the cluster-profile-agent's ManagedClusterAddOn; a
// missing one is an empty, stale report.
func (r *Reconciler) agentReport(ctx context.Context, cluster string) (*AgentReport, error) {
	addon := &addonapiv1beta1.ManagedClusterAddOn{}
	err := r.client.Get(ctx, types.NamespacedName{Namespace: cluster, Name: agentapi.AddonName}, addon)
	switch {
	case apierrors.IsNotFound(err):
		return &AgentReport{}, nil
	case err != nil:
		return nil, fmt.Errorf("reading the %s addon of %s: %w", agentapi.AddonName, cluster, err)
	}
	conditions := addon.Status.Conditions
	return &AgentReport{
		Fresh:        meta.IsStatusConditionTrue(conditions, addonapiv1beta1.ManagedClusterAddOnConditionAvailable),
		ControlPlane: meta.FindStatusCondition(conditions, agentapi.ConditionControlPlaneHealthy),
		Nodes:        meta.FindStatusCondition(conditions, agentapi.ConditionAllNodesHealthy),
	}, nil
}

// execute carries out the steps side by side, each in a free write slot
// (writeSlots): a cluster's profiles are independent objects, and a change reaches all of them in about the time
// of one write rather than of one per namespace. One failing
// profile does not stop the rest. Writes that published facts at now spend
// one publication of the cluster's budget, however many of its profiles
// they wrote; facts that rode along with other writes are recorded as
// published, unspent.
func (r *Reconciler) execute(ctx context.Context, cluster *clusterv1.ManagedCluster, steps []step, now time.Time) error {
	errs := make([]error, len(steps))
	var writes sync.WaitGroup
	for i := range steps {
		writes.Go(func() {
			select {
			case r.writeSlots <- struct{}{}:
				defer func() { <-r.writeSlots }()
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			if errs[i] = r.executeStep(ctx, steps[i]); errs[i] != nil {
				r.reportWriteFailure(cluster, steps[i].key, steps[i].current, errs[i])
			}
		})
	}
	writes.Wait()
	published, carried := false, false
	for i, s := range steps {
		if errs[i] == nil {
			published = published || s.publishesFacts
			carried = carried || s.carriesFacts
		}
	}
	switch {
	case published:
		r.published.spend(cluster.Name, r.facts, now)
	case carried:
		r.published.carried(cluster.Name, now)
	}
	return errors.Join(errs...)
}

// publications remembers each cluster's facts budget. It is lost with the
// process: after a restart a cluster's first change goes out at once, which
// costs at most one write per cluster.
type publications struct{ last sync.Map }

func (p *publications) at(cluster string) damping.Budget {
	if b, ok := p.last.Load(cluster); ok {
		return b.(damping.Budget)
	}
	return damping.Budget{}
}

// note records whether the cluster's reconcile at now held changed facts
// back: the first hold starts the change's settle time, and a reconcile
// that holds none ends it.
func (p *publications) note(cluster string, held bool, now time.Time) {
	b := p.at(cluster)
	switch {
	case held && b.Pending.IsZero():
		p.last.Store(cluster, b.Hold(now))
	case !held && !b.Pending.IsZero():
		b.Pending = time.Time{}
		p.last.Store(cluster, b)
	}
}

// carried records the cluster's changed facts gone out at now with a write
// that went out anyway.
func (p *publications) carried(cluster string, now time.Time) {
	p.last.Store(cluster, p.at(cluster).Carried(now))
}

// spend records a publication of the cluster's facts at now. Like note, it
// is called by the cluster's reconcile only, which never runs twice at once
// for one cluster.
func (p *publications) spend(cluster string, rule damping.Rule, at time.Time) {
	p.last.Store(cluster, rule.Spend(p.at(cluster), at))
}

func (p *publications) forget(cluster string) { p.last.Delete(cluster) }

func (r *Reconciler) executeStep(ctx context.Context, s step) error {
	log := ctrl.LoggerFrom(ctx).WithValues("clusterProfile", klog.KRef(s.key.Namespace, s.key.Name))
	switch {
	case s.clashWith != "":
		return nil // reported by reportFindings; retried when the other profile changes
	case s.delete:
		log.V(2).Info("Deleting ClusterProfile that is no longer wanted")
		return r.writer.Delete(ctx, s.current)
	case s.current == nil:
		log.V(2).Info("Creating ClusterProfile")
	default:
		log.V(2).Info("Updating ClusterProfile", "status", s.write.Status != nil, "metadata", s.write.Meta != nil)
	}
	_, err := r.writer.Execute(ctx, s.write)
	return err
}

// Deletions forecasts, for the access providers, whether this process's
// mirror is about to delete a profile that no namespace serves any more,
// so that they leave their entries to go with the profile instead of
// withdrawing them first. The answer comes from this process's own state
// (the mirror running and active, the profile's namespace) and the rule the
// mirror deletes by; nothing a tenant writes on the profile counts beyond
// what makes the mirror delete it.
type Deletions struct {
	managerName string
	members     membership.Reader
	// guard is set once the mirror is set up: nil means no mirror runs here.
	guard atomic.Pointer[coexistence.Guard]
}

// NewDeletions is the forecast of the mirror that Setup wires it to.
func NewDeletions() *Deletions { return &Deletions{} }

func (d *Deletions) running(managerName string, members membership.Reader, guard *coexistence.Guard) {
	d.managerName, d.members = managerName, members
	d.guard.Store(guard)
}

// WillDelete tells whether the mirror deletes p, a profile its namespace
// does not serve: the mirror runs here and is not passive, and p is one it
// deletes (deletesUnwanted). A nil forecast knows of no mirror.
func (d *Deletions) WillDelete(ctx context.Context, p *cpv1alpha1.ClusterProfile) (bool, error) {
	if d == nil {
		return false, nil
	}
	guard := d.guard.Load()
	if guard == nil {
		return false, nil
	}
	if passive, err := guard.Passive(ctx); err != nil || passive {
		return false, err
	}
	namespace, err := d.members.NamespaceState(ctx, p.Namespace)
	if err != nil {
		return false, err
	}
	return deletesUnwanted(p, d.managerName, namespace), nil
}
