package main

import (
	"strings"
	"testing"
)

func TestPackRefusesAnImageRepositoryTheReleaseDoesNotPushTo(t *testing.T) {
	_, err := pack(t.TempDir(), chartVersion(t), "registry.example.com/fork/clusterprofile-bundle")
	if err == nil || !strings.Contains(err.Error(), `the release pushes the image to "registry.example.com/fork/clusterprofile-bundle"`) {
		t.Fatalf("pack with another repository: %v, want the mismatch named", err)
	}
}

func TestPackWritesTheChartWhenTheRepositoryAgrees(t *testing.T) {
	path, err := pack(t.TempDir(), chartVersion(t), "ghcr.io/open-cluster-management-io/clusterprofile-bundle")
	if err != nil || !strings.HasSuffix(path, ".tgz") {
		t.Fatalf("pack = %q, %v", path, err)
	}
}

func chartVersion(t *testing.T) string {
	t.Helper()
	c, err := loadChart()
	if err != nil {
		t.Fatal(err)
	}
	return c.Metadata.Version
}
