package doctor

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// doctor checks the flags and builds the Doctor they ask for.
func (f *doctorFlags) doctor(config *genericclioptions.ConfigFlags) (*Doctor, error) {
	if f.msa == "" {
		return nil, errors.New("--managed-serviceaccount is required: the ManagedServiceAccount whose token the consumer's cp-creds uses")
	}
	if len(f.providers) == 0 {
		return nil, errors.New("--provider needs at least one access provider name")
	}
	if f.output != "table" && f.output != "json" {
		return nil, fmt.Errorf("--output %q: use table or json", f.output)
	}
	plugin, err := f.pluginFor(config)
	if err != nil {
		return nil, err
	}
	c, namespace, err := hubClient(config)
	if err != nil {
		return nil, err
	}
	return &Doctor{
		Client: c,
		Settings: Settings{Namespace: namespace, Providers: f.providers, ManagedServiceAccount: f.msa,
			ManagerName: f.manager, ExpiryMargin: f.expiryMargin},
		Consumer: ParseIdentity(f.as, f.asGroups),
		Connect:  f.connect,
		Plugin:   plugin,
		Now:      time.Now,
	}, nil
}

// pluginFor finds the plugin (only needed with --connect) and hands it the
// kubeconfig given with --kubeconfig, since it reads the hub as the caller.
func (f *doctorFlags) pluginFor(config *genericclioptions.ConfigFlags) (Plugin, error) {
	if !f.connect {
		return Plugin{}, nil
	}
	path, err := exec.LookPath(f.plugin)
	if err != nil {
		return Plugin{}, fmt.Errorf("--connect runs the exec plugin, but %q was not found (%v): install cp-creds on PATH or pass --plugin <path>", f.plugin, err)
	}
	plugin := Plugin{Command: path}
	if config.KubeConfig != nil && *config.KubeConfig != "" {
		kubeconfig, err := filepath.Abs(*config.KubeConfig)
		if err != nil {
			return Plugin{}, err
		}
		plugin.Env = []clientcmdapi.ExecEnvVar{{Name: "KUBECONFIG", Value: kubeconfig}}
	}
	return plugin, nil
}
