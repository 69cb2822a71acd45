// Package testing has fluent builders for the objects the tests of this
// project create, so that a test states only what matters to it.
package testing

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	proxyv1alpha1 "open-cluster-management.io/cluster-proxy/pkg/apis/proxy/v1alpha1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
)

// ConditionTime is the transition time builders give conditions: fixed and
// at second precision, as the API server stores it, so tests can compare.
var ConditionTime = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// ManagedClusterWrapper builds a ManagedCluster.
type ManagedClusterWrapper struct{ clusterv1.ManagedCluster }

// MakeManagedCluster starts a ManagedCluster named name.
func MakeManagedCluster(name string) *ManagedClusterWrapper {
	return &ManagedClusterWrapper{clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
	}}
}

// Obj returns the built object.
func (w *ManagedClusterWrapper) Obj() *clusterv1.ManagedCluster { return &w.ManagedCluster }

// Label sets a label.
func (w *ManagedClusterWrapper) Label(key, value string) *ManagedClusterWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[key] = value
	return w
}

// ClusterSet puts the cluster in an exclusive set.
func (w *ManagedClusterWrapper) ClusterSet(set string) *ManagedClusterWrapper {
	return w.Label(clusterv1beta2.ClusterSetLabel, set)
}

// Version sets status.version.kubernetes.
func (w *ManagedClusterWrapper) Version(v string) *ManagedClusterWrapper {
	w.Status.Version.Kubernetes = v
	return w
}

// Claim appends a cluster claim (duplicates and empty fields allowed, as in the API).
func (w *ManagedClusterWrapper) Claim(name, value string) *ManagedClusterWrapper {
	w.Status.ClusterClaims = append(w.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: name, Value: value})
	return w
}

// Condition sets a status condition.
func (w *ManagedClusterWrapper) Condition(conditionType string, status metav1.ConditionStatus, reason, message string) *ManagedClusterWrapper {
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == conditionType {
			w.Status.Conditions = append(w.Status.Conditions[:i], w.Status.Conditions[i+1:]...)
			break
		}
	}
	w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{
		Type: conditionType, Status: status, Reason: reason, Message: message, LastTransitionTime: ConditionTime,
	})
	return w
}

// Available sets ManagedClusterConditionAvailable.
func (w *ManagedClusterWrapper) Available(status metav1.ConditionStatus) *ManagedClusterWrapper {
	return w.Condition(clusterv1.ManagedClusterConditionAvailable, status, "ManagedClusterAvailable", "Managed cluster is available")
}

// Joined sets ManagedClusterJoined.
func (w *ManagedClusterWrapper) Joined() *ManagedClusterWrapper {
	return w.Condition(clusterv1.ManagedClusterConditionJoined, metav1.ConditionTrue, "ManagedClusterJoined", "Managed cluster joined")
}

// Finalizer adds a finalizer, so deleting the cluster leaves it terminating.
func (w *ManagedClusterWrapper) Finalizer(f string) *ManagedClusterWrapper {
	w.Finalizers = append(w.Finalizers, f)
	return w
}

// ClusterSetWrapper builds a ManagedClusterSet.
type ClusterSetWrapper struct {
	clusterv1beta2.ManagedClusterSet
}

// MakeClusterSet starts an exclusive-label set named name.
func MakeClusterSet(name string) *ClusterSetWrapper {
	return &ClusterSetWrapper{clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType: clusterv1beta2.ExclusiveClusterSetLabel,
		}},
	}}
}

// Obj returns the built object.
func (w *ClusterSetWrapper) Obj() *clusterv1beta2.ManagedClusterSet { return &w.ManagedClusterSet }

// Selector makes it a label-selector set; an empty selector picks every cluster.
func (w *ClusterSetWrapper) Selector(selector metav1.LabelSelector) *ClusterSetWrapper {
	w.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{
		SelectorType:  clusterv1beta2.LabelSelector,
		LabelSelector: &selector,
	}
	return w
}

// BindingWrapper builds a ManagedClusterSetBinding.
type BindingWrapper struct {
	clusterv1beta2.ManagedClusterSetBinding
}

// MakeBinding starts a binding of set into namespace (OCM requires name == set).
func MakeBinding(namespace, set string) *BindingWrapper {
	return &BindingWrapper{clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: namespace},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set},
	}}
}

// Obj returns the built object.
func (w *BindingWrapper) Obj() *clusterv1beta2.ManagedClusterSetBinding {
	return &w.ManagedClusterSetBinding
}

// Annotation sets an annotation.
func (w *BindingWrapper) Annotation(key, value string) *BindingWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[key] = value
	return w
}

// Bound sets the Bound condition, as OCM's binding controller would.
func (w *BindingWrapper) Bound(bound bool) *BindingWrapper {
	status, reason := metav1.ConditionTrue, "ClusterSetBound"
	if !bound {
		status, reason = metav1.ConditionFalse, "ClusterSetNotFound"
	}
	w.Status.Conditions = []metav1.Condition{{
		Type: clusterv1beta2.ClusterSetBindingBoundType, Status: status, Reason: reason, LastTransitionTime: ConditionTime,
	}}
	return w
}

// ClusterProfileWrapper builds a ClusterProfile.
type ClusterProfileWrapper struct{ cpv1alpha1.ClusterProfile }

// MakeClusterProfile starts a profile of manager in namespace.
func MakeClusterProfile(namespace, name, manager string) *ClusterProfileWrapper {
	return &ClusterProfileWrapper{cpv1alpha1.ClusterProfile{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Labels: map[string]string{cpv1alpha1.LabelClusterManagerKey: manager}},
		Spec: cpv1alpha1.ClusterProfileSpec{DisplayName: name, ClusterManager: cpv1alpha1.ClusterManager{Name: manager}},
	}}
}

// Obj returns the built object.
func (w *ClusterProfileWrapper) Obj() *cpv1alpha1.ClusterProfile { return &w.ClusterProfile }

// MakeProxyConfiguration is cluster-proxy's ManagedProxyConfiguration
// "cluster-proxy" with its proxy servers in namespace, as the addon installs it.
func MakeProxyConfiguration(namespace string) *proxyv1alpha1.ManagedProxyConfiguration {
	return &proxyv1alpha1.ManagedProxyConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-proxy"},
		Spec: proxyv1alpha1.ManagedProxyConfigurationSpec{
			Authentication: proxyv1alpha1.ManagedProxyConfigurationAuthentication{
				Signer: proxyv1alpha1.ManagedProxyConfigurationCertificateSigner{Type: proxyv1alpha1.SelfSigned},
			},
			ProxyServer: proxyv1alpha1.ManagedProxyConfigurationProxyServer{Image: "proxy-server", Namespace: namespace},
			ProxyAgent:  proxyv1alpha1.ManagedProxyConfigurationProxyAgent{Image: "proxy-agent"},
		},
	}
}

// NamespaceObj is an active namespace.
func NamespaceObj(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
