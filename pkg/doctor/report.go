package doctor

import (
	"slices"
	"time"

	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// Check is one step a consumer depends on: passed, or failed with one
// sentence that says what to fix.
type Check struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	Fix  string `json:"fix,omitempty"`
}

// Row is the verdict on one cluster.
type Row struct {
	Cluster string `json:"cluster"`
	// Provider is the access entry a consumer with these providers would use.
	Provider string  `json:"provider,omitempty"`
	Checks   []Check `json:"checks"`
	// ServerVersion and Latency are what /version answered with --connect.
	ServerVersion string        `json:"serverVersion,omitempty"`
	Latency       time.Duration `json:"latencyNanoseconds,omitempty"`
	// Notes say who wrote what the row uses, where it is not this bundle
	// (while it yields to an upstream twin); they fail nothing.
	Notes []string `json:"notes,omitempty"`
}

// OK tells whether every check of the row passed.
func (r Row) OK() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// failed names the checks of the row among names that failed.
func (r Row) failed(names []string) []string {
	var out []string
	for _, c := range r.Checks {
		if !c.OK && slices.Contains(names, c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// Report is what `doctor` prints.
type Report struct {
	Namespace string `json:"namespace"`
	Rows      []Row  `json:"rows"`
	OK        bool   `json:"ok"`
	// Warnings are about the namespace as a whole (tokens other consumers
	// can use, say); they do not fail the report.
	Warnings []string `json:"warnings,omitempty"`
	// Mirror names the mirror that publishes the profiles, when the caller
	// may read ClusterManagers.
	Mirror string `json:"mirror,omitempty"`
}

// NewReport sums the rows up.
func NewReport(namespace string, rows []Row, warnings []string) Report {
	ok := len(rows) > 0
	for _, r := range rows {
		ok = ok && r.OK()
	}
	return Report{Namespace: namespace, Rows: rows, OK: ok, Warnings: warnings}
}

// Settings are what the checks compare against.
type Settings struct {
	Namespace             string
	Providers             []string
	ManagedServiceAccount string
	// ManagerName is the cluster manager whose profiles the bundle publishes.
	ManagerName  string
	ExpiryMargin time.Duration
	Now          time.Time
}

// Observed is what was read for one profile.
type Observed struct {
	Profile *cpv1alpha1.ClusterProfile
	Copy    CopyRead
	// Source is read only when the copy does not exist.
	Source CopySource
	Access AccessReview
	// Connect is nil unless --connect was given.
	Connect *Connection
}

// Diagnose is the row of one profile: every check, in order.
func Diagnose(o Observed, s Settings) Row {
	cluster := o.Profile.Name
	row := Row{Cluster: cluster}
	add := func(name string, fixes []string) {
		row.Checks = append(row.Checks, result(name, fixes))
	}
	add(CheckProfile, checkProfile(o.Profile, s.ManagerName))
	entry, fix := chooseEntry(o.Profile, s.Providers)
	if entry == nil {
		add(CheckEntry, []string{fix})
	} else {
		row.Provider = entry.Name
		add(CheckEntry, nil)
		add(CheckServer, checkServer(entry.Cluster.Server))
		add(CheckCA, checkCA(entry.Cluster.CertificateAuthorityData, s.Now))
		add(CheckExtension, checkExtension(entry, cluster))
	}
	tokenFixes := checkCopy(o.Copy, o.Source, cluster, s)
	add(CheckToken, tokenFixes)
	if entry != nil && len(tokenFixes) == 0 {
		add(CheckPublished, checkPublished(o.Copy.Secret, entry))
	}
	add(CheckAccess, checkAccess(o.Access, s.Namespace))
	row.Notes = slices.Concat(writerNotes(o.Profile, entry, o.Copy.Secret), agentNotes(o.Profile), idNotes(o.Profile))
	if o.Connect != nil {
		add(CheckConnect, checkConnection(*o.Connect))
		row.ServerVersion, row.Latency = o.Connect.ServerVersion, o.Connect.Latency
	}
	return row
}

// NoProfiles is the row when the namespace holds no profile at all.
func NoProfiles(namespace string) Row {
	return Row{Checks: []Check{result(CheckProfiles, []string{noProfilesFix(namespace)})}}
}

func result(name string, fixes []string) Check {
	if len(fixes) == 0 {
		return Check{Name: name, OK: true}
	}
	fix := fixes[0]
	for _, f := range fixes[1:] {
		fix += " " + f
	}
	return Check{Name: name, Fix: fix}
}
