package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDashboardIsUpToDate: the chart's dashboard is what `make dashboard`
// generates now, never a hand edit.
func TestDashboardIsUpToDate(t *testing.T) {
	want, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", OutputFile))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is stale; run `make dashboard` (-generated +checked in):\n%s", OutputFile, diff)
	}
}

// TestDashboardShowsWhatOnCallNeeds: one panel for each thing the issue
// asks for, every query scoped to the job variable.
func TestDashboardShowsWhatOnCallNeeds(t *testing.T) {
	data, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		titles = append(titles, p.Title)
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			if !strings.Contains(target.Expr, `job=~"$job"`) {
				t.Errorf("panel %q: query %q is not scoped to $job", p.Title, target.Expr)
			}
		}
	}
	want := []string{
		"Profiles published", "Namespaces with profiles", "Profiles per namespace", "Leading replicas", "Mirror passive",
		"CRD with atomic status lists",
		"ClusterProfile writes by writer", "ClusterProfile write errors by writer", "Synced token Secret writes", "Reported problems",
		"Reconcile latency (p50, p99)", "Reconciles by result", "Work queue depth", "Work queue wait (p99)",
		"Token copies", "Earliest token expiry", "Copies expiring within the hour",
		"Memory", "CPU",
	}
	if diff := cmp.Diff(want, titles); diff != "" {
		t.Errorf("panels (-want +got):\n%s", diff)
	}
	if d.UID != "clusterprofile-manager" {
		t.Errorf("uid = %q", d.UID)
	}
}
