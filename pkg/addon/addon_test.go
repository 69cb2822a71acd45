package addon

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"open-cluster-management.io/addon-framework/pkg/addonmanager/addontesting"
	addonapiv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	addonfake "open-cluster-management.io/api/client/addon/clientset/versioned/fake"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

func render(t *testing.T, cluster string, addon *addonapiv1beta1.ManagedClusterAddOn) []runtime.Object {
	t.Helper()
	//lint:ignore SA1019 OCM's generated clientset has no NewClientset
	addonClient := addonfake.NewSimpleClientset()
	agentAddon, err := NewAgentAddon(kubefake.NewClientset(), addonClient, DefaultOptions("quay.io/example/clusterprofile-bundle:v1"))
	if err != nil {
		t.Fatal(err)
	}
	objects, err := agentAddon.Manifests(context.Background(), addontesting.NewManagedCluster(cluster), addon)
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

func deployment(t *testing.T, objects []runtime.Object) *appsv1.Deployment {
	t.Helper()
	for _, o := range objects {
		if d, ok := o.(*appsv1.Deployment); ok {
			return d
		}
	}
	t.Fatal("no Deployment rendered")
	return nil
}

func TestManifestsPerCluster(t *testing.T) {
	customNamespace := addontesting.NewAddon(agentapi.AddonName, "cluster2")
	customNamespace.Annotations = map[string]string{addonapiv1beta1.InstallNamespaceAnnotation: "fleet-agents"}
	cases := map[string]struct {
		cluster   string
		addon     *addonapiv1beta1.ManagedClusterAddOn
		namespace string
	}{
		"default install namespace": {cluster: "cluster1", addon: addontesting.NewAddon(agentapi.AddonName, "cluster1"),
			namespace: agentapi.DefaultInstallNamespace},
		"install namespace from the addon": {cluster: "cluster2", addon: customNamespace, namespace: "fleet-agents"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objects := render(t, tc.cluster, tc.addon)
			d := deployment(t, objects)
			if d.Namespace != tc.namespace {
				t.Errorf("Deployment namespace = %q, want %q", d.Namespace, tc.namespace)
			}
			c := d.Spec.Template.Spec.Containers[0]
			wantArgs := []string{
				"--hub-kubeconfig=/var/run/hub/kubeconfig",
				"--cluster-name=" + tc.cluster,
				"--addon-namespace=" + tc.namespace,
				"--period=30s",
				"--lease-stale-after=1m0s",
				"--unhealthy-node-tolerance=0", "--facts-min-interval=30s", "--facts-significant-change=0.1", "--facts-refresh=1h0m0s",
				"--health-probe-bind-address=:8081",
			}
			if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
				t.Errorf("agent args (-want +got):\n%s", diff)
			}
			if c.Image != "quay.io/example/clusterprofile-bundle:v1" {
				t.Errorf("image = %q", c.Image)
			}
			if got := d.Spec.Template.Spec.Volumes[0].Secret.SecretName; got != agentapi.AddonName+"-hub-kubeconfig" {
				t.Errorf("hub kubeconfig Secret = %q", got)
			}
			if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				t.Error("the agent container must run with a read-only root filesystem")
			}
			var kinds []string
			for _, o := range objects {
				kinds = append(kinds, o.GetObjectKind().GroupVersionKind().Kind)
			}
			slices.Sort(kinds)
			want := []string{"ClusterRole", "ClusterRoleBinding", "Deployment", "Role", "Role", "RoleBinding", "RoleBinding", "ServiceAccount"}
			if diff := cmp.Diff(want, kinds); diff != "" {
				t.Errorf("rendered kinds (-want +got):\n%s", diff)
			}
		})
	}
}

// On its managed cluster the agent may change only its own claims and its
// own lease, by name (create cannot be narrowed by name in RBAC).
func TestManagedClusterRBACNamesTheAgentsOwnObjects(t *testing.T) {
	var got []rbacv1.PolicyRule
	for _, o := range render(t, "cluster1", addontesting.NewAddon(agentapi.AddonName, "cluster1")) {
		switch r := o.(type) {
		case *rbacv1.ClusterRole:
			got = append(got, r.Rules...)
		case *rbacv1.Role:
			if r.Namespace == agentapi.DefaultInstallNamespace {
				got = append(got, r.Rules...)
			}
		}
	}
	claims := "cluster.open-cluster-management.io"
	leases := "coordination.k8s.io"
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list", "watch"}},
		{NonResourceURLs: []string{"/readyz"}, Verbs: []string{"get"}},
		{APIGroups: []string{claims}, Resources: []string{"clusterclaims"}, Verbs: []string{"list", "create"}},
		{APIGroups: []string{claims}, Resources: []string{"clusterclaims"}, ResourceNames: agentapi.Claims, Verbs: []string{"update", "delete"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{agentapi.ClusterRole}, Verbs: []string{"get"}},
		{APIGroups: []string{leases}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{leases}, Resources: []string{"leases"}, ResourceNames: []string{agentapi.AddonName}, Verbs: []string{"get", "update"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the agent's rules on its cluster (-want +got):\n%s", diff)
	}
}

// The agent's hub identity may only read its own ManagedClusterAddOn and
// write its status: no other resource, no other addon, no wildcard.
func TestHubRoleAllowsOnlyTheAgentsOwnAddonStatus(t *testing.T) {
	for _, rule := range HubRole().Rules {
		if diff := cmp.Diff([]string{agentapi.AddonName}, rule.ResourceNames); diff != "" {
			t.Errorf("rule %v must be limited to the agent's addon (-want +got):\n%s", rule, diff)
		}
		for _, v := range append(append(rule.Verbs, rule.Resources...), rule.APIGroups...) {
			if v == rbacv1.VerbAll {
				t.Errorf("rule %v has a wildcard", rule)
			}
		}
		if slices.Contains(rule.Verbs, "patch") && !slices.Equal(rule.Resources, []string{"managedclusteraddons/status"}) {
			t.Errorf("only the status may be written, got %v", rule)
		}
	}
}

// The addon's AddOnDeploymentConfig places the agent (node selector,
// tolerations) and pulls its image through the configured mirror; the whole
// Deployment is otherwise the default one.
func TestManifestsFollowTheAddOnDeploymentConfig(t *testing.T) {
	config := &addonapiv1beta1.AddOnDeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: "placement"},
		Spec: addonapiv1beta1.AddOnDeploymentConfigSpec{
			NodePlacement: &addonapiv1beta1.NodePlacement{
				NodeSelector: map[string]string{"node-role.kubernetes.io/infra": ""},
				Tolerations:  []corev1.Toleration{{Key: "infra", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			},
			Registries: []addonapiv1beta1.ImageMirror{{Source: "quay.io/example", Mirror: "mirror.corp.example/ocm"}},
		},
	}
	addon := addontesting.NewAddon(agentapi.AddonName, "cluster1")
	addon.Status.ConfigReferences = []addonapiv1beta1.ConfigReference{{
		ConfigGroupResource: addonapiv1beta1.ConfigGroupResource{Group: addonapiv1beta1.GroupName, Resource: "addondeploymentconfigs"},
		DesiredConfig: &addonapiv1beta1.ConfigSpecHash{
			ConfigReferent: addonapiv1beta1.ConfigReferent{Namespace: config.Namespace, Name: config.Name}, SpecHash: "hash"},
	}}
	//lint:ignore SA1019 OCM's generated clientset has no NewClientset
	agentAddon, err := NewAgentAddon(kubefake.NewClientset(), addonfake.NewSimpleClientset(config), DefaultOptions("quay.io/example/clusterprofile-bundle:v1"))
	if err != nil {
		t.Fatal(err)
	}
	objects, err := agentAddon.Manifests(context.Background(), addontesting.NewManagedCluster("cluster1"), addon)
	if err != nil {
		t.Fatal(err)
	}
	want := agentDeployment(agentSettings{Options: DefaultOptions("mirror.corp.example/ocm/clusterprofile-bundle:v1"),
		Cluster: "cluster1", Namespace: agentapi.DefaultInstallNamespace,
		NodeSelector: config.Spec.NodePlacement.NodeSelector, Tolerations: config.Spec.NodePlacement.Tolerations})
	if diff := cmp.Diff(want, deployment(t, objects)); diff != "" {
		t.Errorf("Deployment (-want +got):\n%s", diff)
	}
}

// The objects serialize with their kinds: addon-framework puts them into a
// ManifestWork as they are.
func TestManifestsCarryTheirKinds(t *testing.T) {
	for _, o := range render(t, "cluster1", addontesting.NewAddon(agentapi.AddonName, "cluster1")) {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var head metav1.TypeMeta
		if err := json.Unmarshal(raw, &head); err != nil {
			t.Fatal(err)
		}
		if head.APIVersion == "" || head.Kind == "" {
			t.Errorf("%T serializes without apiVersion or kind: %s", o, raw)
		}
	}
}
