package cpcreds

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// EnvExecInfo is where client-go passes the ExecCredential to a plugin.
	EnvExecInfo = "KUBERNETES_EXEC_INFO"

	flagManagedServiceAccount = "managed-serviceaccount"

	// requestTimeout bounds the one GET: client-go waits for the plugin
	// without a deadline, so a hung API server would otherwise hang every
	// request of the consumer.
	requestTimeout = 10 * time.Second
)

// Usage is what --help prints.
const Usage = `usage: cp-creds --managed-serviceaccount=<name>
       cp-creds --version

A client-go exec credential plugin (apiVersion client.authentication.k8s.io/v1
or v1beta1, answered in the same; provideClusterInfo: true). It reads the clusterName from KUBERNETES_EXEC_INFO,
gets Secret <clusterName>-<name> from the namespace in $NAMESPACE (else the
pod's namespace, else the kubeconfig context's, else "default") and prints an
ExecCredential with its token.
`

// NewProviderFromProcess builds, from the command line and the process's
// environment, the Provider that main hands to Run.
//
// It checks KUBERNETES_EXEC_INFO before building a client, so a missing or
// incomplete one is reported with what to change (provideClusterInfo, the
// apiVersion) rather than as a failure further on.
func NewProviderFromProcess(args []string) (*Provider, error) {
	msa, err := parseFlags(args)
	if err != nil {
		return nil, err
	}
	if err := checkExecInfo(os.Getenv(EnvExecInfo)); err != nil {
		return nil, err
	}
	kubeconfig := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{})
	client, err := newClient(kubeconfig)
	if err != nil {
		return nil, err
	}
	return &Provider{
		Client:                client,
		ManagedServiceAccount: msa,
		Env:                   ProcessEnvironment(contextNamespace(kubeconfig)),
	}, nil
}

// ReportSetupError prints an error of NewProviderFromProcess the way
// Run prints its own, one line on stderr, and returns the
// exit code: 0 after --help (usage on stdout), else 1.
func ReportSetupError(stdout, stderr io.Writer, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		_, _ = io.WriteString(stdout, Usage)
		return 0
	}
	_, _ = fmt.Fprintf(stderr, "[%s] %v\n", PluginName, oneLine(err))
	return 1
}

func parseFlags(args []string) (string, error) {
	flags := flag.NewFlagSet(PluginName, flag.ContinueOnError)
	// The flag package would print a multi-line usage on every mistake.
	flags.SetOutput(io.Discard)
	msa := flags.String(flagManagedServiceAccount, "", "name of the ManagedServiceAccount whose token to return")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", fmt.Errorf("%w; usage: %s --%s=<name>", err, PluginName, flagManagedServiceAccount)
	}
	if flags.NArg() > 0 {
		return "", fmt.Errorf("unexpected argument %q; usage: %s --%s=<name>", flags.Arg(0), PluginName, flagManagedServiceAccount)
	}
	if strings.TrimSpace(*msa) == "" {
		return "", fmt.Errorf("missing --%s=<name>: add it to the args of the exec config (the ManagedServiceAccount whose token to use, e.g. multikueue)", flagManagedServiceAccount)
	}
	return strings.TrimSpace(*msa), nil
}

// checkExecInfo rejects, with a message that says what to fix, what
// client-go should never send. It only validates: Run does the real decoding.
func checkExecInfo(raw string) error {
	if strings.TrimSpace(raw) == "" {
		return fmt.Errorf("%s is not set: cp-creds is meant to be run by client-go as an exec credential plugin with provideClusterInfo: true", EnvExecInfo)
	}
	cred, _, err := ReadExecInfo(raw)
	if err != nil {
		return err
	}
	if cred.Spec.Cluster == nil {
		return fmt.Errorf("%s has no spec.cluster: set provideClusterInfo: true in the exec config", EnvExecInfo)
	}
	if strings.TrimSpace(cred.Spec.Cluster.Server) == "" {
		return fmt.Errorf("%s has no spec.cluster.server: the cluster cp-creds is run for must have a server URL", EnvExecInfo)
	}
	return nil
}

// newClient talks to the cluster cp-creds runs in (where the synced Secrets
// live): in-cluster config first, then $KUBECONFIG or ~/.kube/config.
func newClient(kubeconfig clientcmd.ClientConfig) (kubernetes.Interface, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = requestTimeout
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot build a Kubernetes client: %w", err)
	}
	return client, nil
}

func restConfig(kubeconfig clientcmd.ClientConfig) (*rest.Config, error) {
	cfg, inClusterErr := rest.InClusterConfig()
	if inClusterErr == nil {
		return cfg, nil
	}
	cfg, err := kubeconfig.ClientConfig()
	if err == nil {
		return cfg, nil
	}
	inCluster := fmt.Sprintf("in-cluster config: %v", inClusterErr)
	if errors.Is(inClusterErr, rest.ErrNotInCluster) {
		inCluster = "not running in a pod"
	}
	if clientcmd.IsEmptyConfig(err) {
		// clientcmd's own message suggests KUBERNETES_MASTER, which does not apply.
		return nil, fmt.Errorf("cannot build a Kubernetes client: %s and no kubeconfig found: set $KUBECONFIG or create ~/.kube/config", inCluster)
	}
	return nil, fmt.Errorf("cannot build a Kubernetes client: %s and the kubeconfig ($KUBECONFIG or ~/.kube/config) is not usable: %w", inCluster, err)
}

// contextNamespace reads the namespace of the current kubeconfig context only
// when asked: inside a pod the namespace is known before that.
func contextNamespace(kubeconfig clientcmd.ClientConfig) func() string {
	return func() string {
		raw, err := kubeconfig.RawConfig()
		if err != nil {
			return ""
		}
		if ctx := raw.Contexts[raw.CurrentContext]; ctx != nil {
			return ctx.Namespace
		}
		return ""
	}
}
