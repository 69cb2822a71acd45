//go:build linux

package ocmlocal

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const (
	// hubNamespace is where a ClusterManager runs the hub controllers; they
	// use it for events and leases.
	hubNamespace = "open-cluster-management-hub"
	// operatorNamespace holds the bootstrap service account, as clusteradm
	// init creates it.
	operatorNamespace = "open-cluster-management"
	bootstrapSA       = "agent-registration-bootstrap"
	bootstrapRole     = "open-cluster-management:bootstrap"
)

func (e *Env) startHub(ctx context.Context) error {
	hub, err := e.startControlPlane(ctx, "hub", true)
	if err != nil {
		return err
	}
	e.Hub = hub
	start := time.Now()
	webhookURL, err := e.startAddonConversionWebhook(ctx)
	if err != nil {
		return err
	}
	if err := e.installHubCRDs(webhookURL); err != nil {
		return err
	}
	if err := e.startRegistrationWebhook(ctx); err != nil {
		return err
	}
	if err := e.createBootstrapRBAC(ctx); err != nil {
		return err
	}
	for _, c := range []struct{ name, bin, sub string }{
		{"registration-controller", "registration", "controller"},
		{"placement-controller", "placement", "controller"},
		{"addon-manager", "addon", "manager"},
	} {
		if _, err := e.startHubController(c.name, c.bin, c.sub); err != nil {
			return err
		}
	}
	e.progressf("OCM hub controllers started (registration, placement, addon manager; registration and addon conversion webhooks) in %s", since(start))
	return nil
}

// startHubController runs one of OCM's hub controllers as a ClusterManager
// would, but with the hub admin kubeconfig instead of a service account
// token, and serving its health endpoint on a free loopback port.
func (e *Env) startHubController(name, bin, sub string) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return e.procs.start(processSpec{name: "hub-" + name, argv: []string{
		e.bins.path(bin), sub,
		"--kubeconfig=" + e.Hub.KubeconfigPath,
		"--namespace=" + hubNamespace,
		"--listen=" + hostPort(port),
		"--disable-leader-election",
	}})
}

// startAddonConversionWebhook runs OCM's addon conversion webhook (`addon
// webhook-server`, as the ClusterManager deploys it): the addon CRDs store
// v1alpha1 and convert through it, and the addon programs here use both
// versions (cluster-proxy's user server lists v1alpha1, addon-framework
// writes v1beta1). It returns the conversion URL.
func (e *Env) startAddonConversionWebhook(ctx context.Context) (string, error) {
	base, err := e.startWebhookServer(ctx, "addon-webhook", "addon")
	return base + "/convert", err
}

// startWebhookServer runs one of OCM's webhook servers (`<bin>
// webhook-server`) in a sandbox, because it binds fixed ports (health on
// :8000) on every interface, with a serving certificate from the hub CA for
// 127.0.0.1. It returns the server's base URL on the host.
func (e *Env) startWebhookServer(ctx context.Context, name, bin string, args ...string) (string, error) {
	certDir := filepath.Join(e.WorkDir, "hub", name)
	serving, err := e.Hub.ca.serving("cluster-manager-"+name, "127.0.0.1")
	if err != nil {
		return "", err
	}
	if err := writeFiles(certDir, map[string][]byte{"tls.crt": serving.certPEM, "tls.key": serving.keyPEM}); err != nil {
		return "", err
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	const insidePort = 9443
	argv := append([]string{e.bins.path(bin), "webhook-server", fmt.Sprintf("--port=%d", insidePort), "--certdir=" + certDir}, args...)
	sb, err := e.startSandboxed(sandboxSpec{
		name:     "hub-" + name,
		argv:     argv,
		env:      podEnv("KUBECONFIG=" + e.Hub.KubeconfigPath),
		outbound: []route{sameRoute(e.Hub.Port)},
		inbound:  []route{{inside: hostPort(insidePort), host: hostPort(port)}},
	})
	if err != nil {
		return "", err
	}
	err = poll(ctx, 60*time.Second, sb.proc, func(context.Context) (bool, error) {
		return tlsReachable(hostPort(port), e.Hub.CAData)
	})
	return "https://" + hostPort(port), err
}

// startRegistrationWebhook runs OCM's registration webhook as the
// ClusterManager does (with DefaultClusterSet on) and registers it like the
// ClusterManager's webhook configurations: it labels new ManagedClusters
// into the "default" ManagedClusterSet, checks who may accept a cluster or
// move it between sets, and who may bind a set into a namespace.
func (e *Env) startRegistrationWebhook(ctx context.Context) error {
	base, err := e.startWebhookServer(ctx, "registration-webhook", "registration", "--feature-gates=DefaultClusterSet=true")
	if err != nil {
		return err
	}
	hub, err := e.Hub.Clientset()
	if err != nil {
		return err
	}
	clusters := admissionRule("managedclusters", "*")
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "managedclustermutators.admission.cluster.open-cluster-management.io"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "managedclustermutators.admission.cluster.open-cluster-management.io",
			ClientConfig:            e.webhookClient(base, "/mutate-cluster-open-cluster-management-io-v1-managedcluster"),
			Rules:                   clusters,
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1beta1", "v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		}},
	}
	if err := createIgnoringExists(hub.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mutating, metav1.CreateOptions{})); err != nil {
		return fmt.Errorf("registering webhook %s: %w", mutating.Name, err)
	}
	for _, v := range []struct{ name, path, resource, version string }{
		{"managedclustervalidators", "/validate-cluster-open-cluster-management-io-v1-managedcluster", "managedclusters", "*"},
		{"managedclustersetbindingvalidators", "/validate-cluster-open-cluster-management-io-v1beta2-managedclustersetbinding", "managedclustersetbindings", "v1beta2"},
	} {
		name := v.name + ".admission.cluster.open-cluster-management.io"
		validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name:                    name,
				ClientConfig:            e.webhookClient(base, v.path),
				Rules:                   admissionRule(v.resource, v.version),
				FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
				SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1beta1", "v1"},
				TimeoutSeconds:          ptr.To[int32](10),
			}},
		}
		if err := createIgnoringExists(hub.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, validating, metav1.CreateOptions{})); err != nil {
			return fmt.Errorf("registering webhook %s: %w", name, err)
		}
	}
	return nil
}

func (e *Env) webhookClient(base, path string) admissionregistrationv1.WebhookClientConfig {
	return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + path), CABundle: e.Hub.CAData}
}

func admissionRule(resource, version string) []admissionregistrationv1.RuleWithOperations {
	return []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{"cluster.open-cluster-management.io"}, APIVersions: []string{version}, Resources: []string{resource},
		},
	}}
}

// hubCRDFiles are the hub's CRDs, from the API modules this repository pins.
func (e *Env) hubCRDFiles() ([]string, error) {
	files := []struct{ module, path string }{
		{ocmAPIModule, "cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml"},
		{ocmAPIModule, "cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml"},
		{ocmAPIModule, "cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml"},
		{ocmAPIModule, "cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml"},
		{ocmAPIModule, "cluster/v1beta1/0000_03_clusters.open-cluster-management.io_placementdecisions.crd.yaml"},
		{ocmAPIModule, "cluster/v1alpha1/0000_05_clusters.open-cluster-management.io_addonplacementscores.crd.yaml"},
		{ocmAPIModule, "work/v1/0000_00_work.open-cluster-management.io_manifestworks.crd.yaml"},
		{ocmAPIModule, "work/v1alpha1/0000_00_work.open-cluster-management.io_manifestworkreplicasets.crd.yaml"},
		{ocmAPIModule, "addon/v1beta1/0000_00_addon.open-cluster-management.io_clustermanagementaddons.crd.yaml"},
		{ocmAPIModule, "addon/v1beta1/0000_01_addon.open-cluster-management.io_managedclusteraddons.crd.yaml"},
		{ocmAPIModule, "addon/v1beta1/0000_02_addon.open-cluster-management.io_addondeploymentconfigs.crd.yaml"},
		{ocmAPIModule, "addon/v1alpha1/0000_03_addon.open-cluster-management.io_addontemplates.crd.yaml"},
		{profileModule, "config/crd/bases/multicluster.x-k8s.io_clusterprofiles.yaml"},
		{msaModule, "config/crd/bases/authentication.open-cluster-management.io_managedserviceaccounts.yaml"},
		{proxyModule, "hack/crd/bases/proxy.open-cluster-management.io_managedproxyconfigurations.yaml"},
		{proxyModule, "hack/crd/bases/proxy.open-cluster-management.io_managedproxyserviceresolvers.yaml"},
	}
	var paths []string
	for _, f := range files {
		p, err := e.modules.file(f.module, f.path)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func (e *Env) installHubCRDs(conversionURL string) error {
	files, err := e.hubCRDFiles()
	if err != nil {
		return err
	}
	opts := envtest.CRDInstallOptions{Paths: files, ErrorIfPathMissing: true}
	if err := envtest.ReadCRDFiles(&opts); err != nil {
		return err
	}
	for _, crd := range opts.CRDs {
		if crd.Spec.Group == "addon.open-cluster-management.io" && len(crd.Spec.Versions) > 1 {
			useConversionWebhook(crd, conversionURL, e.Hub.CAData)
		}
	}
	_, err = envtest.InstallCRDs(e.Hub.Config, envtest.CRDInstallOptions{CRDs: opts.CRDs})
	if err != nil {
		return fmt.Errorf("installing hub CRDs: %w", err)
	}
	return nil
}

// useConversionWebhook points a CRD at the conversion webhook, as the
// ClusterManager's copy of the addon CRDs does (there through a Service).
func useConversionWebhook(crd *apiextensionsv1.CustomResourceDefinition, url string, caData []byte) {
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caData},
			ConversionReviewVersions: []string{"v1", "v1beta1"},
		},
	}
}

// createBootstrapRBAC creates what `clusteradm init` creates for
// registration: the bootstrap ClusterRole (rules as in OCM's cluster-manager
// chart, bootstrap_cluster_role.yaml) bound to the agent-registration-
// bootstrap service account, whose token goes into the bootstrap kubeconfig.
func (e *Env) createBootstrapRBAC(ctx context.Context) error {
	c, err := e.Hub.Clientset()
	if err != nil {
		return err
	}
	for _, ns := range []string{operatorNamespace, hubNamespace} {
		if err := createIgnoringExists(c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: bootstrapSA, Namespace: operatorNamespace}}
	if err := createIgnoringExists(c.CoreV1().ServiceAccounts(operatorNamespace).Create(ctx, sa, metav1.CreateOptions{})); err != nil {
		return fmt.Errorf("creating service account %s: %w", bootstrapSA, err)
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
			{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclusters"}, Verbs: []string{"get", "create", "list", "watch"}},
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"managedclustersets/join"}, Verbs: []string{"create"}},
		},
	}
	if err := createIgnoringExists(c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})); err != nil {
		return fmt.Errorf("creating ClusterRole %s: %w", bootstrapRole, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapRole + ":agent-registration"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: bootstrapRole},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: bootstrapSA, Namespace: operatorNamespace}},
	}
	if err := createIgnoringExists(c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})); err != nil {
		return fmt.Errorf("creating ClusterRoleBinding %s: %w", binding.Name, err)
	}
	return nil
}

// bootstrapToken gets a token of the bootstrap service account through
// TokenRequest, as `clusteradm get token` does.
func bootstrapToken(ctx context.Context, c kubernetes.Interface) (string, error) {
	tr, err := c.CoreV1().ServiceAccounts(operatorNamespace).CreateToken(ctx, bootstrapSA, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token of %s/%s: %w", operatorNamespace, bootstrapSA, err)
	}
	return tr.Status.Token, nil
}

func createIgnoringExists[T any](_ T, err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
