package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// Doctor reads a consumer namespace on the hub and diagnoses each profile.
type Doctor struct {
	// Client reads the hub as the caller.
	Client   client.Client
	Settings Settings
	// Consumer is who must be able to read the token copies; nil means the
	// caller (a SelfSubjectAccessReview).
	Consumer *Identity
	// Connect, when set, also calls /version on every cluster through Plugin.
	Connect bool
	Plugin  Plugin
	Now     func() time.Time
}

// Identity is a user and its groups, as a SubjectAccessReview names them.
type Identity struct {
	User   string
	Groups []string
}

// Plugin is the exec plugin to run as a consumer would: Command with
// --managed-serviceaccount, and Env on top of the doctor's environment.
type Plugin struct {
	Command string
	Env     []clientcmdapi.ExecEnvVar
}

// Run diagnoses every profile in the namespace, sorted by cluster name. An
// error means the doctor could not look at all (the hub refused the list).
func (d *Doctor) Run(ctx context.Context) ([]Row, error) {
	list := &cpv1alpha1.ClusterProfileList{}
	if err := d.Client.List(ctx, list, client.InNamespace(d.Settings.Namespace)); err != nil {
		return nil, fmt.Errorf("listing ClusterProfiles in namespace %s: %w", d.Settings.Namespace, err)
	}
	if len(list.Items) == 0 {
		return []Row{NoProfiles(d.Settings.Namespace)}, nil
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	settings := d.Settings
	settings.Now = d.Now()
	rows := make([]Row, 0, len(list.Items))
	for i := range list.Items {
		o := d.observe(ctx, &list.Items[i])
		row := Diagnose(o, settings)
		if d.Connect {
			c := Connection{Withheld: row.failed(trustChecks)}
			if len(c.Withheld) == 0 {
				c = d.connect(ctx, &list.Items[i])
			}
			o.Connect = &c
			row = Diagnose(o, settings)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func (d *Doctor) observe(ctx context.Context, p *cpv1alpha1.ClusterProfile) Observed {
	name := cpcreds.SecretName(p.Name, d.Settings.ManagedServiceAccount)
	o := Observed{Profile: p, Access: d.review(ctx, name)}
	secret := &corev1.Secret{}
	if err := d.Client.Get(ctx, types.NamespacedName{Namespace: d.Settings.Namespace, Name: name}, secret); err != nil {
		o.Copy = CopyRead{Err: err}
		if apierrors.IsNotFound(err) {
			o.Source = d.readCopySource(ctx, p.Name)
		}
	} else {
		o.Copy = CopyRead{Secret: secret}
	}
	return o
}

// review asks the API server's authorizer whether the consumer may get the
// copy: the same answer cp-creds' GET will meet.
func (d *Doctor) review(ctx context.Context, secret string) AccessReview {
	attrs := &authorizationv1.ResourceAttributes{Namespace: d.Settings.Namespace, Verb: "get", Resource: "secrets", Name: secret}
	r := AccessReview{Subject: "you", Secret: secret}
	var status authorizationv1.SubjectAccessReviewStatus
	if d.Consumer == nil {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}}
		r.Err = d.Client.Create(ctx, review)
		status = review.Status
	} else {
		r.Subject = d.Consumer.User
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: attrs, User: d.Consumer.User, Groups: d.Consumer.Groups}}
		r.Err = d.Client.Create(ctx, review)
		status = review.Status
	}
	r.Allowed, r.Reason = status.Allowed, status.Reason
	return r
}

// ParseIdentity turns --as and --as-group into what a SubjectAccessReview
// needs: a service account's user name brings the groups its tokens carry.
func ParseIdentity(user string, groups []string) *Identity {
	if user == "" {
		return nil
	}
	id := &Identity{User: user, Groups: append([]string{}, groups...)}
	if rest, ok := strings.CutPrefix(user, "system:serviceaccount:"); ok {
		if ns, _, ok := strings.Cut(rest, ":"); ok {
			id.Groups = append(id.Groups, "system:serviceaccounts", "system:serviceaccounts:"+ns)
		}
	}
	id.Groups = append(id.Groups, "system:authenticated")
	return id
}
