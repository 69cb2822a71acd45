package doctor

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/duration"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// Summary is one line of `kubectl clusterprofile get`.
type Summary struct {
	Cluster    string   `json:"cluster"`
	ClusterSet string   `json:"clusterSet,omitempty"`
	Version    string   `json:"version,omitempty"`
	Healthy    string   `json:"healthy"`
	Providers  []string `json:"providers,omitempty"`
	// TokenExpiry is, per ManagedServiceAccount, when its copy's token expires
	// ("unknown" when the copy carries no expiry).
	TokenExpiry map[string]string `json:"tokenExpiry,omitempty"`
}

// Summarize lists the profiles with their token copies. copies are the
// Secrets of the namespace; only synced copies (cpcreds.CopySource) count,
// and only those of msa when it is set.
func Summarize(profiles []cpv1alpha1.ClusterProfile, copies []corev1.Secret, msa string) []Summary {
	expiries := map[string]map[string]string{}
	for i := range copies {
		cluster, source, ok := cpcreds.CopySource(&copies[i])
		if !ok || (msa != "" && source != msa) {
			continue
		}
		if expiries[cluster] == nil {
			expiries[cluster] = map[string]string{}
		}
		expiry := copies[i].Annotations[cpcreds.AnnotationTokenExpiration]
		if expiry == "" {
			expiry = "unknown"
		}
		expiries[cluster][source] = expiry
	}
	out := make([]Summary, 0, len(profiles))
	for i := range profiles {
		p := &profiles[i]
		s := Summary{Cluster: p.Name, ClusterSet: p.Labels[clusterprofile.LabelClusterSet],
			Version: p.Status.Version.Kubernetes, Healthy: "Unknown", TokenExpiry: expiries[p.Name]}
		if c := meta.FindStatusCondition(p.Status.Conditions, cpv1alpha1.ClusterConditionControlPlaneHealthy); c != nil {
			s.Healthy = string(c.Status)
		}
		for _, e := range p.Status.AccessProviders {
			s.Providers = append(s.Providers, e.Name)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	return out
}

// PrintSummaries writes the `get` table; token expiries are shown relative
// to now as well, since "in 5m" is what one needs to see.
func PrintSummaries(w io.Writer, summaries []Summary, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tSET\tVERSION\tHEALTHY\tPROVIDERS\tTOKEN EXPIRY")
	for _, s := range summaries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Cluster, orNone(s.ClusterSet), orNone(s.Version), s.Healthy,
			orNone(strings.Join(s.Providers, ",")), orNone(tokenExpiries(s.TokenExpiry, now)))
	}
	return tw.Flush()
}

func tokenExpiries(byMSA map[string]string, now time.Time) string {
	var parts []string
	for msa, value := range byMSA {
		if t, err := time.Parse(time.RFC3339, value); err == nil {
			value = fmt.Sprintf("%s (%s)", value, relative(t.Sub(now)))
		}
		parts = append(parts, msa+"="+value)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func relative(d time.Duration) string {
	if d <= 0 {
		return "expired"
	}
	return "in " + duration.HumanDuration(d)
}
