package cpcreds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	"sigs.k8s.io/cluster-inventory-api/pkg/credentialplugin"
)

// Provider implements cluster-inventory-api's credentialplugin.Provider.
type Provider struct {
	// Client reads the synced Secret: exactly one GET per run.
	Client kubernetes.Interface
	// ManagedServiceAccount is the name given with --managed-serviceaccount.
	ManagedServiceAccount string
	// Namespace holds the synced Secrets. When empty it is chosen from Env.
	Namespace string
	// Env is where the namespace is looked up when Namespace is empty.
	Env Environment
}

var _ credentialplugin.Provider = (*Provider)(nil)

// Name is the prefix Run puts on its stderr lines.
func (p *Provider) Name() string { return PluginName }

// GetToken returns the token of the Secret <clusterName>-<msa>, and its expiry
// when the syncer recorded one, so client-go runs cp-creds again only then;
// only when the Secret is the syncer's copy for that pair (CheckCopy) and
// the server client-go is about to call is one the hub publishes for that
// cluster (CheckServer).
func (p *Provider) GetToken(ctx context.Context, in clientauthenticationv1.ExecCredential) (clientauthenticationv1.ExecCredentialStatus, error) {
	status, err := p.getToken(ctx, in)
	return status, oneLine(err)
}

func (p *Provider) getToken(ctx context.Context, in clientauthenticationv1.ExecCredential) (clientauthenticationv1.ExecCredentialStatus, error) {
	cluster, err := clusterName(in)
	if err != nil {
		return clientauthenticationv1.ExecCredentialStatus{}, err
	}
	name := SecretName(cluster, p.ManagedServiceAccount)
	if problems := validation.IsDNS1123Subdomain(name); len(problems) > 0 {
		return clientauthenticationv1.ExecCredentialStatus{}, fmt.Errorf("clusterName %q and --managed-serviceaccount=%s do not make a valid Secret name %q: %s",
			cluster, p.ManagedServiceAccount, name, strings.Join(problems, "; "))
	}
	ns := p.namespace()
	secret, err := p.readSecret(ctx, ns, name, cluster)
	if err != nil {
		return clientauthenticationv1.ExecCredentialStatus{}, err
	}
	if err := CheckCopy(secret, cluster, p.ManagedServiceAccount); err != nil {
		return clientauthenticationv1.ExecCredentialStatus{}, err
	}
	if err := CheckServer(secret, in.Spec.Cluster); err != nil {
		return clientauthenticationv1.ExecCredentialStatus{}, err
	}
	return statusFromSecret(secret)
}

func (p *Provider) namespace() namespace {
	if p.Namespace != "" {
		return namespace{p.Namespace, "as configured"}
	}
	return resolveNamespace(p.Env)
}

func clusterName(in clientauthenticationv1.ExecCredential) (string, error) {
	if in.Spec.Cluster == nil {
		return "", errors.New("KUBERNETES_EXEC_INFO has no spec.cluster: set provideClusterInfo: true in the exec config")
	}
	raw := in.Spec.Cluster.Config.Raw
	if len(raw) == 0 {
		return "", fmt.Errorf("KUBERNETES_EXEC_INFO has no spec.cluster.config: the cluster must carry the extension %s with {\"clusterName\": \"<cluster>\"} (set by the ClusterProfile's access provider)", ExecExtensionName)
	}
	var cfg ExecClusterConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return "", fmt.Errorf("spec.cluster.config in KUBERNETES_EXEC_INFO must be a JSON object like {\"clusterName\": \"<cluster>\"} (extension %s): %w", ExecExtensionName, err)
	}
	if cfg.ClusterName == "" {
		return "", fmt.Errorf("spec.cluster.config in KUBERNETES_EXEC_INFO has no clusterName: the extension %s must be {\"clusterName\": \"<cluster>\"}", ExecExtensionName)
	}
	return cfg.ClusterName, nil
}

// readSecret turns the API errors a user can act on into messages that say
// what to change; the Secret itself never goes into an error.
func (p *Provider) readSecret(ctx context.Context, ns namespace, name, cluster string) (*corev1.Secret, error) {
	if p.Client == nil {
		return nil, errors.New("no Kubernetes client to read the Secret with")
	}
	secret, err := p.Client.CoreV1().Secrets(ns.name).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		return secret, nil
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("secret %s/%s not found (namespace %s %s): the ManagedServiceAccount %q in hub namespace %q needs the label %s: \"true\", and namespace %q must be bound to a ManagedClusterSet containing cluster %q",
			ns.name, name, ns.name, ns.source, p.ManagedServiceAccount, cluster, LabelSyncToClusterProfile, ns.name, cluster)
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("not allowed to read the token: grant this identity permission to get secrets in namespace %q (e.g. a Role and RoleBinding): %w", ns.name, err)
	case apierrors.IsUnauthorized(err):
		return nil, fmt.Errorf("the API server rejected cp-creds' own credentials (in-cluster service account or kubeconfig user) while reading secret %s/%s: %w", ns.name, name, err)
	default:
		return nil, fmt.Errorf("reading secret %s/%s: %w", ns.name, name, err)
	}
}

func statusFromSecret(secret *corev1.Secret) (clientauthenticationv1.ExecCredentialStatus, error) {
	token := secret.Data[SecretKeyToken]
	if len(token) == 0 {
		return clientauthenticationv1.ExecCredentialStatus{}, fmt.Errorf("secret %s/%s has no %q key: the credential syncer has not copied a token yet; check the ManagedServiceAccount's status on the hub",
			secret.Namespace, secret.Name, SecretKeyToken)
	}
	return clientauthenticationv1.ExecCredentialStatus{
		Token:               string(token),
		ExpirationTimestamp: tokenExpiration(secret),
	}, nil
}

// tokenExpiration reads the syncer's annotation. A missing or malformed one
// gives no expiry: client-go then keeps the token until the server answers
// 401 and runs cp-creds again, which still works, just one request later.
func tokenExpiration(secret *corev1.Secret) *metav1.Time {
	value, ok := secret.Annotations[AnnotationTokenExpiration]
	if !ok {
		return nil
	}
	expiry, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return nil
	}
	return &metav1.Time{Time: expiry}
}

// oneLine keeps the promise of one stderr line per failure, whatever text a
// wrapped error (an API server message, say) brings along.
func oneLine(err error) error {
	if err == nil || !strings.ContainsAny(err.Error(), "\r\n") {
		return err
	}
	return singleLineError{err}
}

type singleLineError struct{ err error }

func (e singleLineError) Error() string {
	return strings.Join(strings.Fields(e.err.Error()), " ")
}

func (e singleLineError) Unwrap() error { return e.err }
