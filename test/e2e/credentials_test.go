// Package e2e runs the whole credential path on two real control planes, a
// hub and a managed cluster: the mirror publishes the managed cluster into
// kueue-system with a direct access provider, the syncer copies its
// ManagedServiceAccount token there, and a consumer configured exactly like
// MultiKueue's credentialsProviders reaches the managed cluster through
// cluster-inventory-api's pkg/access and the built cp-creds.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

const (
	cluster     = "cluster1"
	msaName     = "multikueue"
	consumerNS  = "kueue-system"
	agentNS     = "open-cluster-management-agent-addon"
	directEntry = "open-cluster-management-direct"
)

var (
	hub, managed *framework.Env
	cpCreds      string
	workDir      string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "clusterprofile-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	workDir, cpCreds = dir, filepath.Join(dir, "cp-creds")
	build := exec.Command("go", "build", "-o", cpCreds, "../../cmd/cp-creds")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building cp-creds: %v\n%s", err, out)
		return 1
	}
	if managed, err = framework.Start(framework.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "starting the managed cluster:", err)
		return 1
	}
	defer func() { _ = managed.Stop() }()
	return framework.Run(m, framework.Options{}, &hub)
}

// managedIdentity is the service account the ManagedServiceAccount agent
// keeps on the managed cluster, allowed to list namespaces.
type managedIdentity struct {
	clientset *kubernetes.Clientset
}

func newManagedIdentity(ctx context.Context, t *testing.T) *managedIdentity {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(managed.Config)
	ensureAgentNamespace(ctx, t)
	must(t, create(ctx, managed.Client, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: agentNS, Name: msaName}}))
	must(t, create(ctx, managed.Client, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "list-namespaces"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}}}}))
	must(t, create(ctx, managed.Client, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "multikueue-list-namespaces"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "list-namespaces"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: agentNS, Name: msaName}}}))
	return &managedIdentity{clientset: cs}
}

// token asks TokenRequest for a token bound to a Secret named binding, so
// that deleting the Secret revokes the token (as a rotation would).
func (m *managedIdentity) token(ctx context.Context, t *testing.T, binding string) (string, time.Time) {
	t.Helper()
	anchor := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: agentNS, Name: binding}}
	must(t, managed.Client.Create(ctx, anchor))
	tr, err := m.clientset.CoreV1().ServiceAccounts(agentNS).CreateToken(ctx, msaName, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To(int64(3600)),
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: binding, UID: anchor.UID},
		},
	}, metav1.CreateOptions{})
	must(t, err)
	return tr.Status.Token, tr.Status.ExpirationTimestamp.Time
}

func (m *managedIdentity) revoke(ctx context.Context, t *testing.T, binding string) {
	t.Helper()
	must(t, managed.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: agentNS, Name: binding}}))
}

func TestConsumerReachesTheManagedClusterWithASyncedToken(t *testing.T) {
	ctx := framework.ContextFor(t)
	g := NewWithT(t)
	identity := newManagedIdentity(ctx, t)
	token, expiry := identity.token(ctx, t, "token-1")

	// The hub, as OCM and the managed-serviceaccount agent leave it.
	c := hub.Client
	framework.CreateNamespace(ctx, t, c, cluster)
	framework.CreateNamespace(ctx, t, c, consumerNS)
	framework.CreateClusterSet(ctx, t, c, utiltesting.MakeClusterSet("multikueue").Selector(metav1.LabelSelector{}).Obj())
	mc := utiltesting.MakeManagedCluster(cluster).Available(metav1.ConditionTrue).Joined().Obj()
	mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: managed.Config.Host, CABundle: managed.Config.CAData}}
	framework.CreateCluster(ctx, t, c, mc)
	binding := utiltesting.MakeBinding(consumerNS, "multikueue").Bound(true).Obj()
	framework.CreateBinding(ctx, t, c, binding)
	msa := writeManagedServiceAccount(ctx, t, token, expiry)

	framework.StartManager(t, hub, framework.ManagerOptions{Gates: map[string]bool{
		"ClusterProfile": true, "ClusterProfileDirectAccess": true, "ClusterProfileCredSyncer": true}})

	// The consumer: its own hub identity may only read Secrets in its namespace.
	consumerKubeconfig := consumerIdentity(ctx, t)
	profile := &cpv1alpha1.ClusterProfile{}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: consumerNS, Name: cluster}, profile)).To(Succeed())
		g.Expect(profile.Status.AccessProviders).To(ContainElement(HaveField("Name", directEntry)))
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: consumerNS, Name: cluster + "-" + msaName}, &corev1.Secret{})).To(Succeed())
	}, framework.Timeout, framework.Interval).Should(Succeed())
	consumer := consumerClient(t, profile, consumerKubeconfig, "first")
	g.Eventually(func() error { return listNamespaces(ctx, consumer) }, framework.Timeout, framework.Interval).Should(Succeed())

	// Rotation: a new token is synced, then the old one is revoked; the same
	// consumer client keeps working (client-go runs cp-creds again on a 401).
	newToken, newExpiry := identity.token(ctx, t, "token-2")
	framework.Update(ctx, t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: msaName}},
		func(s *corev1.Secret) { s.Data["token"] = []byte(newToken) })
	framework.UpdateStatus(ctx, t, c, msa, func(m *authv1beta1.ManagedServiceAccount) {
		m.Status.ExpirationTimestamp = &metav1.Time{Time: newExpiry}
	})
	g.Eventually(func(g Gomega) string {
		s := &corev1.Secret{}
		g.Expect(c.Get(ctx, types.NamespacedName{Namespace: consumerNS, Name: cluster + "-" + msaName}, s)).To(Succeed())
		return string(s.Data["token"])
	}, framework.Timeout, framework.Interval).Should(Equal(newToken))
	identity.revoke(ctx, t, "token-1")
	g.Eventually(func() error { return listNamespaces(ctx, bearer(token)) }, framework.Timeout, framework.Interval).
		Should(MatchError(ContainSubstring("Unauthorized")), "the old token must really be revoked")
	g.Eventually(func() error { return listNamespaces(ctx, consumer) }, framework.Timeout, framework.Interval).Should(Succeed())

	// Unbinding revokes the copy; a new client fails, and cp-creds says why.
	must(t, c.Delete(ctx, binding))
	g.Eventually(func() bool {
		err := c.Get(ctx, types.NamespacedName{Namespace: consumerNS, Name: cluster + "-" + msaName}, &corev1.Secret{})
		return client.IgnoreNotFound(err) == nil && err != nil
	}, framework.Timeout, framework.Interval).Should(BeTrue(), "the synced copy must be revoked")
	err := listNamespaces(ctx, consumerClient(t, profile, consumerKubeconfig, "after-unbinding"))
	g.Expect(err).To(MatchError(ContainSubstring("cp-creds")))
	stderr := runCPCreds(t, consumerKubeconfig)
	g.Expect(strings.Count(stderr, "\n")).To(Equal(1), "one line: %q", stderr)
	g.Expect(stderr).To(ContainSubstring("secret kueue-system/cluster1-multikueue not found"))
	g.Expect(stderr).NotTo(ContainSubstring(newToken))
}

// writeManagedServiceAccount writes what the managed-serviceaccount agent
// keeps on the hub: the token Secret and the ManagedServiceAccount's status.
func writeManagedServiceAccount(ctx context.Context, t *testing.T, token string, expiry time.Time) *authv1beta1.ManagedServiceAccount {
	t.Helper()
	c := hub.Client
	must(t, c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: msaName,
			Labels: map[string]string{"authentication.open-cluster-management.io/is-managed-serviceaccount": "true"}},
		Data: map[string][]byte{"token": []byte(token), "ca.crt": managed.Config.CAData},
	}))
	msa := &authv1beta1.ManagedServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: msaName,
			Labels: map[string]string{"authentication.open-cluster-management.io/sync-to-clusterprofile": "true"}},
		Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{
			Enabled: true, Validity: metav1.Duration{Duration: 8640 * time.Hour}}},
	}
	must(t, c.Create(ctx, msa))
	framework.UpdateStatus(ctx, t, c, msa, func(m *authv1beta1.ManagedServiceAccount) {
		m.Status.TokenSecretRef = &authv1beta1.SecretRef{Name: msaName, LastRefreshTimestamp: metav1.Now()}
		m.Status.ExpirationTimestamp = &metav1.Time{Time: expiry}
	})
	return msa
}

// consumerIdentity is the consumer's hub kubeconfig (MultiKueue's own
// identity), allowed only to get Secrets in its namespace.
func consumerIdentity(ctx context.Context, t *testing.T) string {
	t.Helper()
	c := hub.Client
	must(t, create(ctx, c, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: consumerNS, Name: "read-synced-tokens"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}))
	must(t, create(ctx, c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: consumerNS, Name: "kueue-reads-synced-tokens"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-synced-tokens"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "kueue-controller"}}}))
	kubeconfig, err := hub.UserKubeconfig("kueue-controller")
	must(t, err)
	path := filepath.Join(workDir, "consumer-kubeconfig")
	must(t, os.WriteFile(path, kubeconfig, 0o600))
	return path
}

// consumerClient builds a client the way MultiKueue does: pkg/access with
// the credentialsProviders entry of the seeds, pointing at the built cp-creds.
// client-go shares exec credentials between clients of the same exec config
// within a process; instance keeps each consumer apart, as separate
// processes would be.
func consumerClient(t *testing.T, profile *cpv1alpha1.ClusterProfile, hubKubeconfig string, instance string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := access.New([]access.Provider{{
		Name: directEntry,
		ExecConfig: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1",
			Command:    cpCreds,
			Args:       []string{"--managed-serviceaccount=" + msaName},
			Env: []clientcmdapi.ExecEnvVar{{Name: "NAMESPACE", Value: consumerNS}, {Name: "KUBECONFIG", Value: hubKubeconfig},
				{Name: "CONSUMER_INSTANCE", Value: instance}},
			ProvideClusterInfo: true,
			InteractiveMode:    clientcmdapi.NeverExecInteractiveMode,
		},
	}}).BuildConfigFromCP(profile)
	must(t, err)
	cfg.Timeout = 10 * time.Second
	return kubernetes.NewForConfigOrDie(rest.CopyConfig(cfg))
}

// bearer is a client of the managed cluster that uses token as it is.
func bearer(token string) *kubernetes.Clientset {
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: managed.Config.Host, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: managed.Config.CAData}})
}

func listNamespaces(ctx context.Context, cs *kubernetes.Clientset) error {
	_, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	return err
}

// runCPCreds runs cp-creds as client-go would for cluster1 and returns its stderr.
func runCPCreds(t *testing.T, hubKubeconfig string) string {
	t.Helper()
	cmd := exec.Command(cpCreds, "--managed-serviceaccount="+msaName)
	cmd.Env = append(os.Environ(), "NAMESPACE="+consumerNS, "KUBECONFIG="+hubKubeconfig,
		`KUBERNETES_EXEC_INFO={"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false,`+
			`"cluster":{"server":"`+managed.Config.Host+`","config":{"clusterName":"`+cluster+`"}}}}`)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Fatalf("cp-creds should exit 1, got %v", err)
	}
	return stderr.String()
}

func create(ctx context.Context, c client.Client, obj client.Object) error {
	return c.Create(ctx, obj)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
