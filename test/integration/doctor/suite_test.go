// Package doctor_test runs `kubectl clusterprofile doctor` against a real
// API server: every failing row, --connect through a freshly built cp-creds
// with a real token, the bundle's own output, the built binary, and an
// attacker's entries that point a served cluster's token at a trap.
package doctor_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/pkg/doctor"
	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var (
	env *framework.Env
	// binDir holds cp-creds and kubectl-clusterprofile as built for release,
	// and the admin kubeconfig.
	binDir, adminKubeconfig string
)

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	flag.Parse()
	dir, err := os.MkdirTemp("", "doctor-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	binDir = dir
	if err := framework.BuildCommands(dir, "cp-creds", "kubectl-clusterprofile"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return framework.Run(m, framework.Options{}, &env)
}

const msa = "multikueue"

// profile is cluster as the mirror and an access provider publish it in
// namespace, its one entry reaching server with ca.
func profile(namespace, cluster, server string, ca []byte) *cpv1alpha1.ClusterProfile {
	p := utiltesting.MakeClusterProfile(namespace, cluster, clusterprofile.DefaultManagerName).Obj()
	p.Labels[clusterprofile.LabelClusterName] = cluster
	p.Status.Version.Kubernetes = "v1.35.4"
	p.Status.Conditions = []metav1.Condition{{Type: cpv1alpha1.ClusterConditionControlPlaneHealthy, Status: metav1.ConditionTrue,
		Reason: "ManagedClusterAvailable", LastTransitionTime: metav1.Now()}}
	p.Status.AccessProviders = []cpv1alpha1.AccessProvider{{Name: "open-cluster-management", Cluster: clientcmdv1.Cluster{
		Server: server, CertificateAuthorityData: ca,
		Extensions: []clientcmdv1.NamedExtension{cpcreds.ExecExtension(cluster)},
	}}}
	return p
}

// settings are the doctor's for namespace, with the consumer's one provider.
func settings(namespace string) doctor.Settings {
	return doctor.Settings{Namespace: namespace, Providers: []string{"open-cluster-management"}, ManagedServiceAccount: msa,
		ManagerName: clusterprofile.DefaultManagerName, ExpiryMargin: doctor.DefaultExpiryMargin}
}

func serverVersion(t *testing.T) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	info, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	return info.GitVersion
}

func adminKubeconfigPath(t *testing.T) string {
	t.Helper()
	if adminKubeconfig == "" {
		path, err := env.WriteAdminKubeconfig(binDir)
		if err != nil {
			t.Fatal(err)
		}
		adminKubeconfig = path
	}
	return adminKubeconfig
}

// plugin is the freshly built cp-creds, reading the hub as the admin.
func plugin(t *testing.T) doctor.Plugin {
	return doctor.Plugin{Command: filepath.Join(binDir, "cp-creds"),
		Env: []clientcmdapi.ExecEnvVar{{Name: "KUBECONFIG", Value: adminKubeconfigPath(t)}}}
}
