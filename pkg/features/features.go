// Package features declares the feature gates of clusterprofile-manager.
//
// Gate names follow OCM's, so that the flags users already type for the
// registration hub (`--feature-gates=ClusterProfile=true`) work here too.
package features

import (
	"maps"
	"slices"

	"k8s.io/component-base/featuregate"
)

const (
	// ClusterProfile publishes every ManagedCluster as a ClusterProfile in the
	// namespaces bound to a set that contains it.
	ClusterProfile featuregate.Feature = "ClusterProfile"

	// ClusterProfileAccessProvider writes the open-cluster-management access
	// provider entry, through cluster-proxy's user server (the name OCM's
	// guide uses for the cluster-proxy addon's gate).
	ClusterProfileAccessProvider featuregate.Feature = "ClusterProfileAccessProvider"

	// ClusterProfileDirectAccess writes a second entry that reaches the
	// cluster's API server directly, from its registered client config.
	ClusterProfileDirectAccess featuregate.Feature = "ClusterProfileDirectAccess"

	// ClusterProfileCredSyncer copies ManagedServiceAccount tokens next to
	// the ClusterProfiles of their cluster, for cp-creds (the name of the
	// managed-serviceaccount addon's gate in OCM's guide).
	ClusterProfileCredSyncer featuregate.Feature = "ClusterProfileCredSyncer"

	// ClusterProfileAgent deploys the cluster-profile-agent addon on every
	// managed cluster and folds its control plane and node health into the
	// profiles.
	ClusterProfileAgent featuregate.Feature = "ClusterProfileAgent"

	// ClusterProfileMultiKueue keeps a Kueue MultiKueueCluster for every
	// profile published in Kueue's namespace (kueue issue 7716).
	ClusterProfileMultiKueue featuregate.Feature = "ClusterProfileMultiKueue"

	// ClusterProfileArgoCD keeps an Argo CD cluster Secret for every
	// profile published in Argo CD's namespace.
	ClusterProfileArgoCD featuregate.Feature = "ClusterProfileArgoCD"

	// ClusterProfilePlacementDecision publishes each OCM Placement's
	// decisions in the Cluster Inventory format (KEP-5313), referencing only
	// the profiles published in the Placement's namespace.
	ClusterProfilePlacementDecision featuregate.Feature = "ClusterProfilePlacementDecision"
)

var defaultFeatureGates = map[featuregate.Feature]featuregate.FeatureSpec{
	ClusterProfile:                  {Default: false, PreRelease: featuregate.Alpha},
	ClusterProfileAccessProvider:    {Default: false, PreRelease: featuregate.Alpha},
	ClusterProfileDirectAccess:      {Default: false, PreRelease: featuregate.Alpha},
	ClusterProfileCredSyncer:        {Default: false, PreRelease: featuregate.Alpha},
	ClusterProfileAgent:             {Default: false, PreRelease: featuregate.Alpha},
	ClusterProfileMultiKueue:        {Default: false, PreRelease: featuregate.Alpha},
	ClusterProfileArgoCD:            {Default: false, PreRelease: featuregate.Alpha},
	ClusterProfilePlacementDecision: {Default: false, PreRelease: featuregate.Alpha},
}

// All are the manager's features, in name order.
func All() []featuregate.Feature {
	all := slices.Collect(maps.Keys(defaultFeatureGates))
	slices.Sort(all)
	return all
}

// NewGate returns a fresh gate that knows every feature of the manager, all at
// their defaults. Each process (and each test) gets its own, so nothing
// depends on package-level mutable state.
func NewGate() featuregate.MutableFeatureGate {
	gate := featuregate.NewFeatureGate()
	if err := gate.Add(defaultFeatureGates); err != nil {
		// Only a programming error (a duplicate name above) can get here.
		panic(err)
	}
	return gate
}
