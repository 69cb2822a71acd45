package addon

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
)

const (
	// agentName names the agent's ServiceAccount and Deployment.
	agentName = "cluster-profile-agent"
	// clusterRoleName names the agent's cluster-wide rights and their binding.
	clusterRoleName = agentapi.ClusterRole
	// hubKubeconfigMount is where the Deployment mounts the hub kubeconfig
	// Secret addon-framework's registration writes.
	hubKubeconfigMount = "/var/run/hub"
	probePort          = 8081
)

// agentSettings is what the agent's objects on one managed cluster depend on.
type agentSettings struct {
	Options
	Cluster   string
	Namespace string
	// NodeSelector and Tolerations come from the addon's
	// AddOnDeploymentConfig, if any.
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}

// agentObjects are the objects that run the agent on one managed cluster,
// with the least the agent needs: its ServiceAccount, its rights and its
// Deployment.
func agentObjects(s agentSettings) []runtime.Object {
	account := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: agentName, Namespace: s.Namespace}
	return []runtime.Object{
		&corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"),
			ObjectMeta: metav1.ObjectMeta{Name: agentName, Namespace: s.Namespace}},
		clusterRole(),
		&rbacv1.ClusterRoleBinding{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "ClusterRoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: clusterRoleName},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRoleName},
			Subjects:   []rbacv1.Subject{account}},
		// The addon lease from which the klusterlet reports the agent
		// Available: the agent's own, by name (create cannot be narrowed by
		// name in RBAC).
		role(clusterRoleName+":addon-lease", s.Namespace, []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
				ResourceNames: []string{agentapi.AddonName}, Verbs: []string{"get", "update"}},
		}),
		roleBinding(clusterRoleName+":addon-lease", s.Namespace, account),
		// controller-manager and scheduler health: their leader-election Leases.
		role(clusterRoleName+":control-plane-leases", "kube-system", []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
				ResourceNames: []string{"kube-controller-manager", "kube-scheduler"}, Verbs: []string{"get"}},
		}),
		roleBinding(clusterRoleName+":control-plane-leases", "kube-system", account),
		agentDeployment(s),
	}
}

// clusterRole is what the agent reads and writes on its managed cluster, and
// nothing more.
func clusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "ClusterRole"),
		ObjectMeta: metav1.ObjectMeta{Name: clusterRoleName},
		Rules: []rbacv1.PolicyRule{
			// Node health and capacity.
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list", "watch"}},
			// The API server's own readiness checks (etcd included).
			{NonResourceURLs: []string{"/readyz"}, Verbs: []string{"get"}},
			// Node facts travel to the hub as ClusterClaims, through the
			// klusterlet. The agent reads every claim (to find its own) and
			// changes only its own, by name; RBAC cannot narrow a create by
			// name, so create stays open (the agent's PlanClaims never
			// creates a name outside agentapi.Claims), but an existing claim
			// (a reserved one such as id.k8s.io) cannot be overwritten.
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"clusterclaims"},
				Verbs: []string{"list", "create"}},
			{APIGroups: []string{"cluster.open-cluster-management.io"}, Resources: []string{"clusterclaims"},
				ResourceNames: agentapi.Claims, Verbs: []string{"update", "delete"}},
			// This ClusterRole itself, which owns the claims: removing the
			// addon removes it, and the garbage collector the claims.
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"},
				ResourceNames: []string{clusterRoleName}, Verbs: []string{"get"}},
		}}
}

func role(name, namespace string, rules []rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "Role"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Rules: rules}
}

func roleBinding(name, namespace string, subject rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "RoleBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{subject}}
}

// agentDeployment runs one agent, non-root, read-only, without privileges, with
// the hub kubeconfig addon-framework's registration keeps current.
func agentDeployment(s agentSettings) *appsv1.Deployment {
	labels := map[string]string{"app": agentName}
	return &appsv1.Deployment{TypeMeta: typeMeta(appsv1.SchemeGroupVersion.String(), "Deployment"),
		ObjectMeta: metav1.ObjectMeta{Name: agentName, Namespace: s.Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: agentName,
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					NodeSelector: s.NodeSelector,
					Tolerations:  s.Tolerations,
					Volumes: []corev1.Volume{{Name: "hub-config", VolumeSource: corev1.VolumeSource{
						Secret: &corev1.SecretVolumeSource{SecretName: agentapi.AddonName + "-hub-kubeconfig"}}}},
					Containers: []corev1.Container{agentContainer(s)},
				},
			},
		},
	}
}

func agentContainer(s agentSettings) corev1.Container {
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(probePort)}}}
	}
	return corev1.Container{
		Name:            "agent",
		Image:           s.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"/clusterprofile-agent"},
		Args: []string{
			"--hub-kubeconfig=" + hubKubeconfigMount + "/kubeconfig",
			"--cluster-name=" + s.Cluster,
			"--addon-namespace=" + s.Namespace,
			"--period=" + s.Period.String(),
			"--lease-stale-after=" + s.LeaseStaleAfter.String(),
			fmt.Sprintf("--unhealthy-node-tolerance=%d", s.UnhealthyNodeTolerance),
			"--facts-min-interval=" + s.Facts.MinInterval.String(),
			"--facts-significant-change=" + strconv.FormatFloat(s.Facts.SignificantFraction, 'g', -1, 64),
			"--facts-refresh=" + s.Facts.Refresh.String(),
			fmt.Sprintf("--health-probe-bind-address=:%d", probePort),
		},
		SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
		LivenessProbe:  probe("/healthz"),
		ReadinessProbe: probe("/readyz"),
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "hub-config", MountPath: hubKubeconfigMount, ReadOnly: true}},
	}
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}
