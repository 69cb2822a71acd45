package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProfileCountsReadTheAPIServersCounters: write requests of every verb
// that changes a profile, and etcd's creates and updates of profiles, are
// summed; reads and other resources are not.
func TestProfileCountsReadTheAPIServersCounters(t *testing.T) {
	exposition := `apiserver_request_total{code="200",resource="clusterprofiles",subresource="status",verb="APPLY"} 30
apiserver_request_total{code="201",resource="clusterprofiles",subresource="",verb="APPLY"} 10
apiserver_request_total{code="200",resource="clusterprofiles",subresource="",verb="GET"} 99
apiserver_request_total{code="201",resource="secrets",subresource="",verb="POST"} 7
etcd_requests_total{group="multicluster.x-k8s.io",operation="update",resource="clusterprofiles"} 46
etcd_requests_total{group="multicluster.x-k8s.io",operation="get",resource="clusterprofiles"} 12
etcd_requests_total{group="",operation="update",resource="secrets"} 5
`
	set, err := parseExposition(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	got := countProfiles(set).minus(profileCounts{writes: 20, storageWrites: 22})
	if diff := cmp.Diff(profileCounts{writes: 20, storageWrites: 24}, got, cmp.AllowUnexported(profileCounts{})); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if got, want := storageWrites(got.storageWrites, got.writes), "1.2000 per write request (24 for 20)"; got != want {
		t.Errorf("storageWrites = %q, want %q", got, want)
	}
}
