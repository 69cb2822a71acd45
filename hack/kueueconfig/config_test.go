package kueueconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	"sigs.k8s.io/kueue/pkg/config"
	// Registers batch/job, the framework the docs' configuration integrates.
	_ "sigs.k8s.io/kueue/pkg/controller/jobs/job"
	"sigs.k8s.io/yaml"
)

// recipe is the configuration the docs give for Kueue 0.19 and later.
var recipe = filepath.Join("..", "..", "docs", "examples", "multikueue", "kueue-manager-config-v0.19.yaml")

// TestKueue019LoadsTheDocsConfiguration: Kueue v0.19.2 loads and validates
// the docs' configuration, with MultiKueue's ClusterProfile gate on and the
// bundle's two entries as access providers, each running cp-creds for the
// multikueue ManagedServiceAccount with the cluster's info.
func TestKueue019LoadsTheDocsConfiguration(t *testing.T) {
	cfg := load(t, recipe)

	if errs := config.Validate(&cfg, scheme(t)); len(errs) > 0 {
		t.Fatalf("Kueue v0.19.2 rejects the docs' configuration: %v", errs.ToAggregate())
	}
	if !cfg.FeatureGates["MultiKueueClusterProfile"] {
		t.Errorf("feature gates %v: MultiKueueClusterProfile is not on", cfg.FeatureGates)
	}
	exec := clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "/plugins/cp-creds",
		Args: []string{"--managed-serviceaccount=multikueue"}, ProvideClusterInfo: true, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
	want := []configapi.ClusterProfileAccessProvider{
		{Name: "open-cluster-management-direct", ExecConfig: exec},
		{Name: "open-cluster-management", ExecConfig: exec},
	}
	if cfg.MultiKueue == nil || cfg.MultiKueue.ClusterProfile == nil {
		t.Fatal("no multiKueue.clusterProfile")
	}
	if diff := cmp.Diff(want, cfg.MultiKueue.ClusterProfile.AccessProviders); diff != "" {
		t.Errorf("access providers (-want +got):\n%s", diff)
	}
}

// load reads the ConfigMap's controller_manager_config.yaml with Kueue's own
// loader, as Kueue's manager reads it at start.
func load(t *testing.T, path string) configapi.Configuration {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(raw, cm); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "controller_manager_config.yaml")
	if err := os.WriteFile(file, []byte(cm.Data["controller_manager_config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	_, cfg, err := config.Load(scheme(t), file)
	if err != nil {
		t.Fatalf("Kueue v0.19.2 cannot load the docs' configuration: %v", err)
	}
	return cfg
}

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := configapi.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}
