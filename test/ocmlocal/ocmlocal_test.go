//go:build linux

package ocmlocal_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	addonv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
)

// TestLocalOCM brings up real OCM (hub, two klusterlets, both addons) and
// checks each piece does its real job, and that the kubelet runs this
// bundle's agent addon.
func TestLocalOCM(t *testing.T) {
	if err := ocmlocal.BinariesBuilt(); errors.Is(err, ocmlocal.ErrBinariesMissing) {
		t.Skipf("skipping the local OCM smoke test: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("skipping the local OCM smoke test: pod sandboxes need root (mount and network namespaces)")
	}
	if testing.Short() {
		t.Skip("skipping the local OCM smoke test in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	env, err := ocmlocal.Start(ctx, ocmlocal.Options{
		Clusters: 2, ManagedServiceAccount: true, ClusterProxy: true,
		Images: []ocmlocal.ImageBinary{{Command: "/sleeper", Path: "/bin/sleep"}},
		// As `clusteradm init --feature-gates=ClusterProfile=true` does: the
		// last subtest follows the gate.
		RegistrationFeatureGates: map[string]bool{"ClusterProfile": true},
	})
	if err != nil {
		t.Fatalf("starting local OCM: %v", err)
	}
	t.Cleanup(env.Stop)
	t.Logf("start-up took %s", time.Since(start).Round(time.Second))
	hub, err := env.HubClient()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("clusters registered by real klusterlets", func(t *testing.T) {
		g := NewWithT(t)
		for _, c := range env.Clusters {
			mc := &clusterv1.ManagedCluster{}
			g.Expect(hub.Get(ctx, types.NamespacedName{Name: c.Name}, mc)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)).To(BeTrue(), c.Name)
			g.Expect(mc.Status.Version.Kubernetes).To(Equal("v1.35.4"), c.Name)
			g.Expect(mc.Spec.ManagedClusterClientConfigs).To(ContainElement(HaveField("URL", c.URL)))
			// Set by OCM's registration webhook (DefaultClusterSet).
			g.Expect(mc.Labels).To(HaveKeyWithValue("cluster.open-cluster-management.io/clusterset", "default"), c.Name)
		}
	})

	t.Run("garbage collector deletes dependents", func(t *testing.T) {
		g := NewWithT(t)
		owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gc-owner", Namespace: "default"}}
		g.Expect(hub.Create(ctx, owner)).To(Succeed())
		dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gc-dependent", Namespace: "default",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}}}
		g.Expect(hub.Create(ctx, dependent)).To(Succeed())
		g.Expect(hub.Delete(ctx, owner)).To(Succeed())
		g.Eventually(func() bool {
			return apierrors.IsNotFound(hub.Get(ctx, client.ObjectKeyFromObject(dependent), &corev1.ConfigMap{}))
		}, time.Minute, 200*time.Millisecond).Should(BeTrue())
	})

	var token string
	t.Run("managed service account yields a real token", func(t *testing.T) {
		g := NewWithT(t)
		msa := &authv1beta1.ManagedServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: "cluster1"},
			Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{
				Enabled: true, Validity: metav1.Duration{Duration: time.Hour}}},
		}
		g.Expect(hub.Create(ctx, msa)).To(Succeed())
		secret := &corev1.Secret{}
		g.Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(msa), msa)).To(Succeed())
			g.Expect(msa.Status.TokenSecretRef).NotTo(BeNil())
			g.Expect(hub.Get(ctx, types.NamespacedName{Namespace: "cluster1", Name: msa.Status.TokenSecretRef.Name}, secret)).To(Succeed())
			g.Expect(secret.Data).To(HaveKey("token"))
		}, 2*time.Minute, time.Second).Should(Succeed())
		token = string(secret.Data["token"])
		review := selfSubjectReview(ctx, t, tokenConfig(env.Cluster("cluster1").URL, env.Cluster("cluster1").CAData, token))
		g.Expect(review.Status.UserInfo.Username).To(Equal("system:serviceaccount:open-cluster-management-agent-addon:smoke"))
	})

	t.Run("cluster-proxy user server reaches the managed API server", func(t *testing.T) {
		if token == "" {
			t.Skip("no token")
		}
		g := NewWithT(t)
		cfg := tokenConfig(env.Proxy.URL+"/cluster1", env.Proxy.CAData, token)
		c, err := kubernetes.NewForConfig(cfg)
		g.Expect(err).NotTo(HaveOccurred())
		g.Eventually(func(g Gomega) {
			v, err := c.Discovery().ServerVersion()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(v.GitVersion).To(Equal("v1.35.4"))
		}, time.Minute, time.Second).Should(Succeed())
		review := selfSubjectReview(ctx, t, cfg)
		g.Expect(review.Status.UserInfo.Username).To(Equal("system:serviceaccount:open-cluster-management-agent-addon:smoke"))
	})

	t.Run("the kubelet follows its Deployment", func(t *testing.T) { kubeletFollowsDeployment(ctx, t, env) })

	t.Run("the kubelet runs this bundle's agent", func(t *testing.T) { agentHookRuns(ctx, t, env, hub) })

	t.Run("the ClusterProfile gate travels through the ClusterManager", func(t *testing.T) {
		clusterProfileGateTravels(ctx, t, env, hub)
	})
}

// kubeletFollowsDeployment: a new Deployment starts a process, a changed
// template restarts it, scaling to zero stops it, deleting and creating it
// again at once restarts it (another Deployment, as OCM's work agent makes
// when an addon's ManifestWork is replaced), deleting stops it.
func kubeletFollowsDeployment(ctx context.Context, t *testing.T, env *ocmlocal.Env) {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(30 * time.Second)
	g.SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	c, err := env.Cluster("cluster2").Clientset()
	g.Expect(err).NotTo(HaveOccurred())
	deployments := c.AppsV1().Deployments("default")
	labels := map[string]string{"app": "sleeper"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "sleeper", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "s", Image: "any", Command: []string{"/sleeper", "86401"}}}},
			},
		},
	}
	_, err = deployments.Create(ctx, d, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(processesWithArg).WithArguments("86401").Should(Equal(1))
	g.Eventually(func(g Gomega) {
		got, err := deployments.Get(ctx, d.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Status.AvailableReplicas).To(BeEquivalentTo(1))
	}).Should(Succeed())

	update := func(change func(*appsv1.Deployment)) {
		got, err := deployments.Get(ctx, d.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		change(got)
		_, err = deployments.Update(ctx, got, metav1.UpdateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	}
	update(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Command = []string{"/sleeper", "86402"} })
	g.Eventually(processesWithArg).WithArguments("86402").Should(Equal(1))
	g.Eventually(processesWithArg).WithArguments("86401").Should(Equal(0))

	update(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](0) })
	g.Eventually(processesWithArg).WithArguments("86402").Should(Equal(0))

	update(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](1) })
	g.Eventually(processesWithArg).WithArguments("86402").Should(Equal(1))

	before := pidsWithArg("86402")
	g.Expect(deployments.Delete(ctx, d.Name, metav1.DeleteOptions{})).To(Succeed())
	again := d.DeepCopy()
	again.Spec.Template.Spec.Containers[0].Command = []string{"/sleeper", "86402"}
	_, err = deployments.Create(ctx, again, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(pidsWithArg).WithArguments("86402").Should(And(HaveLen(1), Not(Equal(before))),
		"the Deployment created again runs in a new process")

	g.Expect(deployments.Delete(ctx, d.Name, metav1.DeleteOptions{})).To(Succeed())
	g.Eventually(processesWithArg).WithArguments("86402").Should(Equal(0))
}

// processesWithArg counts the processes on this machine that have arg as
// their last argument.
func processesWithArg(arg string) int { return len(pidsWithArg(arg)) }

// pidsWithArg lists the processes on this machine that have arg as their
// last argument.
func pidsWithArg(arg string) []string {
	var pids []string
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if args[len(args)-1] == arg {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

// agentHookRuns proves the kubelet mapping for this bundle's own agent:
// the bundle's manager (ClusterProfileAgent gate on) deploys the agent
// through addon-framework, the work agent applies it, the kubelet runs
// bin/clusterprofile-agent and the addon becomes Available.
func agentHookRuns(ctx context.Context, t *testing.T, env *ocmlocal.Env, hub client.Client) {
	manager := filepath.Join(ocmlocal.RepoRoot(), "bin", "clusterprofile-manager")
	for _, bin := range []string{manager, ocmlocal.AgentImage().Path} {
		if _, err := os.Stat(bin); err != nil {
			t.Skipf("%s not built (make build): %v", bin, err)
		}
	}
	// The chart's ClusterManagementAddOn, with a manual install strategy.
	cma := &addonv1beta1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-profile-agent"},
		Spec:       addonv1beta1.ClusterManagementAddOnSpec{InstallStrategy: addonv1beta1.InstallStrategy{Type: addonv1beta1.AddonInstallStrategyManual}},
	}
	if err := hub.Create(ctx, cma); err != nil {
		t.Fatal(err)
	}
	proc, err := env.StartProcess("hub-clusterprofile-manager", []string{manager,
		"--kubeconfig=" + env.Hub.KubeconfigPath, "--feature-gates=ClusterProfileAgent=true",
		"--metrics-bind-address=0", "--health-probe-bind-address=0"})
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Stop()
	if err := env.EnableAddon(ctx, "cluster-profile-agent", "open-cluster-management-agent-addon"); err != nil {
		t.Fatal(err)
	}
	if err := env.WaitAddonAvailable(ctx, "cluster-profile-agent"); err != nil {
		t.Fatalf("%v (manager log: %s)", err, proc.LogPath())
	}
}

func tokenConfig(host string, ca []byte, token string) *rest.Config {
	return &rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

func selfSubjectReview(ctx context.Context, t *testing.T, cfg *rest.Config) *authenticationv1.SelfSubjectReview {
	t.Helper()
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview at %s: %v", cfg.Host, err)
	}
	return review
}

// clusterProfileGateTravels follows the ClusterProfile gate of a hub
// started as `clusteradm init --feature-gates=ClusterProfile=true` starts it: ClusterManager → cluster-manager operator → the registration
// controller's arguments → OCM's own ClusterProfile mirror publishing a
// profile in a namespace bound to a set; then turns the gate off at run time
// and sees the operator restart the registration controller without it and
// the mirror publish no more.
func clusterProfileGateTravels(ctx context.Context, t *testing.T, env *ocmlocal.Env, hub client.Client) {
	g := NewWithT(t)
	const hubNamespace, registration = "open-cluster-management-hub", "cluster-manager-registration-controller"
	gateFlag := "--feature-gates=ClusterProfile=true"

	cm := &operatorv1.ClusterManager{}
	g.Expect(hub.Get(ctx, types.NamespacedName{Name: "cluster-manager"}, cm)).To(Succeed())
	g.Expect(cm.Spec.RegistrationConfiguration.FeatureGates).To(ContainElement(operatorv1.FeatureGate{Feature: "ClusterProfile", Mode: operatorv1.FeatureGateModeTypeEnable}))
	d := &appsv1.Deployment{}
	g.Expect(hub.Get(ctx, types.NamespacedName{Namespace: hubNamespace, Name: registration}, d)).To(Succeed())
	g.Expect(d.Spec.Template.Spec.Containers[0].Args).To(ContainElement(gateFlag), "the operator derives the flag from the ClusterManager")
	args, running := env.HubPodArgs(hubNamespace, registration)
	g.Expect(running).To(BeTrue())
	g.Expect(args[0]).To(ContainElement(gateFlag), "the kubelet runs the registration controller with it")

	// A namespace bound to the default set (every cluster joins it): OCM's
	// mirror, and nothing else here, publishes cluster1's profile there.
	bind := func(namespace string) {
		t.Helper()
		g.Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
		g.Expect(hub.Create(ctx, &clusterv1beta2.ManagedClusterSetBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: namespace},
			Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "default"},
		})).To(Succeed())
	}
	bound := time.Now()
	bind("team-on")
	profile := &cpv1alpha1.ClusterProfile{}
	g.Eventually(func(g Gomega) {
		g.Expect(hub.Get(ctx, types.NamespacedName{Namespace: "team-on", Name: "cluster1"}, profile)).To(Succeed())
		g.Expect(profile.Labels).To(HaveKeyWithValue("x-k8s.io/cluster-manager", "open-cluster-management"))
		g.Expect(profile.Status.Version.Kubernetes).To(Equal("v1.35.4"))
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())
	published := time.Since(bound)
	var managers []string
	for _, f := range profile.ManagedFields {
		managers = append(managers, f.Manager)
	}
	g.Expect(managers).To(ContainElement("registration"), "written by OCM's registration controller")
	t.Logf("OCM's mirror published cluster1's profile %s after the binding (field managers %v)", published.Round(time.Millisecond), managers)

	// Off at run time, as editing the ClusterManager does.
	started := env.HubPodStarted(hubNamespace, registration)
	g.Expect(env.SetHubFeatureGates(ctx, map[string]bool{"ClusterProfile": false})).To(Succeed())
	g.Expect(hub.Get(ctx, types.NamespacedName{Name: "cluster-manager"}, cm)).To(Succeed())
	g.Expect(cm.Spec.RegistrationConfiguration.FeatureGates).To(ContainElement(operatorv1.FeatureGate{Feature: "ClusterProfile", Mode: operatorv1.FeatureGateModeTypeDisable}))
	g.Expect(hub.Get(ctx, types.NamespacedName{Namespace: hubNamespace, Name: registration}, d)).To(Succeed())
	g.Expect(d.Spec.Template.Spec.Containers[0].Args).NotTo(ContainElement(ContainSubstring("ClusterProfile")))
	args, running = env.HubPodArgs(hubNamespace, registration)
	g.Expect(running).To(BeTrue())
	g.Expect(args[0]).NotTo(ContainElement(ContainSubstring("ClusterProfile")), "restarted without the gate")
	g.Expect(env.HubPodStarted(hubNamespace, registration)).To(BeTemporally(">", started), "a new pod")

	// The mirror is off: a newly bound namespace stays without a profile
	// for several times what publishing took while it was on.
	bind("team-off")
	g.Consistently(func() bool {
		return apierrors.IsNotFound(hub.Get(ctx, types.NamespacedName{Namespace: "team-off", Name: "cluster1"}, &cpv1alpha1.ClusterProfile{}))
	}, max(10*time.Second, 5*published), 500*time.Millisecond).Should(BeTrue())
}
