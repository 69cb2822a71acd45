package main

import (
	"fmt"
	"slices"
	"strings"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/features"
)

// gate is one capability the benchmark can turn on, by its short name.
type gate struct {
	name    string
	feature string
}

// allGates are the manager's capabilities in the order they are reported.
var allGates = []gate{
	{"mirror", string(features.ClusterProfile)},
	{"proxy", string(features.ClusterProfileAccessProvider)},
	{"direct", string(features.ClusterProfileDirectAccess)},
	{"credsync", string(features.ClusterProfileCredSyncer)},
	{"agent", string(features.ClusterProfileAgent)},
	{"multikueue", string(features.ClusterProfileMultiKueue)},
	{"argocd", string(features.ClusterProfileArgoCD)},
	{"placementdecision", string(features.ClusterProfilePlacementDecision)},
}

// gates is the set of capabilities a run turns on; the mirror is always on.
type gates map[string]bool

// parseGates reads "all" or a comma-separated list of short names. The
// Argo CD integration writes a cluster Secret only for a cluster an access
// provider publishes an entry for: without the proxy, the direct entry
// comes with it.
func parseGates(value string) (gates, error) {
	g := gates{"mirror": true}
	if value == "all" {
		for _, each := range allGates {
			g[each.name] = true
		}
		return g, nil
	}
	for name := range strings.SplitSeq(value, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.ContainsFunc(allGates, func(each gate) bool { return each.name == name }) {
			return nil, fmt.Errorf("unknown gate %q (known: all, %s)", name, strings.Join(gateNames(), ", "))
		}
		g[name] = true
	}
	if g["argocd"] && !g["proxy"] {
		g["direct"] = true
	}
	return g, nil
}

// argoCDEntryName is the entry Argo CD's cluster Secrets reach the clusters
// through: cluster-proxy's when the proxy runs (the integration's default),
// else the direct one.
func (g gates) argoCDEntryName() string {
	if g["proxy"] {
		return accessprovider.ProxyEntryName
	}
	return accessprovider.DefaultDirectEntryName
}

func gateNames() []string {
	names := make([]string, 0, len(allGates))
	for _, each := range allGates {
		names = append(names, each.name)
	}
	return names
}

// featureGates is the manager's --feature-gates value.
func (g gates) featureGates() string {
	var on []string
	for _, each := range allGates {
		if g[each.name] {
			on = append(on, each.feature+"=true")
		}
	}
	return strings.Join(on, ",")
}

// String lists the gates that are on, in report order.
func (g gates) String() string {
	var on []string
	for _, each := range allGates {
		if g[each.name] {
			on = append(on, each.name)
		}
	}
	return strings.Join(on, "+")
}
