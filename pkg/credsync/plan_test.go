package credsync

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

var testExpiry = time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)

func profile(ns, cluster string) *cpv1alpha1.ClusterProfile {
	p := utiltesting.MakeClusterProfile(ns, cluster, "open-cluster-management").Obj()
	p.UID = types.UID("uid-" + ns + "-" + cluster)
	return p
}

func tokenSource(cluster, msa, token string) Source {
	return Source{
		MSA: &authv1beta1.ManagedServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: msa},
			Status:     authv1beta1.ManagedServiceAccountStatus{ExpirationTimestamp: &metav1.Time{Time: testExpiry}},
		},
		Token: &corev1.Secret{Data: map[string][]byte{"token": []byte(token), "ca.crt": []byte("ca"), "extra": []byte("x")}},
	}
}

func TestDesiredCopies(t *testing.T) {
	withoutToken := tokenSource("c1", "pending", "")
	withoutToken.Token = nil
	proxy := cpcreds.PublishedServer{Server: "https://cluster-proxy-addon-user.ocm:9092/c1", CASHA256: "ab12"}
	direct := cpcreds.PublishedServer{Server: "https://c1.example.com:6443"}
	// copyIn is the copy of the multikueue token in ns, with annotations on
	// top of the source and expiry ones.
	copyIn := func(ns string, annotations map[string]string) *corev1.Secret {
		s := &corev1.Secret{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{
				Namespace: ns, Name: "c1-multikueue",
				Labels: map[string]string{LabelSyncedFrom: "c1-multikueue"},
				Annotations: map[string]string{
					cpcreds.AnnotationSourceCluster:               "c1",
					cpcreds.AnnotationSourceManagedServiceAccount: "multikueue",
					cpcreds.AnnotationTokenExpiration:             "2027-01-02T03:04:05Z",
				},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "multicluster.x-k8s.io/v1alpha1", Kind: "ClusterProfile",
					Name: "c1", UID: types.UID("uid-" + ns + "-c1"), BlockOwnerDeletion: new(bool)}},
			},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"token": []byte("t1"), "ca.crt": []byte("ca")},
		}
		for k, v := range annotations {
			s.Annotations[k] = v
		}
		return s
	}
	scoped := func(value string) Source {
		s := tokenSource("c1", "multikueue", "t1")
		s.MSA.Annotations = map[string]string{cpcreds.AnnotationConsumerNamespaces: value}
		return s
	}
	cases := map[string]struct {
		namespace string
		sources   []Source
		rules     Rules
		want      []*corev1.Secret
	}{
		"an unscoped token goes everywhere by default, marked so": {
			namespace: "team",
			sources:   []Source{tokenSource("c1", "multikueue", "t1"), withoutToken, tokenSource("c1", "empty", "")},
			want: []*corev1.Secret{copyIn("team", map[string]string{
				cpcreds.AnnotationPublishedServers: "[]", cpcreds.AnnotationUnscoped: "true"})},
		},
		"an unscoped token goes everywhere when asked": {
			namespace: "team",
			sources:   []Source{tokenSource("c1", "multikueue", "t1")},
			rules:     Rules{Unscoped: UnscopedEverywhere, Servers: []cpcreds.PublishedServer{proxy}},
			want: []*corev1.Secret{copyIn("team", map[string]string{
				cpcreds.AnnotationPublishedServers: `[{"server":"https://cluster-proxy-addon-user.ocm:9092/c1","caSHA256":"ab12"}]`,
				cpcreds.AnnotationUnscoped:         "true"})},
		},
		"an unscoped token goes nowhere when asked": {
			namespace: "team",
			sources:   []Source{tokenSource("c1", "multikueue", "t1")},
			rules:     Rules{Unscoped: UnscopedNowhere},
		},
		"a scoped token goes to a namespace it names, recording every published server": {
			namespace: "kueue-system",
			sources:   []Source{scoped(" argocd , kueue-system,")},
			rules:     Rules{Unscoped: UnscopedNowhere, Servers: []cpcreds.PublishedServer{proxy, direct}},
			want: []*corev1.Secret{copyIn("kueue-system", map[string]string{cpcreds.AnnotationPublishedServers: `[` +
				`{"server":"https://c1.example.com:6443"},{"server":"https://cluster-proxy-addon-user.ocm:9092/c1","caSHA256":"ab12"}]`})},
		},
		"a scoped token goes nowhere else": {
			namespace: "team",
			sources:   []Source{scoped("argocd,kueue-system")},
		},
		"an empty scope names no namespace": {
			namespace: "team",
			sources:   []Source{scoped("")},
		},
		"a wildcard names no namespace": {
			namespace: "team",
			sources:   []Source{scoped("*")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := DesiredCopies(profile(tc.namespace, "c1"), "c1", tc.sources, tc.rules)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("desired copies (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScopeOf(t *testing.T) {
	msa := func(annotations map[string]string) *authv1beta1.ManagedServiceAccount {
		return &authv1beta1.ManagedServiceAccount{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
	}
	cases := map[string]struct {
		msa  *authv1beta1.ManagedServiceAccount
		want Scope
	}{
		"no annotation": {msa: msa(nil), want: Scope{Namespaces: sets.New[string]()}},
		"empty":         {msa: msa(map[string]string{cpcreds.AnnotationConsumerNamespaces: ""}), want: Scope{Scoped: true, Namespaces: sets.New[string]()}},
		"names, blanks and duplicates": {
			msa:  msa(map[string]string{cpcreds.AnnotationConsumerNamespaces: "kueue-system, argocd,,kueue-system "}),
			want: Scope{Scoped: true, Namespaces: sets.New("kueue-system", "argocd")},
		},
		"what names no namespace is set apart": {
			msa:  msa(map[string]string{cpcreds.AnnotationConsumerNamespaces: "*, team-*, Kueue, team-a"}),
			want: Scope{Scoped: true, Namespaces: sets.New("team-a"), Invalid: []string{"*", "team-*", "Kueue"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ScopeOf(tc.msa)); diff != "" {
				t.Errorf("scope (-want +got):\n%s", diff)
			}
		})
	}
}

// cached is a copy as the copies cache holds it.
func cached(s *corev1.Secret) *corev1.Secret {
	out, _ := secretdigest.Transform()(s.DeepCopy())
	return out.(*corev1.Secret)
}

func TestTheCopiesCacheHoldsDigestsOnly(t *testing.T) {
	copy := DesiredCopies(profile("team", "c1"), "c1", []Source{tokenSource("c1", "m", "a-long-token")}, Rules{})[0]
	got := cached(copy)
	for key, value := range got.Data {
		if len(value) != 32 || string(value) == string(copy.Data[key]) {
			t.Errorf("the cache holds %q in the clear", key)
		}
	}
	if again := cached(got); string(again.Data["token"]) != string(got.Data["token"]) {
		t.Error("transforming a cached copy again must change nothing")
	}
	if !CopyUpToDate(got, copy) {
		t.Error("a cached copy must compare equal to what it was made from")
	}
}

func TestPlanCopies(t *testing.T) {
	want := func(cluster, msa, token string) *corev1.Secret {
		return DesiredCopies(profile("team", cluster), cluster, []Source{tokenSource(cluster, msa, token)}, Rules{})[0]
	}
	edited := want("c1", "m", "t1")
	edited.Data["token"] = []byte("tampered")
	noOwner := want("c1", "m", "t1")
	noOwner.OwnerReferences = nil
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "c1-m"}}
	// cluster "c1" + MSA "x-y" and cluster "c1-x" + MSA "y" share c1-x-y.
	otherPair := want("c1-x", "y", "t2")
	// managed-serviceaccount's own syncer's copies: the label, an owner
	// reference to the profile, none of our marks.
	upstream := func(cluster, msa string) *corev1.Secret {
		s := want(cluster, msa, "t1")
		s.Annotations = nil
		return s
	}
	vouched := want("c1", "m", "t1")
	vouched.Annotations[cpcreds.AnnotationUpstreamCopy] = "true"

	cases := map[string]struct {
		desired     []*corev1.Secret
		inNamespace []*corev1.Secret
		yielding    bool
		want        map[string]string
	}{
		"missing copies are created":                {desired: []*corev1.Secret{want("c1", "m", "t1")}, want: map[string]string{"c1-m": "create"}},
		"up-to-date copies cost nothing":            {desired: []*corev1.Secret{want("c1", "m", "t1")}, inNamespace: []*corev1.Secret{want("c1", "m", "t1")}, want: map[string]string{}},
		"an edited copy is applied back":            {desired: []*corev1.Secret{want("c1", "m", "t1")}, inNamespace: []*corev1.Secret{edited}, want: map[string]string{"c1-m": "apply"}},
		"a copy without its owner is applied":       {desired: []*corev1.Secret{want("c1", "m", "t1")}, inNamespace: []*corev1.Secret{noOwner}, want: map[string]string{"c1-m": "apply"}},
		"a rotated token is applied":                {desired: []*corev1.Secret{want("c1", "m", "t9")}, inNamespace: []*corev1.Secret{want("c1", "m", "t1")}, want: map[string]string{"c1-m": "apply"}},
		"an unwanted copy of the cluster goes":      {inNamespace: []*corev1.Secret{want("c1", "m", "t1")}, want: map[string]string{"c1-m": "remove"}},
		"another cluster's copies are left alone":   {inNamespace: []*corev1.Secret{want("c2", "m", "t1")}, want: map[string]string{}},
		"a Secret that is not a copy is left alone": {inNamespace: []*corev1.Secret{foreign}, want: map[string]string{}},
		"a copy as the cache holds it (digests), up to date, costs nothing": {desired: []*corev1.Secret{want("c1", "m", "t1")},
			inNamespace: []*corev1.Secret{cached(want("c1", "m", "t1"))}, want: map[string]string{}},
		"a copy as the cache holds it, with a rotated token, is applied": {desired: []*corev1.Secret{want("c1", "m", "t9")},
			inNamespace: []*corev1.Secret{cached(want("c1", "m", "t1"))}, want: map[string]string{"c1-m": "apply"}},
		"a name held by another pair is a collision": {desired: []*corev1.Secret{want("c1", "x-y", "t1")}, inNamespace: []*corev1.Secret{otherPair},
			want: map[string]string{"c1-x-y": "collision"}},
		"another syncer's unwanted copy of the cluster goes": {inNamespace: []*corev1.Secret{upstream("c1", "m"), upstream("c1", "other")},
			want: map[string]string{"c1-m": "remove", "c1-other": "remove"}},
		"another syncer's copy of another cluster is left alone": {inNamespace: []*corev1.Secret{upstream("c2", "m")}, want: map[string]string{}},
		"yielding, nothing is created or changed": {desired: []*corev1.Secret{want("c1", "m", "t9"), want("c1", "new", "t1")},
			inNamespace: []*corev1.Secret{want("c1", "m", "t1")}, yielding: true, want: map[string]string{}},
		"yielding, unwanted copies go all the same, whoever wrote them": {desired: []*corev1.Secret{want("c1", "kept", "t1")},
			inNamespace: []*corev1.Secret{want("c1", "m", "t1"), upstream("c1", "other"), vouched, upstream("c1", "kept")}, yielding: true,
			want: map[string]string{"c1-m": "remove", "c1-other": "remove"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := map[string]string{}
			for _, s := range planCopies("c1", tc.desired, tc.inNamespace, tc.yielding) {
				switch {
				case s.create != nil:
					got[s.name()] = "create"
				case s.apply != nil:
					got[s.name()] = "apply"
				case s.remove != nil:
					got[s.name()] = "remove"
				case s.collision != nil:
					got[s.name()] = "collision"
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCopiesThatCannotBeNamedAreLeftOut(t *testing.T) {
	long := strings.Repeat("m", 251) // "c1-" makes 254
	sources := []Source{tokenSource("c1", "ok", "t1"), tokenSource("c1", long, "t2"), tokenSource("c1", "Upper", "t3")}
	var names []string
	for _, s := range DesiredCopies(profile("team", "c1"), "c1", sources, Rules{}) {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"c1-ok"}, names); diff != "" {
		t.Errorf("copies (-want +got):\n%s", diff)
	}
	want := map[string]string{
		long:    `"c1-` + long + `" is no valid Secret name: must be no more than 253 characters`,
		"Upper": `"c1-Upper" is no valid Secret name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
	}
	if diff := cmp.Diff(want, InvalidCopyNames("c1", sources)); diff != "" {
		t.Errorf("invalid names (-want +got):\n%s", diff)
	}
}
