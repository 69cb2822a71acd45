package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	clientauthenticationv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

// connectTimeout bounds one /version call, plugin run included.
const connectTimeout = 15 * time.Second

// AccessConfig is the cluster-inventory-api configuration a consumer such
// as MultiKueue holds: one provider per name, in the consumer's order, each
// running the plugin with provideClusterInfo, in the consumer's namespace.
func AccessConfig(providers []string, namespace, msa string, plugin Plugin) *access.Config {
	env := append([]clientcmdapi.ExecEnvVar{{Name: cpcreds.EnvNamespace, Value: namespace}}, plugin.Env...)
	out := make([]access.Provider, 0, len(providers))
	for _, name := range providers {
		out = append(out, access.Provider{Name: name, ExecConfig: &clientcmdapi.ExecConfig{
			APIVersion:         clientauthenticationv1.SchemeGroupVersion.String(),
			Command:            plugin.Command,
			Args:               []string{"--managed-serviceaccount=" + msa},
			Env:                env,
			ProvideClusterInfo: true,
			InteractiveMode:    clientcmdapi.NeverExecInteractiveMode,
		}})
	}
	return access.New(out)
}

// connect builds the rest.Config exactly as pkg/access does and calls
// /version with it, timing the whole call (plugin run included).
func (d *Doctor) connect(ctx context.Context, p *cpv1alpha1.ClusterProfile) Connection {
	cfg, err := AccessConfig(d.Settings.Providers, d.Settings.Namespace, d.Settings.ManagedServiceAccount, d.Plugin).BuildConfigFromCP(p)
	if err != nil {
		return Connection{Err: err}
	}
	cfg.Timeout = connectTimeout
	c := Connection{Server: cfg.Host}
	start := time.Now()
	c.ServerVersion, c.Err = serverVersion(ctx, cfg)
	c.Latency = time.Since(start)
	return c
}

func serverVersion(ctx context.Context, cfg *rest.Config) (string, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	raw, err := client.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	var info version.Info
	if err := json.Unmarshal(raw, &info); err != nil {
		return "", fmt.Errorf("the answer of /version is not a version: %w", err)
	}
	return info.GitVersion, nil
}
