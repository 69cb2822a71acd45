package main

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/argocd"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/multikueue"
	"open-cluster-management.io/clusterprofile-bundle/pkg/placementdecision"
)

// placementName names the Placement of every bench namespace: it chooses
// every cluster of the set bound there.
const placementName = "bench-all"

// ownedKind is what one capability beyond the profiles owns: objects of its
// own, which the benchmark counts writes to per object.
type ownedKind struct {
	// gate is the capability's short name (allGates).
	gate string
	// kind names its objects, short their report rows.
	kind, short string
	// floorWrite is the request the floor sends for each of them.
	floorWrite string
}

// ownedKinds are the capabilities that own objects of their own, in report
// order: a MultiKueueCluster per profile in Kueue's namespace, an Argo CD
// cluster Secret per profile in Argo CD's, and the PlacementDecision slices
// of every Placement.
var ownedKinds = []ownedKind{
	{gate: "multikueue", kind: "MultiKueueCluster", short: "MultiKueueCluster", floorWrite: "apply"},
	{gate: "argocd", kind: "Argo CD cluster Secret", short: "Argo CD Secret", floorWrite: "create"},
	{gate: "placementdecision", kind: "PlacementDecision slice", short: "decision slice", floorWrite: "apply"},
}

// ownedKindOf is the owned kind of a gate's capability.
func ownedKindOf(gate string) ownedKind {
	for _, k := range ownedKinds {
		if k.gate == gate {
			return k
		}
	}
	return ownedKind{gate: gate, kind: gate, short: gate}
}

// ownedWorld is what the capabilities that own objects read beyond the
// profiles. Kueue's namespace and Argo CD's are bench namespaces (by index;
// -1 while the gate is off), so the profiles, and every figure made of them,
// stay those of the same run without these gates; the deletion phase
// unbinds the first namespace, so they are the last ones. With the
// placement decisions on, every bench namespace holds a Placement that
// chooses every cluster, and OCM's PlacementDecisions of it as OCM's
// placement controller writes them (none runs here).
type ownedWorld struct {
	gates              gates
	multiKueue, argoCD int
	placements         []*clusterv1beta1.Placement // by namespace index, once created
	decisions          [][]clusterv1beta1.PlacementDecision
	slicesPerPlacement int
	managerName        string
}

func newOwnedWorld(g gates, clusters, namespaces int) ownedWorld {
	o := ownedWorld{gates: g, multiKueue: -1, argoCD: -1, managerName: clusterprofile.DefaultManagerName,
		slicesPerPlacement: max(1, (clusters+placementdecision.MaxDecisionsPerSlice-1)/placementdecision.MaxDecisionsPerSlice)}
	if g["multikueue"] {
		o.multiKueue = consumerNamespace(namespaces, 0)
	}
	if g["argocd"] {
		o.argoCD = consumerNamespace(namespaces, 1)
	}
	return o
}

// consumerNamespace is the index of the bench namespace that plays the
// fromEnd-th consumer's (counted from the last namespace), or the last one
// when there are too few to leave the first alone.
func consumerNamespace(namespaces, fromEnd int) int {
	if i := namespaces - 1 - fromEnd; i >= 1 {
		return i
	}
	return namespaces - 1
}

// ownedKindsOn are the owned kinds of the capabilities the run turns on.
func (o ownedWorld) ownedKindsOn() []ownedKind {
	var on []ownedKind
	for _, k := range ownedKinds {
		if o.gates[k.gate] {
			on = append(on, k)
		}
	}
	return on
}

// objects is how many objects the gate's capability must keep in a world of
// clusters × namespaces.
func (o ownedWorld) objects(gate string, clusters, namespaces int) int {
	switch {
	case !o.gates[gate]:
		return 0
	case gate == "placementdecision":
		return namespaces * o.slicesPerPlacement
	default: // a MultiKueueCluster or cluster Secret per profile of one namespace
		return clusters
	}
}

// managerFlags are the manager's flags for the capabilities that own
// objects: where Kueue and Argo CD are, and the entry Argo CD's cluster
// Secrets use.
func (w *world) managerFlags() []string {
	var flags []string
	if i := w.owned.multiKueue; i >= 0 {
		flags = append(flags, "--multikueue-namespace="+w.namespaces[i])
	}
	if i := w.owned.argoCD; i >= 0 {
		flags = append(flags, "--argocd-namespace="+w.namespaces[i], "--argocd-access-provider="+w.bundle.gates.argoCDEntryName())
	}
	return flags
}

// describeOwned says where the capabilities that own objects find what
// they read; "" when none runs.
func (w *world) describeOwned() string {
	var parts []string
	if i := w.owned.multiKueue; i >= 0 {
		parts = append(parts, "Kueue's namespace "+w.namespaces[i])
	}
	if i := w.owned.argoCD; i >= 0 {
		parts = append(parts, fmt.Sprintf("Argo CD's namespace %s (entry %s)", w.namespaces[i], w.bundle.gates.argoCDEntryName()))
	}
	if w.owned.gates["placementdecision"] {
		parts = append(parts, fmt.Sprintf("a Placement per namespace choosing all %d clusters, in %d of OCM's PlacementDecisions",
			len(w.clusters), w.owned.slicesPerPlacement))
	}
	return strings.Join(parts, "; ")
}

// createOwned makes the Placements and OCM's decisions of them.
func (w *world) createOwned(ctx context.Context, c client.Client) error {
	if !w.owned.gates["placementdecision"] {
		return nil
	}
	names := make([]string, len(w.clusters))
	for i, cluster := range w.clusters {
		names[i] = cluster.Name
	}
	w.owned.placements = make([]*clusterv1beta1.Placement, len(w.namespaces))
	w.owned.decisions = make([][]clusterv1beta1.PlacementDecision, len(w.namespaces))
	return forEach(ctx, setupWorkers, len(w.namespaces), func(ctx context.Context, i int) error {
		p, err := createPlacement(ctx, c, w.namespaces[i], len(names))
		if err != nil {
			return err
		}
		w.owned.placements[i] = p
		for _, d := range ocmDecisions(p, names) {
			err := createWithStatus(ctx, c, d.DeepCopy(), func(o *clusterv1beta1.PlacementDecision) { o.Status = d.Status })
			if err != nil {
				return err
			}
			w.owned.decisions[i] = append(w.owned.decisions[i], *d)
		}
		return nil
	})
}

// createPlacement creates the namespace's Placement, with the status OCM's
// placement controller writes once it has chosen that many clusters.
func createPlacement(ctx context.Context, c client.Client, namespace string, chosen int) (*clusterv1beta1.Placement, error) {
	p := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: placementName},
		Spec:       clusterv1beta1.PlacementSpec{ClusterSets: []string{setName}},
	}
	err := createWithStatus(ctx, c, p, func(p *clusterv1beta1.Placement) {
		p.Status.NumberOfSelectedClusters = int32(chosen)
		meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: clusterv1beta1.PlacementConditionSatisfied,
			Status: metav1.ConditionTrue, Reason: "AllDecisionsScheduled", Message: "All cluster decisions scheduled"})
	})
	return p, err
}

// ocmDecisions are OCM's PlacementDecisions of a Placement that chose
// clusters: placementdecision.MaxDecisionsPerSlice to each (OCM's own
// default), named <placement>-decision-<n>, labelled with the Placement and
// decision group 0, and controlled by the Placement.
func ocmDecisions(p *clusterv1beta1.Placement, clusters []string) []*clusterv1beta1.PlacementDecision {
	var out []*clusterv1beta1.PlacementDecision
	for start := 0; start == 0 || start < len(clusters); start += placementdecision.MaxDecisionsPerSlice {
		chunk := clusters[start:min(start+placementdecision.MaxDecisionsPerSlice, len(clusters))]
		d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{
			Namespace: p.Namespace, Name: fmt.Sprintf("%s-decision-%d", p.Name, len(out)+1),
			Labels: map[string]string{clusterv1beta1.PlacementLabel: p.Name, clusterv1beta1.DecisionGroupIndexLabel: "0",
				clusterv1beta1.DecisionGroupNameLabel: ""},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1beta1.GroupVersion.String(), Kind: "Placement",
				Name: p.Name, UID: p.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		}}
		d.Status.Decisions = make([]clusterv1beta1.ClusterDecision, 0, len(chunk))
		for _, name := range chunk {
			d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: name})
		}
		out = append(out, d)
	}
	return out
}

// wantMultiKueue is the MultiKueueCluster of every cluster, by the key the
// owned observer gives it (Kueue's namespace and its name).
func (w *world) wantMultiKueue() map[types.NamespacedName]string {
	want := map[types.NamespacedName]string{}
	if w.owned.multiKueue < 0 {
		return want
	}
	for _, c := range w.clusters {
		u := multikueue.DesiredCluster(c.Name, true, w.owned.managerName)
		want[types.NamespacedName{Namespace: w.namespaces[w.owned.multiKueue], Name: c.Name}] = multiKueueDigest(u.GetLabels(), u.Object["spec"])
	}
	return want
}

// wantArgoCD is the cluster Secret of every profile in Argo CD's namespace.
func (w *world) wantArgoCD() map[types.NamespacedName]string {
	want := map[types.NamespacedName]string{}
	if w.owned.argoCD < 0 {
		return want
	}
	ns := w.namespaces[w.owned.argoCD]
	for _, c := range w.clusters {
		s := w.argoCDSecret(ns, c, "")
		want[client.ObjectKeyFromObject(s)] = secretDigest(s)
	}
	return want
}

// argoCDSecret is the cluster Secret of cluster's profile in namespace, the
// profile's UID uid: what the integration writes, by its own function.
func (w *world) argoCDSecret(namespace string, cluster *clusterv1.ManagedCluster, uid types.UID) *corev1.Secret {
	meta, status := w.profileWrites(namespace, cluster.Name)
	profile := &cpv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: cluster.Name, Labels: meta.Labels, UID: uid},
		Status:     cpv1alpha1.ClusterProfileStatus{Properties: status.Properties},
	}
	identity := accessprovider.DirectIdentity(accessprovider.DefaultDirectEntryName)
	if w.bundle.gates["proxy"] {
		identity = accessprovider.ProxyIdentity
	}
	entry := w.accessStatus(identity, namespace, cluster).AccessProviders[0]
	settings := argocd.Settings{ManagerName: w.owned.managerName, Namespace: namespace, AccessProvider: entry.Name}.WithDefaults()
	s, err := argocd.DesiredSecret(profile, true, &entry, settings)
	if err != nil {
		panic(err) // encoding a config of strings and bytes
	}
	return s
}

// wantSlices are the slices of every namespace's Placement.
func (w *world) wantSlices() map[types.NamespacedName]string {
	want := map[types.NamespacedName]string{}
	for i, p := range w.owned.placements {
		for _, s := range w.owned.slices(p, w.owned.decisions[i]) {
			want[client.ObjectKeyFromObject(s)] = sliceDigest(s.Labels, s.Decisions, s.SchedulerName)
		}
	}
	return want
}

// slices are the PlacementDecision slices of placement, which chose what
// decisions (OCM's) say: every reference resolves, so none is left out.
func (o ownedWorld) slices(placement *clusterv1beta1.Placement, decisions []clusterv1beta1.PlacementDecision) []*cpv1alpha1.PlacementDecision {
	return placementdecision.DesiredSlices(placementdecision.World{Placement: placement, Decisions: decisions,
		Published: true, LeftOut: map[string]string{}, ManagerName: o.managerName}).Slices
}

// ownedIn is how many owned objects belong to namespace: those the
// capabilities delete when it no longer publishes the profiles.
func (w *world) ownedIn(namespace string) int {
	n := 0
	for _, k := range w.owned.ownedKindsOn() {
		switch {
		case k.gate == "placementdecision":
			n += w.owned.slicesPerPlacement
		case k.gate == "multikueue" && w.namespaces[w.owned.multiKueue] == namespace,
			k.gate == "argocd" && w.namespaces[w.owned.argoCD] == namespace:
			n += len(w.clusters)
		}
	}
	return n
}
