package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// TestCompactAndDefragment: after objects are written and deleted, the
// step between the floor and the manager's run leaves etcd no history to
// read (an older revision is compacted) and a smaller database file, on a
// real etcd through its gateway.
func TestCompactAndDefragment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	env, err := framework.Start(framework.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	etcd := newEtcdGateway(env.EtcdURL())
	writeAndDelete(ctx, t, env.Client, 200)
	old, err := etcd.status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done, err := etcd.compactAndDefragment(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if done.dbBefore != old.DBSize || done.dbAfter >= done.dbBefore {
		t.Errorf("etcd's database: %d bytes before the writes were compacted, then %d → %d; want it smaller after", old.DBSize, done.dbBefore, done.dbAfter)
	}
	err = etcd.call(ctx, "/v3/kv/range", map[string]any{
		"key": base64.StdEncoding.EncodeToString([]byte("/")), "revision": strconv.FormatInt(old.Header.Revision-1, 10)}, nil)
	if err == nil || !strings.Contains(err.Error(), "compacted") {
		t.Errorf("reading revision %d after the compaction: %v, want it compacted", old.Header.Revision-1, err)
	}
}

// writeAndDelete creates n ConfigMaps of 16 KiB each and deletes them.
func writeAndDelete(ctx context.Context, t *testing.T, c client.Client, n int) {
	t.Helper()
	data := map[string]string{"filler": strings.Repeat("x", 16<<10)}
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("filler-%d", i)}, Data: data}
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
}
