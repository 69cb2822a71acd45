package coexistence

import (
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
)

// DefaultUpstreamNamespace is where OCM installs its addons' hub managers
// (`clusteradm install hub-addon`, and the addons' charts by default).
const DefaultUpstreamNamespace = "open-cluster-management-addon"

// Twin is an upstream component that can run the twin of one of this
// bundle's capabilities: the same ClusterProfile writer behind a feature
// gate of its own manager. A Deployment of its name is a claim anyone who
// may create Deployments can make; it counts only where a hub admin
// installed it (see Trust and Verdict).
type Twin struct {
	// Capability names the bundle's capability in logs, Events and the
	// yielding_to_upstream metric.
	Capability string
	// Component names the upstream component in messages.
	Component string
	// Deployment is the name of its manager Deployment.
	Deployment string
	// AddOn is the ClusterManagementAddOn its installation creates
	// (cluster-scoped: only a hub admin makes one).
	AddOn string
	// Gates turn its ClusterProfile writer on (the older name in OCM's
	// guide, the newer one in its latest charts).
	Gates []string
}

// ClusterProxyWriter is cluster-proxy's own writer of the
// open-cluster-management entry (helm featureGates.clusterProfileAccessProvider,
// newer featureGates.clusterProfile).
var ClusterProxyWriter = Twin{Capability: "access-proxy", Component: "cluster-proxy",
	Deployment: "cluster-proxy-addon-manager", AddOn: "cluster-proxy", Gates: []string{"ClusterProfileAccessProvider", "ClusterProfile"}}

// ManagedServiceAccountSyncer is managed-serviceaccount's own token syncer
// (helm featureGates.clusterProfileCredSyncer, newer featureGates.clusterProfile).
var ManagedServiceAccountSyncer = Twin{Capability: "credsync", Component: "managed-serviceaccount",
	Deployment: "managed-serviceaccount-addon-manager", AddOn: "managed-serviceaccount",
	Gates: []string{"ClusterProfileCredSyncer", "ClusterProfile"}}

// Trust says which Deployments of a twin's name a hub admin installed: those
// in the namespaces upstream components are installed into, which only hub
// admins may write (the chart's coexistence.upstreamNamespaces).
type Trust struct {
	// Namespaces are the upstream namespaces (DefaultUpstreamNamespace when
	// empty).
	Namespaces []string
	// ReportDecoys also watches Deployments of a twin's name in every other
	// namespace, to report them as ignored (it needs the right to read them
	// there); they are ignored either way.
	ReportDecoys bool
}

// namespaces are the upstream namespaces, with the default filled in.
func (t Trust) namespaces() []string {
	if len(t.Namespaces) == 0 {
		return []string{DefaultUpstreamNamespace}
	}
	return t.Namespaces
}

// Verdict is what a Deployment of a twin's name means to the bundle.
type Verdict string

const (
	// NotRunning: it does not run the twin's writer (gate off, scaled to
	// zero, being deleted, another name).
	NotRunning Verdict = ""
	// Running: the twin's writer runs, installed by a hub admin; the
	// capability yields to it.
	Running Verdict = "Running"
	// DecoyNamespace: it would run the writer, but lives outside the
	// upstream namespaces, where anyone who may create Deployments there
	// could have made it. Ignored.
	DecoyNamespace Verdict = "namespace"
	// DecoyNoAddOn: it would run the writer in an upstream namespace, but
	// the twin's ClusterManagementAddOn does not exist, so no installation
	// of that component made it. Ignored.
	DecoyNoAddOn Verdict = "addon"
)

// Judge tells what d means: whether it runs the twin's writer and, if so,
// whether a hub admin installed it (trust's namespaces, and the twin's
// ClusterManagementAddOn exists: addOnInstalled).
func (t Twin) Judge(d *appsv1.Deployment, trust Trust, addOnInstalled bool) Verdict {
	switch {
	case !t.EnabledBy(d):
		return NotRunning
	case !slices.Contains(trust.namespaces(), d.Namespace):
		return DecoyNamespace
	case !addOnInstalled:
		return DecoyNoAddOn
	}
	return Running
}

// EnabledBy tells whether d would run the twin: it is the twin's
// Deployment, not being deleted, not scaled to zero, and a container's
// arguments turn one of the twin's gates on. Where d lives is Judge's.
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
