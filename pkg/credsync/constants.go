package credsync

import (
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/fieldmanager"
)

const (
	// ControllerName names the syncer in logs and metrics.
	ControllerName = "clusterprofile-credsync"
	// FieldManager owns the synced Secrets' fields.
	FieldManager = fieldmanager.Prefix + "credsync"
	// MarksFieldManager owns the marks the syncer puts on the copies
	// managed-serviceaccount's own syncer writes while this one yields to it:
	// a manager of its own, so applying the marks alone never gives up
	// FieldManager's fields.
	MarksFieldManager = FieldManager + "-marks"

	// LabelSyncToClusterProfile asks for a ManagedServiceAccount's token to be synced.
	LabelSyncToClusterProfile = cpcreds.LabelSyncToClusterProfile
	// LabelIsManagedServiceAccount marks the token Secrets the
	// managed-serviceaccount agent writes in cluster namespaces.
	LabelIsManagedServiceAccount = "authentication.open-cluster-management.io/is-managed-serviceaccount"
	// LabelSyncedFrom marks a synced copy (see cpcreds.SyncedFromValue).
	LabelSyncedFrom = cpcreds.LabelSyncedFrom

	// ReasonNameCollision: two cluster/ManagedServiceAccount pairs need the
	// same Secret name in one namespace, or another Secret holds it.
	ReasonNameCollision = "SyncedSecretNameCollision"
	// ReasonNameInvalid: <cluster>-<msa> is no valid Secret name (too long,
	// say), so the token cannot be copied under it.
	ReasonNameInvalid = "SyncedSecretNameInvalid"
	// ReasonUnscopedToken: a ManagedServiceAccount names no consumer
	// namespaces and unscoped tokens go everywhere, so every consumer
	// namespace serving its cluster holds its token.
	ReasonUnscopedToken = "UnscopedTokenCopied"
	// ReasonConsumerNamespacesInvalid: the consumer namespaces annotation
	// lists something that is no namespace name (a wildcard, say).
	ReasonConsumerNamespacesInvalid = "ConsumerNamespacesInvalid"
)
