package doctor

import (
	"fmt"
	"strings"
	"time"
)

// AccessReview is the answer to "may the consumer get the token copy?".
type AccessReview struct {
	// Subject is who was asked about: the --as identity, or "you".
	Subject string
	Secret  string
	Allowed bool
	Reason  string
	// Err is set when the review itself could not be made.
	Err error
}

func checkAccess(r AccessReview, namespace string) []string {
	switch {
	case r.Err != nil:
		return []string{fmt.Sprintf("Could not ask whether %s may get Secret %s/%s (%v): run the doctor as someone who may create SubjectAccessReviews, or leave --as out to check yourself.",
			r.Subject, namespace, r.Secret, r.Err)}
	case !r.Allowed:
		reason := ""
		if r.Reason != "" {
			reason = " (" + strings.TrimSuffix(r.Reason, ".") + ")"
		}
		who := "The consumer " + r.Subject
		if r.Subject == "you" {
			who = "You"
		}
		return []string{fmt.Sprintf("%s may not get Secret %s/%s%s: grant get on secrets in namespace %s with a Role and RoleBinding, or cp-creds fails in the consumer's pod.",
			who, namespace, r.Secret, reason, namespace)}
	}
	return nil
}

// Connection is what calling /version through the plugin gave.
type Connection struct {
	Server        string
	ServerVersion string
	Latency       time.Duration
	Err           error
}

func checkConnection(c Connection) []string {
	if c.Err == nil {
		return nil
	}
	msg := strings.Join(strings.Fields(c.Err.Error()), " ")
	if strings.Contains(msg, "getting credentials") {
		return []string{fmt.Sprintf("The exec plugin failed (%s): its own line on stderr above says what to fix.", msg)}
	}
	if c.Server == "" {
		return []string{fmt.Sprintf("No rest.Config could be built the way a consumer builds it (%s): fix the checks above.", msg)}
	}
	return []string{fmt.Sprintf("Calling %s/version failed (%s): check that the server is reachable from where the consumer runs and that the token is accepted there.", strings.TrimSuffix(c.Server, "/"), msg)}
}
