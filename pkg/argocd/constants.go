package argocd

import (
	"time"

	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
)

const (
	// FieldManager owns what this capability writes on Argo CD's cluster
	// Secrets.
	FieldManager = fieldmanager.Prefix + "argocd"

	// ControllerName names the controller in logs and metrics, and signs
	// its Events.
	ControllerName = "clusterprofile-argocd"

	// LabelSecretType marks a Secret as one of Argo CD's declarative
	// cluster Secrets.
	LabelSecretType = "argocd.argoproj.io/secret-type"
	// SecretTypeCluster is LabelSecretType's value for a cluster.
	SecretTypeCluster = "cluster"

	// LabelCreatedBy marks the cluster Secrets this capability writes, with
	// the cluster manager's name as value. A label is a claim anyone who
	// may create Secrets there can make: a Secret counts as ours only when
	// our field manager wrote it too (checked before every write).
	LabelCreatedBy = "clusterprofile.open-cluster-management.io/argocd"

	// SecretPrefix starts the name of the cluster Secret of each profile:
	// cluster-<profile name>, as the argoproj-labs integration names them.
	SecretPrefix = "cluster-"

	// The keys of an Argo CD cluster Secret.
	KeyName    = "name"
	KeyServer  = "server"
	KeyConfig  = "config"
	KeyProject = "project"

	// ExecAPIVersion is the ExecCredential version cp-creds speaks.
	ExecAPIVersion = "client.authentication.k8s.io/v1"

	// statusSettle is the longest a new profile's cluster Secret waits for
	// the standard properties (awaitProperties), counted from the profile's
	// creationTimestamp. The wait ends as soon as they show, which in a cold
	// start of tens of thousands of profiles can be tens of seconds after
	// the create; it runs out only when none come (profiles another mirror
	// writes).
	statusSettle = time.Minute
)

// Defaults of the capability's settings (the chart's argocd.* values).
const (
	// DefaultNamespace is Argo CD's namespace in its own install manifests.
	DefaultNamespace = "argocd"
	// DefaultManagedServiceAccount names the ManagedServiceAccount whose
	// token Argo CD uses on every cluster.
	DefaultManagedServiceAccount = "argocd"
	// DefaultAccessProvider is the entry the cluster Secrets reach the
	// clusters through: cluster-proxy's user server (the name of
	// pkg/accessprovider's proxy entry, which a capability does not import).
	DefaultAccessProvider = "open-cluster-management"
	// DefaultCpCredsPath is where Argo CD's pods find cp-creds: the shared
	// volume the documented initContainer copies it into.
	DefaultCpCredsPath = "/plugins/cp-creds"
)

// Event reasons.
const (
	// ReasonNameTaken: a Secret this capability did not write holds the
	// name of a profile's cluster Secret; it is left alone.
	ReasonNameTaken = "ArgoCDClusterSecretNameTaken"
	// ReasonNoEntry: the profile is published, but the access provider the
	// cluster Secrets use writes no entry for it (its gate off, or waiting).
	ReasonNoEntry = "ArgoCDClusterAccessProviderMissing"

	actionArgoCD = "ArgoCD"
)
