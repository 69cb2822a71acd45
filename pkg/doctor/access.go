package doctor

import (
	"errors"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"net/url"
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
	// Withheld names the failed checks for which the doctor did not run the
	// plugin at all: it sends no token to what it found wrong.
	Withheld []string
}

func checkConnection(c Connection) []string {
	if len(c.Withheld) > 0 {
		return []string{fmt.Sprintf("Not connected: the checks %s failed, and the doctor sends the token only to a profile and an entry that pass them.",
			strings.Join(c.Withheld, ", "))}
	}
	if c.Err == nil {
		return nil
	}
	cause := c.Err
	// client-go wraps transport failures in the request's URL, which says
	// nothing the server does not.
	var urlErr *url.Error
	if errors.As(cause, &urlErr) {
		cause = urlErr.Err
	}
	msg := strings.Join(strings.Fields(cause.Error()), " ")
	server := strings.TrimSuffix(c.Server, "/")
	switch {
	case strings.Contains(msg, "getting credentials"):
		return []string{fmt.Sprintf("The exec plugin failed (%s): its own line on stderr above says what to fix.", msg)}
	case c.Server == "":
		return []string{fmt.Sprintf("No rest.Config could be built the way a consumer builds it (%s): fix the checks above.", msg)}
	case apierrors.IsUnauthorized(c.Err):
		return []string{fmt.Sprintf("%s rejected the token (401 Unauthorized): the copied ManagedServiceAccount token is not valid on the managed cluster; check the ManagedServiceAccount and its agent there.", server)}
	}
	return []string{fmt.Sprintf("Calling %s/version failed (%s): check that the server is reachable from where the consumer runs and that the token is accepted there.", server, msg)}
}
