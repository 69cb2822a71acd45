package placementdecision

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// World is what one Placement's slices follow.
type World struct {
	// Placement is the Placement; nil when it is gone or being deleted.
	Placement *clusterv1beta1.Placement
	// Decisions are OCM's PlacementDecisions the Placement controls, in
	// any order.
	Decisions []clusterv1beta1.PlacementDecision
	// Published tells whether the Placement's namespace publishes profiles
	// at all (a binding there publishes a set, and it is no cluster's own).
	Published bool
	// LeftOut holds, for each chosen cluster whose profile a reference
	// would not find in the namespace, why (LeftOutUnpublished,
	// LeftOutNoProfile).
	LeftOut map[string]string
	// ManagerName is the cluster manager's name, labelled on every slice.
	ManagerName string
}

// Desired is what one Placement needs: its slices, and the chosen clusters
// they leave out, sorted, by reason.
type Desired struct {
	Slices  []*cpv1alpha1.PlacementDecision
	LeftOut map[string][]string
}

// DesiredSlices returns the Placement's slices: OCM's decisions in OCM's
// order, each referencing the cluster's profile in the Placement's
// namespace, without the clusters in LeftOut, MaxDecisionsPerSlice to a
// slice. A Placement that chose nothing (or nothing that resolves) gets one
// empty slice, as OCM writes one empty PlacementDecision: consumers see
// "no cluster", not "no decision". A Placement that is gone, or whose
// namespace publishes no profile, gets none.
func DesiredSlices(w World) Desired {
	if w.Placement == nil || !w.Published || !Nameable(w.Placement.Name) {
		return Desired{}
	}
	var decisions []cpv1alpha1.ClusterDecision
	leftOut := map[string][]string{}
	for _, chosen := range ChosenClusters(w.Decisions) {
		if why, out := w.LeftOut[chosen.ClusterName]; out {
			leftOut[why] = append(leftOut[why], chosen.ClusterName)
			continue
		}
		decisions = append(decisions, cpv1alpha1.ClusterDecision{
			ClusterProfileRef: cpv1alpha1.ClusterProfileReference{Name: chosen.ClusterName, Namespace: w.Placement.Namespace},
			Reason:            chosen.Reason,
		})
	}
	chunks := slices.Collect(slices.Chunk(decisions, MaxDecisionsPerSlice))
	if len(chunks) == 0 {
		chunks = [][]cpv1alpha1.ClusterDecision{{}}
	}
	out := Desired{LeftOut: leftOut}
	for i, chunk := range chunks {
		out.Slices = append(out.Slices, slice(w.Placement, w.ManagerName, i, chunk))
	}
	for _, clusters := range leftOut {
		slices.Sort(clusters)
	}
	return out
}

// ChosenClusters returns the clusters OCM's decisions name, in OCM's order
// (decision group, then the number OCM gives each PlacementDecision), each
// once; an empty decision (not scheduled yet) names none.
func ChosenClusters(decisions []clusterv1beta1.PlacementDecision) []clusterv1beta1.ClusterDecision {
	ordered := slices.Clone(decisions)
	slices.SortFunc(ordered, func(a, b clusterv1beta1.PlacementDecision) int {
		return cmp.Or(
			cmp.Compare(number(a.Labels[clusterv1beta1.DecisionGroupIndexLabel]), number(b.Labels[clusterv1beta1.DecisionGroupIndexLabel])),
			cmp.Compare(sliceNumber(a.Name), sliceNumber(b.Name)),
			cmp.Compare(a.Name, b.Name))
	})
	var chosen []clusterv1beta1.ClusterDecision
	seen := map[string]bool{}
	for _, pd := range ordered {
		for _, d := range pd.Status.Decisions {
			if d.ClusterName == "" || seen[d.ClusterName] {
				continue
			}
			seen[d.ClusterName] = true
			chosen = append(chosen, d)
		}
	}
	return chosen
}

// Nameable tells whether a Placement's name can key its slices: it is a
// label value (placement-key), as OCM's own PlacementDecisions need it to
// be (OCM labels them with it), so a Placement whose name is not one has no
// decisions to publish.
func Nameable(placement string) bool {
	return len(validation.IsValidLabelValue(placement)) == 0
}

// SliceName is the name of a Placement's slice number index (from 0).
func SliceName(placement string, index int) string {
	return placement + nameInfix + strconv.Itoa(index+1)
}

// slice is one of a Placement's slices: KEP-5313's labels (decision-key the
// Placement's UID, so a Placement made again under the same name starts a
// new decision; decision-index its position; placement-key its name), the
// cluster manager's label, and the Placement as controlling owner, so the
// garbage collector deletes it with the Placement.
func slice(placement *clusterv1beta1.Placement, managerName string, index int, decisions []cpv1alpha1.ClusterDecision) *cpv1alpha1.PlacementDecision {
	return &cpv1alpha1.PlacementDecision{
		TypeMeta: metav1.TypeMeta{APIVersion: cpv1alpha1.GroupVersion.String(), Kind: "PlacementDecision"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      SliceName(placement.Name, index),
			Namespace: placement.Namespace,
			Labels: map[string]string{
				cpv1alpha1.LabelClusterManagerKey: managerName,
				cpv1alpha1.DecisionKeyLabel:       string(placement.UID),
				cpv1alpha1.DecisionIndexLabel:     strconv.Itoa(index),
				cpv1alpha1.PlacementKeyLabel:      placement.Name,
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1beta1.GroupVersion.String(), Kind: "Placement",
				Name: placement.Name, UID: placement.UID, Controller: ptr.To(true),
			}},
		},
		Decisions:     slices.Clip(append([]cpv1alpha1.ClusterDecision{}, decisions...)),
		SchedulerName: SchedulerName,
	}
}

// number reads a label's number; a missing or malformed one sorts first.
func number(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// sliceNumber reads the number OCM ends a PlacementDecision's name with
// (<placement>-decision-<n>).
func sliceNumber(name string) int {
	i := strings.LastIndex(name, nameInfix)
	if i < 0 {
		return -1
	}
	return number(name[i+len(nameInfix):])
}
