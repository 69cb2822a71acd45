package doctor

import (
	"open-cluster-management.io/clusterprofile-bundle/pkg/credsync"
)

// Check names, in the order a row lists them: the order in which a consumer
// depends on each step.
const (
	CheckProfiles  = "profiles"
	CheckProfile   = "profile"
	CheckEntry     = "entry"
	CheckServer    = "server"
	CheckCA        = "ca"
	CheckExtension = "extension"
	CheckToken     = "token"
	CheckPublished = "published"
	CheckAccess    = "access"
	CheckConnect   = "connect"
)

// trustChecks are the checks a row must pass before --connect runs the
// plugin for it: the doctor sends no token to a profile, an entry or a copy
// it found wrong.
var trustChecks = []string{CheckProfile, CheckEntry, CheckServer, CheckCA, CheckExtension, CheckToken, CheckPublished}

// DefaultExpiryMargin is how close to its expiry a token copy counts as
// "about to expire": the horizon of the syncer's expiring-soon metric and
// alert, so the doctor and on-call agree.
const DefaultExpiryMargin = credsync.ExpiringWithin

// DefaultPlugin is the exec plugin run with --connect unless --plugin names
// another: what consumers put in their exec config.
const DefaultPlugin = "cp-creds"
