package chart_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	addonapiv1beta1 "open-cluster-management.io/api/addon/v1beta1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	proxyv1alpha1 "open-cluster-management.io/cluster-proxy/pkg/apis/proxy/v1alpha1"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/hack/chartrender"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// outcome is how the API server answers a request of the manager.
type outcome string

const (
	allowed        outcome = "allowed"
	deniedByRBAC   outcome = "denied by RBAC"
	deniedByPolicy outcome = "denied by the Secret admission policy"
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
	// ns is the release namespace, which also holds the Secret fixtures.
	ns string
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
)

// syncedCopy is a Secret as the syncer writes it.
func syncedCopy(ns, name string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels:      map[string]string{labelSyncedFrom: "c1-msa"},
			Annotations: map[string]string{annotationFromCluster: "c1", annotationFromMSA: "msa"}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"token": []byte("t")},
	}
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
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(cpv1alpha1.GroupVersion.WithKind("ClusterProfile"))
			u.SetNamespace(r.ns)
			u.SetName("new-profile")
			body := fmt.Sprintf(`{"apiVersion":"multicluster.x-k8s.io/v1alpha1","kind":"ClusterProfile",`+
				`"metadata":{"name":"new-profile","namespace":%q,"labels":{"x-k8s.io/cluster-manager":"open-cluster-management"}},`+
				`"spec":{"displayName":"new-profile","clusterManager":{"name":"open-cluster-management"}}}`, r.ns)
			return r.c.Patch(ctx, u, client.RawPatch(types.ApplyPatchType, []byte(body)),
				client.FieldOwner("clusterprofile-mirror"), client.DryRunAll)
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
		want: func(v variant) outcome { return allowedIf(v.mirror || v.directAccess || v.agent) },
		do:   func(ctx context.Context, r requester) error { return r.c.List(ctx, &clusterv1.ManagedClusterList{}) },
	},
	"watch ManagedClusters": {
		want: func(v variant) outcome { return allowedIf(v.mirror || v.directAccess || v.agent) },
		do: func(ctx context.Context, r requester) error {
			return watchOnce(ctx, r, &clusterv1.ManagedClusterList{})
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
		want: func(v variant) outcome { return allowedIf(v.mirror) },
		do: func(ctx context.Context, r requester) error {
			return r.c.List(ctx, &clusterv1beta2.ManagedClusterSetList{})
		},
	},
	"list ManagedClusterSetBindings": {
		want: func(v variant) outcome { return allowedIf(v.mirror) },
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
		want: func(v variant) outcome { return allowedIf(v.mirror) },
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
		want: func(v variant) outcome { return allowedIf(v.mirror || v.cleanup) },
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
			return r.c.Create(ctx, syncedCopy(r.ns, "new-copy"), client.DryRunAll)
		},
	},
	"update a synced token copy": {
		want: func(v variant) outcome { return allowedIf(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Patch(ctx, syncedCopy(r.ns, "copy"), mergePatch(`{"data":{"token":"dDI="}}`), client.DryRunAll)
		},
	},
	"delete a synced token copy": {
		want: func(v variant) outcome { return allowedIf(v.secretsWritable()) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Delete(ctx, syncedCopy(r.ns, "copy"), client.DryRunAll)
		},
	},
	"replace a synced token copy (PUT)": {
		want: func(variant) outcome { return deniedByRBAC },
		do: func(ctx context.Context, r requester) error {
			s := syncedCopy(r.ns, "copy")
			s.ResourceVersion = "1"
			return r.c.Update(ctx, s, client.DryRunAll)
		},
	},
	"create a Secret that is not a copy": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Create(ctx, plainSecret(r.ns, "new-plain"), client.DryRunAll)
		},
	},
	"create a copy without the source annotations": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			s := syncedCopy(r.ns, "new-copy")
			s.Annotations = nil
			return r.c.Create(ctx, s, client.DryRunAll)
		},
	},
	"create a service account token Secret dressed as a copy": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			s := syncedCopy(r.ns, "new-token")
			s.Type = corev1.SecretTypeServiceAccountToken
			s.Annotations[corev1.ServiceAccountNameKey] = "default"
			return r.c.Create(ctx, s, client.DryRunAll)
		},
	},
	"turn a Secret into a copy": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"c1-msa"},"annotations":{%q:"c1",%q:"msa"}},"data":{"token":"dA=="}}`,
				labelSyncedFrom, annotationFromCluster, annotationFromMSA)
			return r.c.Patch(ctx, plainSecret(r.ns, "plain"), mergePatch(patch), client.DryRunAll)
		},
	},
	"change a Secret that is not a copy": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Patch(ctx, plainSecret(r.ns, "plain"), mergePatch(`{"data":{"password":"eA=="}}`), client.DryRunAll)
		},
	},
	"strip a copy of its label": {
		want: func(v variant) outcome { return orPolicy(v.credSyncer) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Patch(ctx, syncedCopy(r.ns, "copy"), mergePatch(`{"metadata":{"labels":null}}`), client.DryRunAll)
		},
	},
	"delete a Secret that is not a copy": {
		want: func(v variant) outcome { return orPolicy(v.secretsWritable()) },
		do: func(ctx context.Context, r requester) error {
			return r.c.Delete(ctx, plainSecret(r.ns, "plain"), client.DryRunAll)
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
			for _, s := range []*corev1.Secret{plainSecret(rel.Namespace, "plain"), syncedCopy(rel.Namespace, "copy")} {
				if err := env.Client.Create(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			if v.secretsWritable() {
				waitForSecretPolicy(t, r)
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
			if !strings.HasSuffix(u.GetName(), "-metrics-reader") { // the scrapers' role, not the manager's
				rules = append(rules, role.Rules...)
			}
		case "ServiceAccount", "RoleBinding", "ClusterRoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
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
	r := requester{c: impersonate(t, serviceAccountUser(rel)), ns: rel.Namespace}
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

// waitForSecretPolicy waits until the Secret admission policy refuses the
// manager something RBAC lets it do (deleting a Secret that is not a copy),
// so later answers are the policy's final ones.
func waitForSecretPolicy(t *testing.T, r requester) {
	t.Helper()
	var last outcome
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		last = outcomeOf(accesses["delete a Secret that is not a copy"].do(context.Background(), r))
		if last == deniedByPolicy {
			return
		}
	}
	t.Fatalf("the Secret admission policy never took effect: deleting a Secret that is not a copy was %s", last)
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
