package hubmanager

import (
	"context"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"

	"open-cluster-management.io/clusterprofile-bundle/pkg/installcheck"
	"open-cluster-management.io/clusterprofile-bundle/pkg/metrics"
)

// DefaultAdmissionPoliciesCheckPeriod is how often the manager compares the
// release's admission policies with the chart's rendering.
const DefaultAdmissionPoliciesCheckPeriod = time.Minute

// admissionPolicyCheck compares, at start and then every period, the
// release's live admission policies and bindings with those the chart
// rendered (the file the chart mounts), with the comparison `helm test`
// runs (installcheck.CheckPolicies), and sets the admission policy gauges.
// The file is read at every check, so an upgrade's new expectations count
// as soon as the kubelet has updated the mounted ConfigMap. Every replica
// checks, not only the leader: the reads are a few GETs by name, and a
// standby's gauges are as true as the leader's.
type admissionPolicyCheck struct {
	file   string
	period time.Duration
	get    installcheck.Getter
	// reported is what was last logged (once logged is set), so that an
	// unchanged outcome is logged once, not every period.
	reported []string
	logged   bool
}

func (c *admissionPolicyCheck) NeedLeaderElection() bool { return false }

func (c *admissionPolicyCheck) Start(ctx context.Context) error {
	log := ctrl.Log.WithName("admission-policies")
	wait.UntilWithContext(ctx, func(ctx context.Context) { c.check(ctx, log) }, c.period)
	return nil
}

func (c *admissionPolicyCheck) check(ctx context.Context, log logr.Logger) {
	readCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	problems := c.problems(readCtx)
	if ctx.Err() != nil {
		// Stopping: reads cancelled mid-check prove nothing.
		return
	}
	metrics.SetAdmissionPolicyProblems(len(problems))
	if c.logged && slices.Equal(problems, c.reported) {
		return
	}
	c.reported, c.logged = problems, true
	if len(problems) == 0 {
		log.Info("The release's admission policies and bindings exist as the chart rendered them")
		return
	}
	log.Info("The release's admission policies and bindings are not as the chart rendered them: "+
		"they no longer enforce what the chart promises (helm upgrade restores them)", "problems", problems)
}

// problems returns one line per missing, altered or unreadable object, or
// the reason the expected ones cannot be read.
func (c *admissionPolicyCheck) problems(ctx context.Context) []string {
	expected, err := installcheck.ReadPoliciesFile(c.file)
	if err != nil {
		return []string{err.Error()}
	}
	return installcheck.ProblemLines(installcheck.CheckPolicies(ctx, c.get, expected))
}
