package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	appv1 "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

type clustersOutput struct {
	Clusters []clusterOutput `json:"clusters"`
}

type clusterOutput struct {
	Name    string            `json:"name"`
	Server  string            `json:"server"`
	Labels  map[string]string `json:"labels"`
	Project string            `json:"project"`
	// User is who the cluster's API server says the credentials are: the
	// proof that the exec plugin ran and its token works.
	User string `json:"user,omitempty"`
	// CredentialID is the API server's id of the credential it saw (for a
	// service account token "JTI=<its jti>"): which token the plugin gave.
	CredentialID string `json:"credentialID,omitempty"`
	Error        string `json:"error,omitempty"`
}

// clusterTimeout bounds one cluster's exec plugin and review, so that one
// unreachable cluster does not hide the others' results.
const clusterTimeout = 30 * time.Second

// credentialIDKey is the user info extra in which the API server names the
// credential it authenticated.
const credentialIDKey = "authentication.kubernetes.io/credential-id"

func clustersCommand(_ *flag.FlagSet) func(context.Context, *hub) (any, error) {
	return func(ctx context.Context, h *hub) (any, error) {
		clusters, err := h.clusters(ctx)
		if err != nil {
			return nil, err
		}
		out := clustersOutput{Clusters: []clusterOutput{}}
		for i := range clusters {
			out.Clusters = append(out.Clusters, describeCluster(ctx, &clusters[i]))
		}
		return out, nil
	}
}

func describeCluster(ctx context.Context, c *appv1.Cluster) clusterOutput {
	out := clusterOutput{Name: c.Name, Server: c.Server, Labels: c.Labels, Project: c.Project}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	user, err := whoAmI(ctx, c)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.User = user.Username
	if ids := user.Extra[credentialIDKey]; len(ids) > 0 {
		out.CredentialID = ids[0]
	}
	return out
}

// whoAmI asks the cluster who its credentials are, through the rest.Config
// that Argo CD's own Cluster.RESTConfig builds from the Secret: that is what
// runs the exec plugin with the Secret's args, env and cluster info.
func whoAmI(ctx context.Context, c *appv1.Cluster) (authnv1.UserInfo, error) {
	config, err := c.RESTConfig()
	if err != nil {
		return authnv1.UserInfo{}, fmt.Errorf("REST config: %w", err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return authnv1.UserInfo{}, fmt.Errorf("client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, clusterTimeout)
	defer cancel()
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authnv1.UserInfo{}, fmt.Errorf("SelfSubjectReview: %w", err)
	}
	return review.Status.UserInfo, nil
}
