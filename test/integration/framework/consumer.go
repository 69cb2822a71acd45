package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// BuildCommands builds the named commands of cmd/ into dir as they ship
// (static, stripped), for tests that run the binaries a consumer runs.
func BuildCommands(dir string, names ...string) error {
	for _, name := range names {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = RepoRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %w\n%s", name, err, out)
		}
	}
	return nil
}

// WriteAdminKubeconfig writes a cluster-admin kubeconfig into dir and
// returns its path, for binaries run by a test.
func (e *Env) WriteAdminKubeconfig(dir string) (string, error) {
	data, err := e.AdminKubeconfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "admin.kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

// ServiceAccountToken creates the service account namespace/name and
// returns a real token of it valid for ttl, with its expiry: what a
// ManagedServiceAccount's agent obtains on a managed cluster.
func (e *Env) ServiceAccountToken(ctx context.Context, t testing.TB, namespace, name string, ttl time.Duration) (string, time.Time) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating service account %s/%s: %v", namespace, name, err)
	}
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(ttl.Seconds()))}}
	got, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, request, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for %s/%s: %v", namespace, name, err)
	}
	return got.Status.Token, got.Status.ExpirationTimestamp.Time
}

// TokenCopy is the Secret the credential syncer writes in namespace for
// cluster's ManagedServiceAccount msa, published at servers.
func TokenCopy(namespace, cluster, msa, token string, expiry time.Time, servers ...cpcreds.PublishedServer) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: cpcreds.SecretName(cluster, msa),
			Labels: map[string]string{cpcreds.LabelSyncedFrom: cpcreds.SyncedFromValue(cluster, msa)},
			Annotations: map[string]string{
				cpcreds.AnnotationSourceCluster:               cluster,
				cpcreds.AnnotationSourceManagedServiceAccount: msa,
				cpcreds.AnnotationTokenExpiration:             expiry.UTC().Format(time.RFC3339),
				cpcreds.AnnotationPublishedServers:            cpcreds.EncodePublishedServers(servers),
			}},
		Data: map[string][]byte{cpcreds.SecretKeyToken: []byte(token)},
	}
}

// GrantGetSecrets gives a service account of namespace what a consumer
// running cp-creds needs there: get on secrets.
func GrantGetSecrets(ctx context.Context, t testing.TB, c client.Client, namespace, serviceAccount string) {
	t.Helper()
	name := serviceAccount + "-get-secrets"
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: serviceAccount}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s/%s: %v", obj, namespace, name, err)
		}
	}
}

// CreateProfile creates a ClusterProfile with its status, as its writers
// (the mirror and an access provider) would leave it, under their field
// managers.
func CreateProfile(ctx context.Context, t testing.TB, c client.Client, profile *cpv1alpha1.ClusterProfile) {
	t.Helper()
	createProfileAs(ctx, t, c, profile, []client.CreateOption{client.FieldOwner(clusterprofile.MirrorFieldManager)},
		[]client.SubResourceUpdateOption{client.FieldOwner(accessprovider.ProxyFieldManager)})
}

// CreateForgedProfile creates a ClusterProfile with its status as whoever c
// acts for writes it, under c's own field manager: a profile nobody of the
// bundle wrote.
func CreateForgedProfile(ctx context.Context, t testing.TB, c client.Client, profile *cpv1alpha1.ClusterProfile) {
	t.Helper()
	createProfileAs(ctx, t, c, profile, nil, nil)
}

func createProfileAs(ctx context.Context, t testing.TB, c client.Client, profile *cpv1alpha1.ClusterProfile,
	createOpts []client.CreateOption, statusOpts []client.SubResourceUpdateOption) {
	t.Helper()
	status := profile.Status.DeepCopy()
	if err := c.Create(ctx, profile, createOpts...); err != nil {
		t.Fatalf("creating ClusterProfile %s/%s: %v", profile.Namespace, profile.Name, err)
	}
	profile.Status = *status
	if err := c.Status().Update(ctx, profile, statusOpts...); err != nil {
		t.Fatalf("writing status of ClusterProfile %s/%s: %v", profile.Namespace, profile.Name, err)
	}
}
