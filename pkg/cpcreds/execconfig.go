package cpcreds

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
)

// ExecExtensionName is the kubeconfig cluster extension that client-go hands
// to an exec plugin as spec.cluster.config (with provideClusterInfo: true).
// The access providers write it on every entry; cp-creds reads it.
const ExecExtensionName = "client.authentication.k8s.io/exec"

// ExecClusterConfig is the content of that extension: the cluster whose
// synced token cp-creds returns.
type ExecClusterConfig struct {
	ClusterName string `json:"clusterName"`
}

// ExecExtension is the extension an access provider entry of cluster carries.
func ExecExtension(cluster string) clientcmdv1.NamedExtension {
	raw, _ := json.Marshal(ExecClusterConfig{ClusterName: cluster}) // a struct of strings always marshals
	return clientcmdv1.NamedExtension{Name: ExecExtensionName, Extension: runtime.RawExtension{Raw: raw}}
}
