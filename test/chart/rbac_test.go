package chart_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	addonapiv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	proxyv1alpha1 "open-cluster-management.io/cluster-proxy/pkg/apis/proxy/v1alpha1"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/internal/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/pkg/addon"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// outcome is how the API server answers a request of the manager.
type outcome string

const (
	allowed        outcome = "allowed"
	deniedByRBAC   outcome = "denied by RBAC"
	deniedByPolicy outcome = "denied by an admission policy"
)

func allowedIf(ok bool) outcome {
	if ok {
		return allowed
	}
	return deniedByRBAC
}

// outcomeOf classifies a response. NotFound means authorized (and admitted):
// RBAC is checked before the object is looked up.
func outcomeOf(err error) outcome {
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return allowed
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy"):
		return deniedByPolicy
	case apierrors.IsForbidden(err):
		return deniedByRBAC
	}
	return outcome("unexpected error: " + err.Error())
}

// readsMembership: every capability that acts in a namespace on a cluster's
// behalf reads which namespaces serve which clusters (pkg/membership).
func (v variant) readsMembership() bool {
	return v.mirror || v.accessProvider || v.directAccess || v.credSyncer || v.multikueue || v.argocd || v.placementDecision
}

// publishes: a gate that publishes profiles, access entries or token
// copies into bound namespaces is on, so the publish opt-out matters.
func (g gates) publishes() bool {
	return g.mirror || g.accessProvider || g.directAccess || g.credSyncer
}

// secretsWritable: the syncer's role, or the cleanup role with the syncer
// off, lets the manager write (delete) Secrets, and the policy narrows it.
func (v variant) secretsWritable() bool { return v.credSyncer || v.cleanup }

// orPolicy is the outcome of a Secret write the policy must refuse: by the
// policy where RBAC lets it through, by RBAC otherwise.
func orPolicy(rbacAllows bool) outcome {
	if rbacAllows {
		return deniedByPolicy
	}
	return deniedByRBAC
}

// requester sends requests as the manager's ServiceAccount.
type requester struct {
	c client.WithWatch
	// ns is the release namespace.
	ns string
	// consumer is a consumer namespace, holding a copy and a plain Secret.
	consumer string
	// cluster is a ManagedCluster namespace (labelled as OCM labels it),
	// holding the agent's Role; emptyCluster is another one, holding nothing.
	cluster, emptyCluster string
	// fullname prefixes the release's objects.
	fullname string
	// secretsRole is a ClusterRole with the syncer's Secret rights.
	secretsRole string
	// dyn sends requests as c does, by resource: for the APIs the suite's
	// control plane may not serve (PlacementDecisions), which c cannot map.
	dyn dynamic.Interface
}

// access is something the manager may or may not do.
type access struct {
	want func(v variant) outcome
	do   func(ctx context.Context, r requester) error
}

const (
	labelSyncedFrom       = "authentication.open-cluster-management.io/synced-from"
	annotationFromCluster = "authentication.open-cluster-management.io/synced-from-cluster"
	annotationFromMSA     = "authentication.open-cluster-management.io/synced-from-managed-serviceaccount"
	proxyCertificate      = "cluster-proxy-user-serving-cert"
	profileCRD            = "clusterprofiles.multicluster.x-k8s.io"
	placementDecisionCRD  = "placementdecisions.multicluster.x-k8s.io"
)

// The PlacementDecisions of the Cluster Inventory API (the slices the
// placement decisions capability writes), and OCM's Placements and
// PlacementDecisions (which it only reads). A request for an API the
// control plane does not serve is authorized all the same, and answers
// NotFound when RBAC allows it.
var (
	inventoryDecisions = cpv1alpha1.PlacementDecisionSchemeGroupVersionResource
	ocmPlacements      = schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Resource: "placements"}
	ocmDecisions       = schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1beta1", Resource: "placementdecisions"}
)

// inventoryDecision is a PlacementDecision slice as the placement decisions
// capability applies it, as JSON.
func inventoryDecision(namespace string) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"PlacementDecision",`+
		`"metadata":{"name":"p-decision-1","namespace":%q,"labels":{"multicluster.x-k8s.io/placement-key":"p"}},`+
		`"decisions":[{"clusterProfileRef":{"name":"c1"}}],"schedulerName":"open-cluster-management"}`, namespace))
}

// ocmObject is an object of one of OCM's placement APIs, named p in the
// namespace.
func ocmObject(gvr schema.GroupVersionResource, kind, namespace string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName("p")
	return u
}

func dryRunPatch() metav1.PatchOptions {
	return metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}
}

func watchResource(ctx context.Context, r requester, gvr schema.GroupVersionResource) error {
	w, err := r.dyn.Resource(gvr).Watch(ctx, metav1.ListOptions{})
	if err == nil {
		w.Stop()
	}
	return err
}

// argoCDConfig is the config of an Argo CD cluster Secret as the
// integration writes it with the chart's defaults.
const argoCDConfig = `{"execProviderConfig":{"command":"/plugins/cp-creds","args":["--managed-serviceaccount=argocd"],` +
	`"apiVersion":"client.authentication.k8s.io/v1","provideClusterInfo":true,"config":{"clusterName":"c1"}},` +
	`"tlsClientConfig":{"insecure":false,"caData":"Q0E="}}`

// argoCDClusterSecret is an Argo CD cluster Secret in namespace with config.
func argoCDClusterSecret(namespace, config string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "cluster-c1", Labels: map[string]string{
			"argocd.argoproj.io/secret-type": "cluster", "clusterprofile.open-cluster-management.io/argocd": "open-cluster-management"}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"name": []byte("c1"), "server": []byte("https://proxy.example:9092/c1"), "config": []byte(config)},
	}
}

// syncedCopy is a Secret as the syncer writes it, for cluster and msa.
func syncedCopy(ns, cluster, msa string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster + "-" + msa,
			Labels:      map[string]string{labelSyncedFrom: cluster + "-" + msa},
			Annotations: map[string]string{annotationFromCluster: cluster, annotationFromMSA: msa}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"token": []byte("t"), "ca.crt": []byte("ca")},
	}
}

// The fixtures every variant starts with.
func fixtureCopy(r requester) *corev1.Secret  { return syncedCopy(r.consumer, "c1", "msa") }
func fixturePlain(r requester) *corev1.Secret { return plainSecret(r.consumer, "plain") }

// agentRole and agentRoleBinding are what the addon creates in a cluster
// namespace for that cluster's agent.
func agentRole(ns string) *rbacv1.Role {
	role := addon.HubRole()
	role.Namespace = ns
	return role
}

func agentRoleBinding(ns string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: addon.HubRole().Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: addon.HubRole().Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: addon.AgentUser(ns)}}}
}

func grantTo(user, ns, kind, role string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "grant-" + user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
}

func plainSecret(ns, name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("p")}}
}

func mergePatch(patch string) client.Patch {
	return client.RawPatch(types.MergePatchType, []byte(patch))
}

func watchOnce(ctx context.Context, r requester, list client.ObjectList, opts ...client.ListOption) error {
	w, err := r.c.Watch(ctx, list, opts...)
	if err == nil {
		w.Stop()
	}
	return err
}

// accesses is what the tests ask of the manager's ServiceAccount, with the
// answer each variant of the chart must give. Writes are dry runs: they go
// through authorization and admission and change nothing.
var accesses = map[string]access{
	// Base: whatever the gates.
	"get the ClusterProfile CRD": {
		want: func(variant) outcome { return allowed },
		do: func(ctx context.Context, r requester) error {
			return r.c.Get(ctx, types.NamespacedName{Name: profileCRD}, &apiextensionsv1.CustomResourceDefinition{})
		},
	},
	"watch the ClusterProfile CRD by name": {
		want: func(variant) outcome { return allowed },
		do: func(ctx context.Context, r requester) error {
			return watchOnce(ctx, r, &apiextensionsv1.CustomResourceDefinitionList{}, client.MatchingFields{"metadata.name": profileCRD})
		},
	},
	"list every CRD": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.c.List(ctx, &apiextensionsv1.CustomResourceDefinitionList{})
		},
	},
	"get another CRD": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.c.Get(ctx, types.NamespacedName{Name: "managedclusters.cluster.open-cluster-management.io"}, &apiextensionsv1.CustomResourceDefinition{})
		},
	},
	"change the ClusterProfile CRD": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: profileCRD}}
			return r.c.Patch(ctx, crd, mergePatch(`{"metadata":{"labels":{"x":"y"}}}`), client.DryRunAll)
		},
	},
	"list ClusterProfiles in every namespace": {
		want: func(variant) outcome { return allowed },
		do:   func(ctx context.Context, r requester) error { return r.c.List(ctx, &cpv1alpha1.ClusterProfileList{}) },
	},
	"watch ClusterProfiles": {
		want: func(variant) outcome { return allowed },
		do: func(ctx context.Context, r requester) error {
			return watchOnce(ctx, r, &cpv1alpha1.ClusterProfileList{})
		},
	},
	"create events.k8s.io Events": {
		want: func(variant) outcome { return allowed },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, &eventsv1.Event{
				ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "profile-event"},
				EventTime:  metav1.NewMicroTime(time.Now()), ReportingController: "clusterprofile-manager", ReportingInstance: "test",
				Action: "Test", Reason: "Test", Type: corev1.EventTypeNormal,
				Regarding: corev1.ObjectReference{Kind: "ClusterProfile", Namespace: r.ns, Name: "c1"},
			}, client.DryRunAll)
		},
	},
	"record leader election Events in the release namespace": {
		want: func(variant) outcome { return allowed },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Namespace: r.ns, Name: "lease-event"},
				InvolvedObject: corev1.ObjectReference{Kind: "Lease", Namespace: r.ns, Name: "lease"},
				Reason:         "LeaderElection", Message: "became leader", Type: corev1.EventTypeNormal,
			}, client.DryRunAll)
		},
	},
	"record core Events in another namespace": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Namespace: "default", Name: "other-event"},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p"},
				Reason:         "Test", Message: "m", Type: corev1.EventTypeNormal,
			}, client.DryRunAll)
		},
	},
	"take the leader election Lease": {
		want: func(variant) outcome { return allowed },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns,
				Name: "clusterprofile-manager.open-cluster-management.io"}}, client.DryRunAll)
		},
	},
	"take a Lease in another namespace": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "l"}}, client.DryRunAll)
		},
	},

	// Mirror.
	"create a ClusterProfile with Server-Side Apply": {
		want: func(v variant) outcome { return allowedIf(v.mirror) },
		do: func(ctx context.Context, r requester) error {
			return applyProfile(ctx, r, r.ns, "new-profile")
		},
	},
	"create a ClusterProfile in a ManagedCluster namespace": {
		want: func(v variant) outcome { return orPolicy(v.mirror) },
		do: func(ctx context.Context, r requester) error {
			return applyProfile(ctx, r, r.emptyCluster, "c1")
		},
	},
	"change a ClusterProfile's labels": {
		want: func(v variant) outcome { return allowedIf(v.mirror) },
		do: func(ctx context.Context, r requester) error {
			p := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "c1"}}
			return r.c.Patch(ctx, p, mergePatch(`{"metadata":{"labels":{"x":"y"}}}`), client.DryRunAll)
		},
	},
	"replace a ClusterProfile (PUT)": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			p := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "c1", ResourceVersion: "1"}}
			return r.c.Update(ctx, p, client.DryRunAll)
		},
	},
	"delete a ClusterProfile": {
		want: func(v variant) outcome { return allowedIf(v.mirror || v.cleanup) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Delete(ctx, &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "c1"}}, client.DryRunAll)
		},
	},
	"patch a ClusterProfile's status": {
		// Every install: a disabled access provider withdraws its entry.
		want: func(variant) outcome { return allowed },
		do: func(ctx context.Context, r requester) error {
			p := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "c1"}}
			return r.c.Status().Patch(ctx, p, mergePatch(`{"status":{}}`), client.DryRunAll)
		},
	},
	"list ManagedClusters": {
		want: func(v variant) outcome { return allowedIf(v.readsMembership() || v.agent) },
		do:   func(ctx context.Context, r requester) error { return r.c.List(ctx, &clusterv1.ManagedClusterList{}) },
	},
	"watch ManagedClusters": {
		want: func(v variant) outcome { return allowedIf(v.readsMembership() || v.agent) },
		do: func(ctx context.Context, r requester) error {
			return watchOnce(ctx, r, &clusterv1.ManagedClusterList{})
		},
	},
	"apply a MultiKueueCluster": {
		want: func(v variant) outcome { return allowedIf(v.multikueue) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(multiKueueCluster("rbac-c1")),
				client.FieldOwner("clusterprofile-multikueue"), client.DryRunAll)
		},
	},
	"watch MultiKueueClusters": {
		want: func(v variant) outcome { return allowedIf(v.multikueue) },
		do: func(ctx context.Context, r requester) error {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion("kueue.x-k8s.io/v1beta2")
			list.SetKind("MultiKueueClusterList")
			return watchOnce(ctx, r, list)
		},
	},
	"list and delete MultiKueueConfigs": {
		want: func(v variant) outcome { return allowedIf(v.multikueue || v.cleanup) },
		do: func(ctx context.Context, r requester) error {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion("kueue.x-k8s.io/v1beta2")
			list.SetKind("MultiKueueConfigList")
			if err := r.c.List(ctx, list); err != nil {
				return err
			}
			config := &unstructured.Unstructured{}
			config.SetAPIVersion("kueue.x-k8s.io/v1beta2")
			config.SetKind("MultiKueueConfig")
			config.SetName("rbac-fleet")
			return r.c.Delete(ctx, config, client.DryRunAll)
		},
	},
	"list ManagedClusterAddOns": {
		want: func(v variant) outcome { return allowedIf(v.agent) },
		do: func(ctx context.Context, r requester) error {
			return r.c.List(ctx, &addonapiv1beta1.ManagedClusterAddOnList{})
		},
	},
	"create a ManifestWork in a cluster namespace": {
		want: func(v variant) outcome { return allowedIf(v.agent) },
		do: func(ctx context.Context, r requester) error {
			work := &unstructured.Unstructured{}
			work.SetAPIVersion("work.open-cluster-management.io/v1")
			work.SetKind("ManifestWork")
			work.SetNamespace(r.ns)
			work.SetName("agent-deploy")
			return r.c.Create(ctx, work, client.DryRunAll)
		},
	},
	"delete a ClusterManagementAddOn": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			cma := &addonapiv1beta1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: "cluster-profile-agent"}}
			return r.c.Delete(ctx, cma, client.DryRunAll)
		},
	},
	"create a ManagedCluster": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "rbac-new"}}, client.DryRunAll)
		},
	},
	"change a ManagedCluster's status": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}
			return r.c.Status().Patch(ctx, mc, mergePatch(`{"status":{}}`), client.DryRunAll)
		},
	},
	"list ManagedClusterSets": {
		want: func(v variant) outcome { return allowedIf(v.readsMembership()) },
		do: func(ctx context.Context, r requester) error {
			return r.c.List(ctx, &clusterv1beta2.ManagedClusterSetList{})
		},
	},
	"list ManagedClusterSetBindings": {
		want: func(v variant) outcome { return allowedIf(v.readsMembership()) },
		do: func(ctx context.Context, r requester) error {
			return r.c.List(ctx, &clusterv1beta2.ManagedClusterSetBindingList{})
		},
	},
	"create a ManagedClusterSetBinding": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "s"},
				Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "s"}}, client.DryRunAll)
		},
	},
	"watch Namespace metadata": {
		want: func(v variant) outcome { return allowedIf(v.readsMembership()) },
		do: func(ctx context.Context, r requester) error {
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
			return watchOnce(ctx, r, list)
		},
	},
	"create a Namespace": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rbac-new"}}, client.DryRunAll)
		},
	},
	"delete a Namespace": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}, client.DryRunAll)
		},
	},
	"list ClusterManagers": {
		want: func(v variant) outcome { return allowedIf(v.mirror || v.cleanup || v.placementDecision) },
		do:   func(ctx context.Context, r requester) error { return r.c.List(ctx, &operatorv1.ClusterManagerList{}) },
	},
	"change a ClusterManager": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: "cluster-manager"}}
			return r.c.Patch(ctx, cm, mergePatch(`{"spec":{}}`), client.DryRunAll)
		},
	},
	"delete a ClusterManager": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.c.Delete(ctx, &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: "cluster-manager"}}, client.DryRunAll)
		},
	},

	// Access providers.
	"list ManagedProxyConfigurations": {
		want: func(v variant) outcome { return allowedIf(v.accessProvider) },
		do: func(ctx context.Context, r requester) error {
			return r.c.List(ctx, &proxyv1alpha1.ManagedProxyConfigurationList{})
		},
	},
	"change a ManagedProxyConfiguration": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			config := &proxyv1alpha1.ManagedProxyConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "cluster-proxy"}}
			return r.c.Patch(ctx, config, mergePatch(`{"spec":{}}`), client.DryRunAll)
		},
	},
	"get cluster-proxy's user server certificate": {
		want: func(v variant) outcome { return allowedIf(v.accessProvider || v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: proxyCertificate}, &corev1.Secret{})
		},
	},
	"watch the user server certificate by name in every namespace": {
		want: func(v variant) outcome { return allowedIf(v.accessProvider || v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return watchOnce(ctx, r, &corev1.SecretList{}, client.MatchingFields{"metadata.name": proxyCertificate})
		},
	},

	// Upstream twins: their manager Deployments by name (everywhere, to
	// report decoys), their ClusterManagementAddOns by name; nothing else.
	"watch cluster-proxy's manager Deployment by name in every namespace": {
		want: func(v variant) outcome { return allowedIf(v.accessProvider) },
		do: func(ctx context.Context, r requester) error {
			return watchOnce(ctx, r, &appsv1.DeploymentList{}, client.MatchingFields{"metadata.name": "cluster-proxy-addon-manager"})
		},
	},
	"watch managed-serviceaccount's manager Deployment by name in every namespace": {
		want: func(v variant) outcome { return allowedIf(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return watchOnce(ctx, r, &appsv1.DeploymentList{}, client.MatchingFields{"metadata.name": "managed-serviceaccount-addon-manager"})
		},
	},
	"list Deployments of any name": {
		want: func(variant) outcome { return deniedByRBAC },
		do:   func(ctx context.Context, r requester) error { return r.c.List(ctx, &appsv1.DeploymentList{}) },
	},
	"watch cluster-proxy's ClusterManagementAddOn by name": {
		want: func(v variant) outcome { return allowedIf(v.accessProvider || v.agent) },
		do: func(ctx context.Context, r requester) error {
			return watchOnce(ctx, r, &addonapiv1beta1.ClusterManagementAddOnList{}, client.MatchingFields{"metadata.name": "cluster-proxy"})
		},
	},
	"watch managed-serviceaccount's ClusterManagementAddOn by name": {
		want: func(v variant) outcome { return allowedIf(v.credSyncer || v.agent) },
		do: func(ctx context.Context, r requester) error {
			return watchOnce(ctx, r, &addonapiv1beta1.ClusterManagementAddOnList{}, client.MatchingFields{"metadata.name": "managed-serviceaccount"})
		},
	},

	// The Argo CD integration: its cluster Secrets in Argo CD's namespace,
	// shaped as the -secret-writes policy says.
	"create an Argo CD cluster Secret in Argo CD's namespace": {
		want: func(v variant) outcome {
			if v.argocd {
				return allowed
			}
			return orPolicy(v.credSyncer)
		},
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, argoCDClusterSecret("argocd", argoCDConfig), client.DryRunAll)
		},
	},
	"create an Argo CD cluster Secret that runs another program": {
		want: func(v variant) outcome { return orPolicy(v.argocd || v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, argoCDClusterSecret("argocd", strings.Replace(argoCDConfig, "/plugins/cp-creds", "/bin/sh", 1)), client.DryRunAll)
		},
	},
	"create an Argo CD cluster Secret that runs cp-creds for another ManagedServiceAccount": {
		want: func(v variant) outcome { return orPolicy(v.argocd || v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, argoCDClusterSecret("argocd", strings.Replace(argoCDConfig, "=argocd", "=multikueue", 1)), client.DryRunAll)
		},
	},
	"create an Argo CD cluster Secret with a key it never writes": {
		want: func(v variant) outcome { return orPolicy(v.argocd || v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			s := argoCDClusterSecret("argocd", argoCDConfig)
			s.Data["token"] = []byte("t")
			return r.c.Create(ctx, s, client.DryRunAll)
		},
	},
	"create an Argo CD cluster Secret in another namespace": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, argoCDClusterSecret(r.consumer, argoCDConfig), client.DryRunAll)
		},
	},
	"watch Secrets in Argo CD's namespace": {
		want: func(v variant) outcome { return allowedIf(v.argocd || v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return watchOnce(ctx, r, &corev1.SecretList{}, client.InNamespace("argocd"))
		},
	},

	// Placement decisions: the Cluster Inventory API's slices, written in
	// any namespace (a Placement's); OCM's Placements and PlacementDecisions,
	// read only.
	"apply a Cluster Inventory PlacementDecision in a consumer namespace": {
		want: func(v variant) outcome { return allowedIf(v.placementDecision) },
		do: func(ctx context.Context, r requester) error {
			_, err := r.dyn.Resource(inventoryDecisions).Namespace(r.consumer).Patch(ctx, "p-decision-1", types.ApplyPatchType,
				inventoryDecision(r.consumer), metav1.PatchOptions{FieldManager: "clusterprofile-placement-decisions", DryRun: []string{metav1.DryRunAll}})
			return err
		},
	},
	"patch a Cluster Inventory PlacementDecision in any namespace": {
		want: func(v variant) outcome { return allowedIf(v.placementDecision) },
		do: func(ctx context.Context, r requester) error {
			_, err := r.dyn.Resource(inventoryDecisions).Namespace("default").Patch(ctx, "p-decision-1", types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"x":"y"}}}`), dryRunPatch())
			return err
		},
	},
	"replace a Cluster Inventory PlacementDecision (PUT)": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(inventoryDecision(r.consumer)); err != nil {
				return err
			}
			u.SetResourceVersion("1")
			_, err := r.dyn.Resource(inventoryDecisions).Namespace(r.consumer).Update(ctx, u, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		},
	},
	"delete a Cluster Inventory PlacementDecision": {
		want: func(v variant) outcome { return allowedIf(v.placementDecision || v.cleanup) },
		do: func(ctx context.Context, r requester) error {
			return r.dyn.Resource(inventoryDecisions).Namespace(r.consumer).Delete(ctx, "p-decision-1",
				metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		},
	},
	"delete every Cluster Inventory PlacementDecision of a namespace": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.dyn.Resource(inventoryDecisions).Namespace(r.consumer).DeleteCollection(ctx,
				metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}, metav1.ListOptions{})
		},
	},
	"list Cluster Inventory PlacementDecisions in every namespace": {
		want: func(v variant) outcome { return allowedIf(v.placementDecision || v.cleanup) },
		do: func(ctx context.Context, r requester) error {
			_, err := r.dyn.Resource(inventoryDecisions).List(ctx, metav1.ListOptions{})
			return err
		},
	},
	"watch Cluster Inventory PlacementDecisions in every namespace": {
		want: func(v variant) outcome { return allowedIf(v.placementDecision) },
		do:   func(ctx context.Context, r requester) error { return watchResource(ctx, r, inventoryDecisions) },
	},
	"change the PlacementDecision CRD": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: placementDecisionCRD}}
			return r.c.Patch(ctx, crd, mergePatch(`{"metadata":{"labels":{"x":"y"}}}`), client.DryRunAll)
		},
	},
	"watch OCM Placements": {
		want: func(v variant) outcome { return allowedIf(v.placementDecision) },
		do:   func(ctx context.Context, r requester) error { return watchResource(ctx, r, ocmPlacements) },
	},
	"watch OCM PlacementDecisions": {
		want: func(v variant) outcome { return allowedIf(v.placementDecision) },
		do:   func(ctx context.Context, r requester) error { return watchResource(ctx, r, ocmDecisions) },
	},
	"patch an OCM Placement": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			_, err := r.dyn.Resource(ocmPlacements).Namespace(r.consumer).Patch(ctx, "p", types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"x":"y"}}}`), dryRunPatch())
			return err
		},
	},
	"patch an OCM PlacementDecision": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			_, err := r.dyn.Resource(ocmDecisions).Namespace(r.consumer).Patch(ctx, "p-decision-1", types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"x":"y"}}}`), dryRunPatch())
			return err
		},
	},
	"create an OCM PlacementDecision": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			_, err := r.dyn.Resource(ocmDecisions).Namespace(r.consumer).Create(ctx,
				ocmObject(ocmDecisions, "PlacementDecision", r.consumer), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		},
	},
	"delete an OCM PlacementDecision": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.dyn.Resource(ocmDecisions).Namespace(r.consumer).Delete(ctx, "p-decision-1",
				metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		},
	},

	// Secrets.
	"get a Secret by another name": {
		want: func(v variant) outcome { return allowedIf(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: "plain"}, &corev1.Secret{})
		},
	},
	"list Secrets in every namespace": {
		want: func(v variant) outcome { return allowedIf(v.secretsWritable()) },
		do:   func(ctx context.Context, r requester) error { return r.c.List(ctx, &corev1.SecretList{}) },
	},
	"watch Secrets in every namespace": {
		want: func(v variant) outcome { return allowedIf(v.credSyncer) },
		do:   func(ctx context.Context, r requester) error { return watchOnce(ctx, r, &corev1.SecretList{}) },
	},

	// Credential syncer.
	"list ManagedServiceAccounts": {
		want: func(v variant) outcome { return allowedIf(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.List(ctx, &authv1beta1.ManagedServiceAccountList{})
		},
	},
	"create a ManagedServiceAccount": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "m"}}, client.DryRunAll)
		},
	},
	"create a synced token copy": {
		want: func(v variant) outcome { return allowedIf(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, syncedCopy(r.consumer, "c2", "msa"), client.DryRunAll)
		},
	},
	"update a synced token copy": {
		want: func(v variant) outcome { return allowedIf(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Patch(ctx, fixtureCopy(r), mergePatch(`{"data":{"token":"dDI="}}`), client.DryRunAll)
		},
	},
	"delete a synced token copy": {
		want: func(v variant) outcome { return allowedIf(v.secretsWritable()) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Delete(ctx, fixtureCopy(r), client.DryRunAll)
		},
	},
	"replace a synced token copy (PUT)": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			s := fixtureCopy(r)
			s.ResourceVersion = "1"
			return r.c.Update(ctx, s, client.DryRunAll)
		},
	},
	"create a Secret that is not a copy": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, plainSecret(r.consumer, "new-plain"), client.DryRunAll)
		},
	},
	"create a copy without the source annotations": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			s := syncedCopy(r.consumer, "c2", "msa")
			s.Annotations = nil
			return r.c.Create(ctx, s, client.DryRunAll)
		},
	},
	"create a service account token Secret dressed as a copy": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			s := syncedCopy(r.consumer, "c2", "msa")
			s.Type = corev1.SecretTypeServiceAccountToken
			s.Annotations[corev1.ServiceAccountNameKey] = "default"
			return r.c.Create(ctx, s, client.DryRunAll)
		},
	},
	"create a copy under another name than <cluster>-<msa>": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			s := syncedCopy(r.consumer, "c2", "msa")
			s.Name = "kueue-webhook-tls"
			return r.c.Create(ctx, s, client.DryRunAll)
		},
	},
	"create a copy with a key besides token and ca.crt": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			s := syncedCopy(r.consumer, "c2", "msa")
			s.Data["config.json"] = []byte("{}")
			return r.c.Create(ctx, s, client.DryRunAll)
		},
	},
	"create a copy in kube-system": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, syncedCopy("kube-system", "c2", "msa"), client.DryRunAll)
		},
	},
	"create a copy in a ManagedCluster namespace": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, syncedCopy(r.emptyCluster, "c2", "msa"), client.DryRunAll)
		},
	},
	"create a copy in the release namespace": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, syncedCopy(r.ns, "c2", "msa"), client.DryRunAll)
		},
	},
	"turn a Secret into a copy": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"c1-msa"},"annotations":{%q:"c1",%q:"msa"}},"data":{"token":"dA=="}}`,
				labelSyncedFrom, annotationFromCluster, annotationFromMSA)
			return r.c.Patch(ctx, fixturePlain(r), mergePatch(patch), client.DryRunAll)
		},
	},
	"change a Secret that is not a copy": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Patch(ctx, fixturePlain(r), mergePatch(`{"data":{"password":"eA=="}}`), client.DryRunAll)
		},
	},
	"strip a copy of its label": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Patch(ctx, fixtureCopy(r), mergePatch(`{"metadata":{"labels":null}}`), client.DryRunAll)
		},
	},
	"delete a Secret that is not a copy": {
		want: func(v variant) outcome { return orPolicy(v.secretsWritable()) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Delete(ctx, fixturePlain(r), client.DryRunAll)
		},
	},

	// Roles and RoleBindings: only the agent's, only in cluster namespaces.
	"create the agent's Role in a cluster namespace": {
		want: func(v variant) outcome { return allowedIf(v.agent) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, agentRole(r.emptyCluster), client.DryRunAll)
		},
	},
	"update the agent's Role in a cluster namespace": {
		want: func(v variant) outcome { return allowedIf(v.agent) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Patch(ctx, agentRole(r.cluster), mergePatch(`{"metadata":{"labels":{"x":"y"}}}`), client.DryRunAll)
		},
	},
	"bind the agent's Role to its cluster's agent": {
		want: func(v variant) outcome { return allowedIf(v.agent) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, agentRoleBinding(r.cluster), client.DryRunAll)
		},
	},
	"bind the agent's Role to another cluster's agent": {
		want: func(v variant) outcome { return orPolicy(v.agent) },
		do: func(ctx context.Context, r requester) error {
			binding := agentRoleBinding(r.cluster)
			binding.Subjects[0].Name = addon.AgentUser("another-cluster")
			return r.c.Create(ctx, binding, client.DryRunAll)
		},
	},
	"bind the agent's Role to the group of every cluster's agent": {
		want: func(v variant) outcome { return orPolicy(v.agent) },
		do: func(ctx context.Context, r requester) error {
			binding := agentRoleBinding(r.cluster)
			binding.Subjects = []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName,
				Name: "system:open-cluster-management:addon:cluster-profile-agent"}}
			return r.c.Create(ctx, binding, client.DryRunAll)
		},
	},
	"give the agent's Role more rights": {
		want: func(v variant) outcome { return orPolicy(v.agent) },
		do: func(ctx context.Context, r requester) error {
			role := agentRole(r.cluster)
			role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"multicluster.x-k8s.io"},
				Resources: []string{"clusterprofiles"}, Verbs: []string{"get"}})
			return r.c.Update(ctx, role, client.DryRunAll)
		},
	},
	"create the agent's Role outside a cluster namespace": {
		want: func(v variant) outcome { return orPolicy(v.agent) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, agentRole(r.consumer), client.DryRunAll)
		},
	},
	"grant the manager's own rights to another user in a cluster namespace": {
		want: func(v variant) outcome { return orPolicy(v.agent) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, grantTo("mallory", r.cluster, "ClusterRole", r.fullname+"-base"), client.DryRunAll)
		},
	},
	"grant the syncer's Secret rights to another user in a consumer namespace": {
		// Without the syncer's rights RBAC's escalation check refuses it.
		want: func(v variant) outcome { return orPolicy(v.agent && v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, grantTo("mallory", r.consumer, "ClusterRole", r.secretsRole), client.DryRunAll)
		},
	},
	"delete the agent's RoleBinding": {
		want: func(v variant) outcome { return allowedIf(v.agent) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Delete(ctx, agentRoleBinding(r.cluster), client.DryRunAll)
		},
	},
	"delete a Role outside a cluster namespace": {
		want: func(v variant) outcome { return orPolicy(v.agent) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Delete(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: r.fullname + "-leader-election"}}, client.DryRunAll)
		},
	},

	// The chart's admission policies: read, by name, to report them missing
	// or altered (the token-copies ones are not installed here: NotFound).
	"get the chart's policy and binding on Secret writes": {
		want: func(v variant) outcome { return allowedIf(v.secretsWritable() || v.argocd) },
		do: func(ctx context.Context, r requester) error {
			return getPolicyAndBinding(ctx, r, r.fullname+"-secret-writes")
		},
	},
	"get the chart's token-copies policy and binding": {
		want: func(v variant) outcome { return allowedIf(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return getPolicyAndBinding(ctx, r, r.fullname+"-token-copies")
		},
	},
	"get the chart's publish opt-out policy and binding": {
		want: func(v variant) outcome { return allowedIf(v.publishes()) },
		do: func(ctx context.Context, r requester) error {
			return getPolicyAndBinding(ctx, r, r.fullname+"-publish-opt-out")
		},
	},
	"get another admission policy": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return getPolicyAndBinding(ctx, r, "other-policy")
		},
	},
	"list admission policy bindings": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.c.List(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{})
		},
	},
	"change the chart's admission policy binding": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: r.fullname + "-secret-writes"}}
			return r.c.Patch(ctx, b, mergePatch(`{"spec":{"validationActions":["Warn"]}}`), client.DryRunAll)
		},
	},
	"delete the chart's admission policy binding": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: r.fullname + "-secret-writes"}}
			return r.c.Delete(ctx, b, client.DryRunAll)
		},
	},

	// Never.
	"read ConfigMaps": {
		want: func(variant) outcome { return deniedByRBAC },
		do:   func(ctx context.Context, r requester) error { return r.c.List(ctx, &corev1.ConfigMapList{}) },
	},
	"create a ClusterRoleBinding": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "rbac-new"},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}}, client.DryRunAll)
		},
	},
}

// TestManagerRBACByImpersonation installs the rendered ServiceAccount, RBAC
// and admission policy of every variant for real, then asks, as the
// manager's ServiceAccount, for everything in accesses.
func TestManagerRBACByImpersonation(t *testing.T) {
	for i, v := range allVariants() {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			ctx := framework.ContextFor(t)
			rel := chartrender.Release{Name: fmt.Sprintf("r%02d", i), Namespace: fmt.Sprintf("chart-rbac-%02d", i)}
			r := installForManager(ctx, t, rel, v.values(v.cleanup))
			createFixtures(ctx, t, r)
			if v.secretsWritable() {
				waitForPolicy(t, r, "delete a Secret that is not a copy")
			}
			if v.agent {
				waitForPolicy(t, r, "create the agent's Role outside a cluster namespace")
			}
			if v.argocd {
				waitForPolicy(t, r, "create an Argo CD cluster Secret that runs another program")
			}
			if v.mirror {
				waitForPolicy(t, r, "create a ClusterProfile in a ManagedCluster namespace")
			}
			want := map[string]outcome{}
			got := map[string]outcome{}
			for name, a := range accesses {
				want[name] = a.want(v)
				got[name] = outcomeOf(a.do(ctx, r))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("what the manager may do (-want +got):\n%s", diff)
			}
		})
	}
}

// createFixtures creates the namespaces and objects the accesses act on: a
// consumer namespace with a copy and a plain Secret, two ManagedCluster
// namespaces (one with the agent's Role), and a ClusterRole holding the
// syncer's Secret rights.
func createFixtures(ctx context.Context, t *testing.T, r requester) {
	t.Helper()
	framework.CreateNamespace(ctx, t, env.Client, r.consumer)
	for _, ns := range []string{r.cluster, r.emptyCluster} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
			Labels: map[string]string{"open-cluster-management.io/cluster-name": ns}}}); err != nil {
			t.Fatal(err)
		}
	}
	secretsRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: r.secretsRole}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch", "create", "patch", "delete"}}}}
	for _, o := range []client.Object{fixtureCopy(r), fixturePlain(r), agentRole(r.cluster), secretsRole} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), secretsRole) })
}

// installForManager creates the release namespace and the rendered objects
// that make up the manager's identity and rights (ServiceAccount, RBAC,
// Secret admission policy) for real, removes the cluster-scoped ones when the
// test ends, and returns a client that acts as that ServiceAccount.
func installForManager(ctx context.Context, t *testing.T, rel chartrender.Release, values map[string]any) requester {
	t.Helper()
	framework.CreateNamespace(ctx, t, env.Client, rel.Namespace)
	var rules []rbacv1.PolicyRule
	for _, u := range render(t, rel, values) {
		switch u.GetKind() {
		case "ClusterRole", "Role":
			role := &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role); err != nil {
				t.Fatal(err)
			}
			// The scrapers' role is not the manager's; a Role in another
			// namespace (an upstream one) is not reviewed in the release's.
			if !strings.HasSuffix(u.GetName(), "-metrics-reader") && (u.GetKind() == "ClusterRole" || u.GetNamespace() == rel.Namespace) {
				rules = append(rules, role.Rules...)
			}
		case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			// The token-copies policy binds everybody but this manager,
			// other variants' managers running in parallel included; it
			// has its own test.
			if strings.HasSuffix(u.GetName(), "-token-copies") {
				continue
			}
		case "ServiceAccount", "RoleBinding", "ClusterRoleBinding":
		default:
			continue
		}
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatalf("creating %s: %v", objectKey(u), err)
		}
		if u.GetNamespace() == "" {
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })
		}
	}
	r := requester{c: impersonate(t, serviceAccountUser(rel)), ns: rel.Namespace, consumer: rel.Namespace + "-consumer",
		cluster: rel.Namespace + "-c1", emptyCluster: rel.Namespace + "-c2", fullname: rel.Name + "-" + chartName,
		secretsRole: rel.Name + "-secrets", dyn: impersonateDynamic(t, serviceAccountUser(rel))}
	waitForRules(ctx, t, r, rules)
	return r
}

// waitForRules waits until the API server's authorizer has every rendered
// rule for the manager, so that a denial seen afterwards is final rather
// than a binding still on its way into the authorizer's cache.
func waitForRules(ctx context.Context, t *testing.T, r requester, rules []rbacv1.PolicyRule) {
	t.Helper()
	var missing []rbacv1.PolicyRule
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		review := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: r.ns}}
		if err := r.c.Create(ctx, review); err != nil {
			t.Fatalf("reviewing the manager's rules: %v", err)
		}
		missing = missing[:0]
		for _, want := range rules {
			if !slices.ContainsFunc(review.Status.ResourceRules, func(got authorizationv1.ResourceRule) bool {
				return slices.Equal(want.Verbs, got.Verbs) && slices.Equal(want.APIGroups, got.APIGroups) &&
					slices.Equal(want.Resources, got.Resources) && slices.Equal(want.ResourceNames, got.ResourceNames)
			}) {
				missing = append(missing, want)
			}
		}
		if len(missing) == 0 {
			return
		}
	}
	t.Fatalf("the authorizer never granted the manager these rendered rules: %+v", missing)
}

// waitForPolicy waits until an admission policy refuses the manager the
// named access, something RBAC lets it do, so later answers are the
// policies' final ones.
func waitForPolicy(t *testing.T, r requester, access string) {
	t.Helper()
	if last := awaitOutcome(deniedByPolicy, func() error { return accesses[access].do(context.Background(), r) }); last != deniedByPolicy {
		t.Fatalf("the admission policy never took effect: %q was %s", access, last)
	}
}

// awaitOutcome tries a request until its outcome is want, for up to 10 s
// (RBAC and admission policies take effect a moment after they are
// written), and returns the last outcome.
func awaitOutcome(want outcome, try func() error) outcome {
	last := outcomeOf(try())
	for deadline := time.Now().Add(10 * time.Second); last != want && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		last = outcomeOf(try())
	}
	return last
}

// outcomesOf tries every attempt as every client: who may do what.
func outcomesOf(clients map[string]client.Client, attempts map[string]func(client.Client) error) map[string]map[string]outcome {
	got := map[string]map[string]outcome{}
	for who, c := range clients {
		got[who] = map[string]outcome{}
		for name, attempt := range attempts {
			got[who][name] = outcomeOf(attempt(c))
		}
	}
	return got
}

func serviceAccountUser(rel chartrender.Release) string {
	return "system:serviceaccount:" + rel.Namespace + ":" + rel.Name + "-" + chartName
}

// impersonate returns a client of the test's API server acting as user.
func impersonate(t testing.TB, user string) client.WithWatch {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// impersonateDynamic returns a dynamic client of the test's API server
// acting as user.
func impersonateDynamic(t testing.TB, user string) dynamic.Interface {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// applyProfile creates a ClusterProfile in namespace as the mirror does:
// a Server-Side Apply, dry run.
func applyProfile(ctx context.Context, r requester, namespace, name string) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(cpv1alpha1.GroupVersion.WithKind("ClusterProfile"))
	u.SetNamespace(namespace)
	u.SetName(name)
	body := fmt.Sprintf(`{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ClusterProfile",`+
		`"metadata":{"name":%q,"namespace":%q,"labels":{"x-k8s.io/cluster-manager":"open-cluster-management"}},`+
		`"spec":{"displayName":%q,"clusterManager":{"name":"open-cluster-management"}}}`, name, namespace, name)
	return r.c.Patch(ctx, u, client.RawPatch(types.ApplyPatchType, []byte(body)),
		client.FieldOwner("clusterprofile-mirror"), client.DryRunAll)
}

// getPolicyAndBinding gets the ValidatingAdmissionPolicy and the binding
// of that name.
func getPolicyAndBinding(ctx context.Context, r requester, name string) error {
	if err := r.c.Get(ctx, types.NamespacedName{Name: name}, &admissionregistrationv1.ValidatingAdmissionPolicy{}); client.IgnoreNotFound(err) != nil {
		return err
	}
	return r.c.Get(ctx, types.NamespacedName{Name: name}, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{})
}

// multiKueueCluster is a MultiKueueCluster as the MultiKueue integration
// applies it.
func multiKueueCluster(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueCluster",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"clusterSource": map[string]any{"clusterProfileRef": map[string]any{"name": name}}},
	}}
	return u
}

// TestTwinReadsNarrowToTheUpstreamNamespaces: with coexistence.reportDecoys
// off, the manager may read the upstream managers' Deployments only in the
// upstream namespaces (a Role in each), and runs with that alone.
func TestTwinReadsNarrowToTheUpstreamNamespaces(t *testing.T) {
	ctx := framework.ContextFor(t)
	const upstream = "chart-narrow-addons"
	framework.CreateNamespace(ctx, t, env.Client, upstream)
	rel := chartrender.Release{Name: "narrow", Namespace: "chart-narrow"}
	values := gates{accessProvider: true, credSyncer: true}.values(false)
	values["coexistence"] = map[string]any{"upstreamNamespaces": []any{upstream}, "reportDecoys": false}
	m := startManager(ctx, t, rel, values)
	r := requester{c: impersonate(t, serviceAccountUser(rel)), ns: rel.Namespace}
	byName := func(namespace string, name string) func() error {
		return func() error {
			return watchOnce(ctx, r, &appsv1.DeploymentList{}, client.InNamespace(namespace), client.MatchingFields{"metadata.name": name})
		}
	}
	attempts := map[string]func() error{
		"watch cluster-proxy's manager in the upstream namespace":          byName(upstream, "cluster-proxy-addon-manager"),
		"watch managed-serviceaccount's manager in the upstream namespace": byName(upstream, "managed-serviceaccount-addon-manager"),
		"watch cluster-proxy's manager in every namespace":                 byName("", "cluster-proxy-addon-manager"),
		"watch managed-serviceaccount's manager in another namespace":      byName(rel.Namespace, "managed-serviceaccount-addon-manager"),
	}
	want := map[string]outcome{
		"watch cluster-proxy's manager in the upstream namespace":          allowed,
		"watch managed-serviceaccount's manager in the upstream namespace": allowed,
		"watch cluster-proxy's manager in every namespace":                 deniedByRBAC,
		"watch managed-serviceaccount's manager in another namespace":      deniedByRBAC,
	}
	got := map[string]outcome{}
	for name, try := range attempts {
		got[name] = outcomeOf(try())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the manager may read (-want +got):\n%s", diff)
	}
	m.stop(t)
	if diff := cmp.Diff([]string{}, m.api.Forbidden()); diff != "" {
		t.Errorf("requests refused to the manager (-want +got):\n%s\nmanager output:\n%s", diff, m.output.String())
	}
}
