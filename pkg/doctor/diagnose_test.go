package doctor

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"k8s.io/utils/ptr"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

var secretsResource = schema.GroupResource{Resource: "secrets"}

func TestDiagnose(t *testing.T) {
	goodCA := pemCA(t, now.Add(365*24*time.Hour))
	entry := func(o *Observed) *clientcmdv1.Cluster { return &o.Profile.Status.AccessProviders[0].Cluster }
	tests := map[string]struct {
		mutate func(o *Observed, s *Settings)
		// published, when set, is what the copy records instead of the
		// servers of the (mutated) profile's entries.
		published    *string
		wantProvider string
		wantChecks   []Check
	}{
		"everything a consumer needs": {
			wantProvider: "open-cluster-management", wantChecks: passing(nil),
		},
		"another manager's profile": {
			mutate: func(o *Observed, _ *Settings) {
				o.Profile.Labels[clusterprofile.LabelClusterManager] = "other"
				o.Profile.Spec.ClusterManager.Name = "other"
			},
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckProfile: `The profile belongs to cluster manager "other" (label x-k8s.io/cluster-manager="other"), not "open-cluster-management": it was not published by this bundle, so use the profile the mirror publishes or pass --cluster-manager.`}),
		},
		"a wrong cluster-name label": {
			mutate:       func(o *Observed, _ *Settings) { o.Profile.Labels[clusterprofile.LabelClusterName] = "cluster2" },
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckProfile: `The label open-cluster-management.io/cluster-name is "cluster2", not the profile's name "cluster1": the mirror writes it; delete the profile and let the mirror recreate it.`}),
		},
		"not reported yet": {
			mutate: func(o *Observed, _ *Settings) {
				o.Profile.Status.Version.Kubernetes = ""
				o.Profile.Status.Conditions = nil
			},
			wantProvider: "open-cluster-management",
			wantChecks: passing(map[string]string{CheckProfile: "status.version.kubernetes is empty: ManagedCluster cluster1 has not reported its version yet; check that its klusterlet is running and joined. " +
				"The profile has no ControlPlaneHealthy condition: ManagedCluster cluster1 has no Available condition yet; check that its klusterlet is running and joined."}),
		},
		"unhealthy control plane": {
			mutate: func(o *Observed, _ *Settings) {
				o.Profile.Status.Conditions[0].Status, o.Profile.Status.Conditions[0].Reason = metav1.ConditionFalse, "ManagedClusterLeaseUpdateStopped"
				o.Profile.Status.Conditions[0].Message = "Registration agent stopped updating its lease."
			},
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckProfile: "ControlPlaneHealthy is False (ManagedClusterLeaseUpdateStopped: Registration agent stopped updating its lease.): the cluster's control plane is not healthy; look at ManagedCluster cluster1 and its klusterlet."}),
		},
		"an entry at a server the hub does not publish": {
			mutate:       func(o *Observed, _ *Settings) { entry(o).Server = "https://trap.example.com:8443" },
			published:    ptr.To(`[{"server":"https://cluster-proxy-addon-user.open-cluster-management-addon:9092/cluster1"}]`),
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckPublished: `Refusing to send the token of cluster "cluster1" to https://trap.example.com:8443: the hub publishes that cluster at https://cluster-proxy-addon-user.open-cluster-management-addon:9092/cluster1; the access entry the consumer used was not written by this bundle (look at the ClusterProfile with ` + "`kubectl clusterprofile doctor`" + `).`}),
		},
		"a copy that records no server": {
			published:    ptr.To("[]"),
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckPublished: `Refusing to send the token of cluster "cluster1" to https://cluster-proxy-addon-user.open-cluster-management-addon:9092/cluster1: no access provider of this bundle publishes a server for that cluster (is its entry's source, such as cluster-proxy, configured?).`}),
		},
		"no entry for the consumer's providers": {
			mutate: func(_ *Observed, s *Settings) { s.Providers = []string{"gke", "argocd"} },
			wantChecks: []Check{{Name: CheckProfile, OK: true},
				{Name: CheckEntry, Fix: "The profile has no entry for the providers gke, argocd, only for open-cluster-management: name one of these in the consumer's provider list (and in --provider), or turn on the provider you configured."},
				{Name: CheckToken, OK: true}, {Name: CheckAccess, OK: true}},
		},
		"the consumer's first provider wins": {
			mutate: func(o *Observed, s *Settings) {
				direct := o.Profile.Status.AccessProviders[0].DeepCopy()
				direct.Name, direct.Cluster.Server = "open-cluster-management-direct", "http://10.0.0.1:6443"
				o.Profile.Status.AccessProviders = append(o.Profile.Status.AccessProviders, *direct)
				s.Providers = []string{"open-cluster-management-direct", "open-cluster-management"}
			},
			wantProvider: "open-cluster-management-direct",
			wantChecks:   passing(map[string]string{CheckServer: `The entry's server "http://10.0.0.1:6443" uses http, not https: consumers refuse it (a token must not travel in clear; Kueue trusts only IP addresses and DNS-1123 names); configure the access provider with https://<host>[:<port>][/<path>].`}),
		},
		"server host neither IP nor DNS-1123": {
			mutate:       func(o *Observed, _ *Settings) { entry(o).Server = "https://hub_proxy.example.com:9092/cluster1" },
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckServer: `The entry's server "https://hub_proxy.example.com:9092/cluster1" has a host that is neither an IP address nor a DNS-1123 name (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')): consumers refuse it (a token must not travel in clear; Kueue trusts only IP addresses and DNS-1123 names); configure the access provider with https://<host>[:<port>][/<path>].`}),
		},
		"server not absolute": {
			mutate:       func(o *Observed, _ *Settings) { entry(o).Server = "cluster-proxy-addon-user:9092" },
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckServer: `The entry's server "cluster-proxy-addon-user:9092" is not an absolute https:// URL: consumers refuse it (a token must not travel in clear; Kueue trusts only IP addresses and DNS-1123 names); configure the access provider with https://<host>[:<port>][/<path>].`}),
		},
		"CA not PEM": {
			mutate:       func(o *Observed, _ *Settings) { entry(o).CertificateAuthorityData = []byte("not a certificate") },
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckCA: "The entry's certificate-authority-data is not PEM-encoded certificates: check the CA the access provider reads (for cluster-proxy, tls.crt of Secret cluster-proxy-user-serving-cert)."}),
		},
		"CA expired": {
			mutate:       func(o *Observed, _ *Settings) { entry(o).CertificateAuthorityData = pemCA(t, now.Add(-time.Hour)) },
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckCA: `The CA certificate "test-ca" expired at 2026-11-25T11:00:00Z: rotate the server's CA (for cluster-proxy, its user server certificate); the access provider republishes it.`}),
		},
		"no CA": {
			mutate:       func(o *Observed, _ *Settings) { entry(o).CertificateAuthorityData = nil },
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckCA: "The entry has no certificate-authority-data: the consumer would trust only its system roots; the access provider must publish the server's CA."}),
		},
		"extension names another cluster": {
			mutate: func(o *Observed, _ *Settings) {
				entry(o).Extensions = []clientcmdv1.NamedExtension{cpcreds.ExecExtension("cluster2")}
			},
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckExtension: `The entry's extension client.authentication.k8s.io/exec is {"clusterName":"cluster2"}, not {"clusterName": "cluster1"}: cp-creds would look for another cluster's token; the access provider writes it, so check who else writes the entry "open-cluster-management".`}),
		},
		"no extension": {
			mutate: func(o *Observed, _ *Settings) {
				entry(o).Extensions = []clientcmdv1.NamedExtension{{Name: "other", Extension: runtime.RawExtension{Raw: []byte(`{}`)}}}
			},
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckExtension: `The entry "open-cluster-management" has no extension client.authentication.k8s.io/exec: cp-creds cannot tell which cluster it runs for; use an entry written by this bundle's access providers.`}),
		},
		"no token copy": {
			mutate: func(o *Observed, _ *Settings) {
				o.Copy = CopyRead{Err: apierrors.NewNotFound(secretsResource, "cluster1-multikueue")}
			},
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckToken: "Secret team-a/cluster1-multikueue does not exist: there is no ManagedServiceAccount multikueue in hub namespace cluster1. Create it there, labelled authentication.open-cluster-management.io/sync-to-clusterprofile=true and annotated clusterprofile.open-cluster-management.io/consumer-namespaces: team-a."}),
		},
		"the caller may not read the copy": {
			mutate: func(o *Observed, _ *Settings) {
				o.Copy = CopyRead{Err: apierrors.NewForbidden(secretsResource, "cluster1-multikueue", errors.New("no"))}
			},
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckToken: "You may not read Secret team-a/cluster1-multikueue, so the doctor cannot check it: run the doctor as someone who may get Secrets in team-a."}),
		},
		"a Secret planted under the copy's name": {
			mutate: func(o *Observed, _ *Settings) {
				o.Copy.Secret.Labels, o.Copy.Secret.Annotations = nil, nil
			},
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckToken: "Secret team-a/cluster1-multikueue is not a synced token copy: it has no label authentication.open-cluster-management.io/synced-from, so the credential syncer did not write it; only its copies are used (delete the Secret and check the ManagedServiceAccount's sync label on the hub)."}),
		},
		"a copy without a token": {
			mutate:       func(o *Observed, _ *Settings) { o.Copy.Secret.Data = nil },
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckToken: `Secret team-a/cluster1-multikueue has no "token" key: the ManagedServiceAccount multikueue has no token yet; check its status in hub namespace cluster1.`}),
		},
		"an expired token": {
			mutate:       func(o *Observed, _ *Settings) { o.Copy.Secret = syncedCopy(now.Add(-time.Minute)) },
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckToken: "The token in Secret team-a/cluster1-multikueue expired at 2026-11-25T11:59:00Z: the managed-serviceaccount agent on cluster cluster1 has not rotated it; check ManagedServiceAccount multikueue there and on the hub."}),
		},
		"a token about to expire": {
			mutate:       func(o *Observed, _ *Settings) { o.Copy.Secret = syncedCopy(now.Add(10 * time.Minute)) },
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckToken: "The token in Secret team-a/cluster1-multikueue expires at 2026-11-25T12:10:00Z, within 1h0m0s: rotation is late; check ManagedServiceAccount multikueue's rotation and the managed-serviceaccount agent on cluster cluster1."}),
		},
		"a copy without an expiry passes": {
			mutate:       func(o *Observed, _ *Settings) { delete(o.Copy.Secret.Annotations, cpcreds.AnnotationTokenExpiration) },
			wantProvider: "open-cluster-management", wantChecks: passing(nil),
		},
		"the consumer may not get the copy": {
			mutate: func(o *Observed, _ *Settings) {
				o.Access = AccessReview{Subject: "system:serviceaccount:team-a:kueue", Secret: "cluster1-multikueue"}
			},
			wantProvider: "open-cluster-management",
			wantChecks:   passing(map[string]string{CheckAccess: "The consumer system:serviceaccount:team-a:kueue may not get Secret team-a/cluster1-multikueue: grant get on secrets in namespace team-a with a Role and RoleBinding, or cp-creds fails in the consumer's pod."}),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := Observed{Profile: healthyProfile(goodCA), Copy: CopyRead{Secret: syncedCopy(now.Add(24 * time.Hour))},
				Access: AccessReview{Subject: "you", Secret: "cluster1-multikueue", Allowed: true}}
			s := settings
			s.Providers = append([]string{}, settings.Providers...)
			if tc.mutate != nil {
				tc.mutate(&o, &s)
			}
			if o.Copy.Secret != nil && o.Copy.Secret.Annotations != nil {
				publishedAsIn(o.Copy.Secret, o.Profile)
				if tc.published != nil {
					o.Copy.Secret.Annotations[cpcreds.AnnotationPublishedServers] = *tc.published
				}
			}

			got := Diagnose(o, s)

			want := Row{Cluster: "cluster1", Provider: tc.wantProvider, Checks: tc.wantChecks}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("row (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiagnoseConnection(t *testing.T) {
	goodCA := pemCA(t, now.Add(365*24*time.Hour))
	tests := map[string]struct {
		connection Connection
		want       Check
	}{
		"answered": {
			connection: Connection{Server: "https://10.0.0.1:6443", ServerVersion: "v1.35.4", Latency: 20 * time.Millisecond},
			want:       Check{Name: CheckConnect, OK: true},
		},
		"the plugin failed": {
			connection: Connection{Server: "https://10.0.0.1:6443", Err: &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/version?timeout=15s",
				Err: errors.New("getting credentials: exec: executable cp-creds failed with exit code 1")}},
			want: Check{Name: CheckConnect, Fix: "The exec plugin failed (getting credentials: exec: executable cp-creds failed with exit code 1): its own line on stderr above says what to fix."},
		},
		"no rest.Config": {
			connection: Connection{Err: errors.New(`no matching cluster accessor found for cluster profile "cluster1"`)},
			want:       Check{Name: CheckConnect, Fix: `No rest.Config could be built the way a consumer builds it (no matching cluster accessor found for cluster profile "cluster1"): fix the checks above.`},
		},
		"withheld": {
			connection: Connection{Withheld: []string{CheckProfile, CheckPublished}},
			want:       Check{Name: CheckConnect, Fix: "Not connected: the checks profile, published failed, and the doctor sends the token only to a profile and an entry that pass them."},
		},
		"the token rejected": {
			connection: Connection{Server: "https://10.0.0.1:6443", Err: apierrors.NewUnauthorized("the server has asked for the client to provide credentials")},
			want:       Check{Name: CheckConnect, Fix: "https://10.0.0.1:6443 rejected the token (401 Unauthorized): the copied ManagedServiceAccount token is not valid on the managed cluster; check the ManagedServiceAccount and its agent there."},
		},
		"unreachable": {
			connection: Connection{Server: "https://10.0.0.1:6443/", Err: errors.New("dial tcp 10.0.0.1:6443: connect: connection refused")},
			want:       Check{Name: CheckConnect, Fix: "Calling https://10.0.0.1:6443/version failed (dial tcp 10.0.0.1:6443: connect: connection refused): check that the server is reachable from where the consumer runs and that the token is accepted there."},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := Observed{Profile: healthyProfile(goodCA), Copy: CopyRead{Secret: syncedCopy(now.Add(24 * time.Hour))},
				Access: AccessReview{Allowed: true}, Connect: &tc.connection}
			publishedAsIn(o.Copy.Secret, o.Profile)

			got := Diagnose(o, settings)

			want := Row{Cluster: "cluster1", Provider: "open-cluster-management", Checks: append(passing(nil), tc.want),
				ServerVersion: tc.connection.ServerVersion, Latency: tc.connection.Latency}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("row (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoProfiles(t *testing.T) {
	got := NewReport("team-a", []Row{NoProfiles("team-a")}, nil)
	want := Report{Namespace: "team-a", Rows: []Row{{Checks: []Check{{Name: CheckProfiles,
		Fix: "There is no ClusterProfile in namespace team-a: profiles appear only where a ManagedClusterSetBinding is Bound to a set that contains clusters; check `kubectl get managedclustersetbindings -n team-a` (condition Bound True) and that the ClusterProfile gate is on."}}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}
