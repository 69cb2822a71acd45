package doctor

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	operatorv1 "open-cluster-management.io/api/operator/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

func TestSummarize(t *testing.T) {
	healthy := healthyProfile(nil)
	healthy.Labels[clusterprofile.LabelClusterSet] = "prod"
	bare := &cpv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cluster0"}}
	argocd := syncedCopy(now.Add(time.Hour))
	argocd.Name = "cluster1-argocd"
	argocd.Labels[cpcreds.LabelSyncedFrom] = cpcreds.SyncedFromValue("cluster1", "argocd")
	argocd.Annotations[cpcreds.AnnotationSourceManagedServiceAccount] = "argocd"
	delete(argocd.Annotations, cpcreds.AnnotationTokenExpiration)
	planted := syncedCopy(now)
	planted.Annotations[cpcreds.AnnotationSourceCluster] = "cluster0" // its label says cluster1
	copies := []corev1.Secret{*syncedCopy(now.Add(2 * time.Hour)), *argocd, *planted}
	tests := map[string]struct {
		msa  string
		want []Summary
	}{
		"every ManagedServiceAccount": {want: []Summary{
			{Cluster: "cluster0", Healthy: "Unknown"},
			{Cluster: "cluster1", ClusterSet: "prod", Version: "v1.35.4", Healthy: "True", Providers: []string{"open-cluster-management"},
				TokenExpiry: map[string]string{"multikueue": "2026-11-25T14:00:00Z", "argocd": "unknown"}},
		}},
		"one ManagedServiceAccount": {msa: "multikueue", want: []Summary{
			{Cluster: "cluster0", Healthy: "Unknown"},
			{Cluster: "cluster1", ClusterSet: "prod", Version: "v1.35.4", Healthy: "True", Providers: []string{"open-cluster-management"},
				TokenExpiry: map[string]string{"multikueue": "2026-11-25T14:00:00Z"}},
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Summarize([]cpv1alpha1.ClusterProfile{*healthy, *bare}, copies, tc.msa)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("summaries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrintSummaries(t *testing.T) {
	var out bytes.Buffer
	summaries := []Summary{{Cluster: "cluster1", ClusterSet: "prod", Version: "v1.35.4", Healthy: "True", Providers: []string{"a", "b"},
		TokenExpiry: map[string]string{"multikueue": "2026-11-25T14:00:00Z", "argocd": "unknown"}}}
	if err := PrintSummaries(&out, summaries, now); err != nil {
		t.Fatal(err)
	}
	want := "CLUSTER   SET   VERSION  HEALTHY  PROVIDERS  TOKEN EXPIRY\n" +
		"cluster1  prod  v1.35.4  True     a,b        argocd=unknown,multikueue=2026-11-25T14:00:00Z (in 120m)\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestParseIdentity(t *testing.T) {
	tests := map[string]struct {
		user   string
		groups []string
		want   *Identity
	}{
		"the caller": {want: nil},
		"a user":     {user: "alice", groups: []string{"team-a"}, want: &Identity{User: "alice", Groups: []string{"team-a", "system:authenticated"}}},
		"a service account": {user: "system:serviceaccount:kueue-system:kueue-controller-manager", want: &Identity{
			User:   "system:serviceaccount:kueue-system:kueue-controller-manager",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kueue-system", "system:authenticated"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseIdentity(tc.user, tc.groups)); diff != "" {
				t.Errorf("identity (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrintTable(t *testing.T) {
	report := NewReport("team-a", []Row{
		{Cluster: "cluster1", Provider: "open-cluster-management", ServerVersion: "v1.35.4", Latency: 23400 * time.Microsecond,
			Checks: []Check{{Name: CheckProfile, OK: true}, {Name: CheckConnect, OK: true}}},
		{Cluster: "cluster2", Checks: []Check{{Name: CheckProfile, OK: true}, {Name: CheckEntry, Fix: "Add an entry."}, {Name: CheckToken, Fix: "Sync the token."}}},
		NoProfiles("team-a"),
	}, []string{"Namespace team-a holds another consumer's unscoped tokens."})
	var out bytes.Buffer
	if err := PrintTable(&out, report); err != nil {
		t.Fatal(err)
	}
	want := "CLUSTER   RESULT  PROVIDER                 DETAILS\n" +
		"cluster1  PASS    open-cluster-management  passed: profile, connect (v1.35.4 in 23ms)\n" +
		"cluster2  FAIL    -                        passed: profile\n" +
		"                                           entry: Add an entry.\n" +
		"                                           token: Sync the token.\n" +
		"-         FAIL    -                        passed: -\n" +
		"                                           profiles: " + noProfilesFix("team-a") + "\n" +
		"WARNING: Namespace team-a holds another consumer's unscoped tokens.\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if report.OK {
		t.Errorf("a report with failed rows is OK")
	}
}

func TestUnscopedWarnings(t *testing.T) {
	copyOf := func(cluster, msa string, unscoped bool) metav1.PartialObjectMetadata {
		annotations := map[string]string{cpcreds.AnnotationSourceCluster: cluster, cpcreds.AnnotationSourceManagedServiceAccount: msa}
		if unscoped {
			annotations[cpcreds.AnnotationUnscoped] = "true"
		}
		return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: cpcreds.SecretName(cluster, msa),
			Annotations: annotations}}
	}
	got := UnscopedWarnings("kueue-system", "multikueue", []metav1.PartialObjectMetadata{
		copyOf("c2", "argocd", true), copyOf("c1", "argocd", true), copyOf("c1", "multikueue", true),
		copyOf("c1", "scoped", false),
	})
	want := []string{
		"Namespace kueue-system holds another consumer's unscoped tokens of ManagedServiceAccount argocd (clusters c1, c2): it names no consumer namespaces, so the hub copies its token into every namespace that serves those clusters, and anyone who may read Secrets in any of them can act there with its rights. Set the annotation clusterprofile.open-cluster-management.io/consumer-namespaces on the ManagedServiceAccount (in each cluster's hub namespace) to the namespaces that need it.",
		"Namespace kueue-system holds your unscoped tokens of ManagedServiceAccount multikueue (clusters c1): it names no consumer namespaces, so the hub copies its token into every namespace that serves those clusters, and anyone who may read Secrets in any of them can act there with its rights. Set the annotation clusterprofile.open-cluster-management.io/consumer-namespaces on the ManagedServiceAccount (in each cluster's hub namespace) to the namespaces that need it.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func TestWriterNotes(t *testing.T) {
	managed := func(p *cpv1alpha1.ClusterProfile, entries ...metav1.ManagedFieldsEntry) *cpv1alpha1.ClusterProfile {
		p.ManagedFields = entries
		return p
	}
	by := func(manager, subresource string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Subresource: subresource, Operation: metav1.ManagedFieldsOperationUpdate}
	}
	// entryFields: manager owns the proxy entry's fields, its server too
	// when it set it.
	entryFields := func(manager string, server bool) metav1.ManagedFieldsEntry {
		fields := `"f:extensions":{}`
		if server {
			fields += `,"f:server":{}`
		}
		e := by(manager, "status")
		e.FieldsType, e.FieldsV1 = "FieldsV1", &metav1.FieldsV1{Raw: []byte(
			`{"f:status":{"f:accessProviders":{"k:{\"name\":\"open-cluster-management\"}":{".":{},"f:cluster":{` + fields + `}}}}}`)}
		return e
	}
	proxyEntry := &cpv1alpha1.AccessProvider{Name: "open-cluster-management"}
	upstream := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cluster1-multikueue",
		Annotations: map[string]string{cpcreds.AnnotationUpstreamCopy: "true"}}}
	unvouched := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cluster1-multikueue",
		Labels: map[string]string{cpcreds.LabelSyncedFrom: "cluster1-multikueue"}}}
	// atomicList: manager owns the whole list, as the CRD's atomic list
	// records its last writer.
	atomicList := func(manager string) metav1.ManagedFieldsEntry {
		e := by(manager, "status")
		e.FieldsType, e.FieldsV1 = "FieldsV1", &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:accessProviders":{}}}`)}
		return e
	}
	cases := map[string]struct {
		profile *cpv1alpha1.ClusterProfile
		entry   *cpv1alpha1.AccessProvider
		copy    *corev1.Secret
		want    []string
	}{
		"all the bundle's": {profile: managed(healthyProfile(nil), by("clusterprofile-mirror", ""), entryFields("clusterprofile-access-proxy", true)),
			entry: proxyEntry},
		"no managedFields to read": {profile: healthyProfile(nil), entry: proxyEntry},
		"OCM's mirror and cluster-proxy's writer": {profile: managed(healthyProfile(nil), by("registration", ""), entryFields("manager", true)),
			entry: proxyEntry, want: []string{
				"The profile was published by another mirror (manager, registration), such as OCM's own while this bundle's mirror stays passive.",
				`The entry "open-cluster-management" was written by another writer (manager), such as cluster-proxy's own while this bundle's access provider yields to it.`,
			}},
		"cluster-proxy's writer updated the atomic list": {profile: managed(healthyProfile(nil), by("clusterprofile-mirror", ""),
			atomicList("cluster-proxy-manager")),
			entry: proxyEntry, want: []string{
				`The entry "open-cluster-management" was written by another writer (cluster-proxy-manager), such as cluster-proxy's own while this bundle's access provider yields to it.`,
			}},
		"cluster-proxy's writer set the server of the bundle's entry": {profile: managed(healthyProfile(nil), by("clusterprofile-mirror", ""),
			entryFields("clusterprofile-access-proxy", false), entryFields("cluster-proxy-manager", true)),
			entry: proxyEntry, want: []string{
				`The entry "open-cluster-management" was written by another writer (cluster-proxy-manager), such as cluster-proxy's own while this bundle's access provider yields to it.`,
			}},
		"managed-serviceaccount's copy": {profile: managed(healthyProfile(nil), by("clusterprofile-mirror", ""), entryFields("clusterprofile-access-proxy", true)),
			entry: proxyEntry, copy: upstream, want: []string{
				"Secret team-a/cluster1-multikueue was written by managed-serviceaccount's own syncer; this bundle's syncer yields to it and vouched for the copy."}},
		"managed-serviceaccount's copy where the bundle allows none": {profile: managed(healthyProfile(nil), by("clusterprofile-mirror", ""),
			entryFields("clusterprofile-access-proxy", true)), entry: proxyEntry, copy: unvouched, want: []string{
			"Secret team-a/cluster1-multikueue was written by another syncer, such as managed-serviceaccount's own, where this bundle's rules allow no copy " +
				"(the namespace does not serve the cluster, or the ManagedServiceAccount does not send its token here): the manager deletes it, and that syncer " +
				"writes it again on its next reconcile of this profile while it is on. The hub's admins turn it off (its chart's featureGates.clusterProfile, " +
				`or clusterProfileCredSyncer; docs/install.md, "Coexistence with upstream's writers").`}},
		"the bundle's own copy": {profile: managed(healthyProfile(nil), by("clusterprofile-mirror", ""), entryFields("clusterprofile-access-proxy", true)),
			entry: proxyEntry, copy: syncedCopy(time.Now())},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, writerNotes(tc.profile, tc.entry, tc.copy)); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMirrorNote(t *testing.T) {
	manager := func(name string, gates ...operatorv1.FeatureGate) operatorv1.ClusterManager {
		return operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: operatorv1.ClusterManagerSpec{RegistrationConfiguration: &operatorv1.RegistrationHubConfiguration{FeatureGates: gates}}}
	}
	on := operatorv1.FeatureGate{Feature: "ClusterProfile", Mode: operatorv1.FeatureGateModeTypeEnable}
	off := operatorv1.FeatureGate{Feature: "ClusterProfile", Mode: operatorv1.FeatureGateModeTypeDisable}
	ours := "this bundle's mirror publishes the profiles (no ClusterManager turns OCM's built-in one on)."
	for _, tc := range []struct {
		name     string
		managers []operatorv1.ClusterManager
		want     string
	}{
		{name: "no ClusterManager", want: ours},
		{name: "gate off", managers: []operatorv1.ClusterManager{manager("cluster-manager", off)}, want: ours},
		{name: "gate on", managers: []operatorv1.ClusterManager{manager("a"), manager("cluster-manager", on)},
			want: "OCM's built-in mirror publishes the profiles (ClusterManager cluster-manager turns its ClusterProfile gate on); this bundle's mirror stays passive."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, MirrorNote(tc.managers)); diff != "" {
				t.Errorf("MirrorNote (-want +got):\n%s", diff)
			}
		})
	}
}
