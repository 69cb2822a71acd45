package credsync

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/internal/fakeclient"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/namekeys"
	"open-cluster-management.io/clusterprofile-bundle/pkg/util/secretdigest"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
)

// tokenReads counts the reads of the agent's token Secrets (in the
// cluster's namespace c1) that reach the API server, by the resourceVersion
// they ask for ("": from etcd; "0": any, from the watch cache).
type tokenReads struct {
	client.Reader
	n map[string]int
}

func (t tokenReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, secret := obj.(*corev1.Secret); secret && key.Namespace == "c1" {
		get := &client.GetOptions{}
		get.ApplyOptions(opts)
		version := ""
		if get.Raw != nil {
			version = get.Raw.ResourceVersion
		}
		t.n[version]++
	}
	return t.Reader.Get(ctx, key, obj, opts...)
}

// withToken is hub with multikueue's token Secret holding token.
func withToken(token string, extra ...client.Object) []client.Object {
	objects := hub(extra...)
	for _, obj := range objects {
		if s, ok := obj.(*corev1.Secret); ok && s.Namespace == "c1" {
			s.Data["token"] = []byte(token)
		}
	}
	return objects
}

// TestCopiesAreWrittenWithTheTokensOnTheAPIServer: the tokens cache holds
// digests, so a copy to write is written with the token the API server
// holds (its watch cache), read once per Reconcile however many namespaces
// get it (here the cache still shows the token before a rotation: the copy
// gets the new one); a copy the digests show up to date reads no token; a
// removal is confirmed with the token read from etcd.
func TestCopiesAreWrittenWithTheTokensOnTheAPIServer(t *testing.T) {
	second := []client.Object{utiltesting.MakeBinding("team2", "c1-set").Bound(true).Obj(), utiltesting.NamespaceObj("team2"),
		profile("team2", "c1"), profile("team", "c1")}
	rotated := tokenSource("c1", "multikueue", "t2")
	cases := map[string]struct {
		objects []client.Object
		// cachedTokens are what the tokens cache holds (default: the
		// token t1).
		cachedTokens []client.Object
		want         map[string]map[string]*corev1.Secret
		wantReads    map[string]int
	}{
		"two namespaces get their copies, with one read of the token": {
			objects: withToken("t2", second...),
			want: map[string]map[string]*corev1.Secret{"team": {"c1-multikueue": syncedCopyWith("team", rotated, Rules{})},
				"team2": {"c1-multikueue": syncedCopyWith("team2", rotated, Rules{})}},
			wantReads: map[string]int{"0": 1},
		},
		"copies the digests show up to date read no token": {
			objects: withToken("t1", append(second, syncedCopy("team"), syncedCopy("team2"))...),
			want: map[string]map[string]*corev1.Secret{"team": {"c1-multikueue": syncedCopy("team")},
				"team2": {"c1-multikueue": syncedCopy("team2")}},
			wantReads: map[string]int{},
		},
		"a removal is confirmed with the token in etcd, which still has it": {
			objects:      withToken("t1", append(second, syncedCopy("team"), syncedCopy("team2"))...),
			cachedTokens: hub()[:len(hub())-1],
			want: map[string]map[string]*corev1.Secret{"team": {"c1-multikueue": syncedCopy("team")},
				"team2": {"c1-multikueue": syncedCopy("team2")}},
			wantReads: map[string]int{"": 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fakeclient.Builder(tc.objects...).WithIndex(&corev1.Secret{}, IndexCopyOf, IndexCopy).Build()
			cached := fakeclient.Builder(withToken("t1")...).Build()
			if tc.cachedTokens != nil {
				cached = fakeclient.Builder(tc.cachedTokens...).Build()
			}
			r := newTestReconciler(c, events.NewFakeRecorder(10))
			reads := map[string]int{}
			r.tokens, r.apiReader = digestedTokens{cached}, tokenReads{Reader: c, n: reads}

			if _, err := r.Reconcile(context.Background(), namekeys.Key("c1")); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}

			got := map[string]map[string]*corev1.Secret{"team": fakeclient.SecretsIn(t, c, "team"), "team2": fakeclient.SecretsIn(t, c, "team2")}
			for _, secrets := range tc.want {
				for _, s := range secrets {
					s.ResourceVersion = ""
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Secrets by namespace (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantReads, reads); diff != "" {
				t.Errorf("token reads from the API server by resourceVersion (-want +got):\n%s", diff)
			}
		})
	}
}

// TestACopyOfDigestsIsNeverWritten: a copy built from the tokens cache
// carries the digests' mark and neither create nor apply sends it.
func TestACopyOfDigestsIsNeverWritten(t *testing.T) {
	source := tokenSource("c1", "multikueue", "t1")
	cached, err := secretdigest.Transform()(source.Token)
	if err != nil {
		t.Fatal(err)
	}
	source.Token = cached.(*corev1.Secret)
	want := DesiredCopies(profile("team", "c1"), "c1", []Source{source}, Rules{})[0]
	if !secretdigest.Digested(want) {
		t.Fatal("a copy built from digests is not marked")
	}
	c := fakeclient.Builder(hub(profile("team", "c1"))...).WithIndex(&corev1.Secret{}, IndexCopyOf, IndexCopy).Build()
	r := newTestReconciler(c, events.NewFakeRecorder(10))

	createErr := r.create(context.Background(), want, map[string]string{})
	applyErr := r.apply(context.Background(), want, "update")

	for verb, err := range map[string]error{"create": createErr, "apply": applyErr} {
		if err == nil || !strings.Contains(err.Error(), "digests") {
			t.Errorf("%s of a copy of digests: %v, want it refused", verb, err)
		}
	}
	if got := fakeclient.SecretsIn(t, c, "team"); len(got) != 0 {
		t.Errorf("Secrets in team: %v, want none", got)
	}
}

// TestMarksCarryNoDigestMark: the marks put on the upstream syncer's copies
// are the copy annotations, never the in-memory mark of digests.
func TestMarksCarryNoDigestMark(t *testing.T) {
	want := syncedCopy("team")
	secretdigest.Mark(want.Annotations)
	held := upstreamCopy("team")
	marks := DesiredMarks(profile("team", "c1"), []*corev1.Secret{want}, []*corev1.Secret{held})
	if _, leaked := marks["c1-multikueue"][secretdigest.AnnotationCached]; leaked || len(marks) != 1 {
		t.Errorf("marks %v: want one copy's, without %s", marks, secretdigest.AnnotationCached)
	}
}
