package cpcreds

import (
	"os"
	"strings"
)

const (
	// EnvNamespace names the namespace to read the Secret from, overriding
	// every other source.
	EnvNamespace = "NAMESPACE"
	// serviceAccountNamespaceFile is where Kubernetes mounts the namespace of
	// the pod cp-creds runs in.
	serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
	defaultNamespace            = "default"
)

// Environment is what cp-creds reads from around the process to choose a
// namespace. Tests substitute their own functions so they never look at the
// real environment, file system or kubeconfig; a nil function finds nothing.
type Environment struct {
	Getenv   func(key string) string
	ReadFile func(path string) ([]byte, error)
	// KubeconfigNamespace returns the namespace of the current kubeconfig
	// context, or "" when there is no kubeconfig or its context sets none.
	KubeconfigNamespace func() string
}

// ProcessEnvironment reads the real environment and file system, and the
// kubeconfig through kubeconfigNamespace (nil when there is none).
func ProcessEnvironment(kubeconfigNamespace func() string) Environment {
	return Environment{Getenv: os.Getenv, ReadFile: os.ReadFile, KubeconfigNamespace: kubeconfigNamespace}
}

// namespace is a chosen namespace and where it came from; the source goes into
// error messages so that a user can tell which setting to change.
type namespace struct {
	name, source string
}

// resolveNamespace picks the namespace in the spec's order: $NAMESPACE, the
// pod's service-account namespace, the kubeconfig context, "default".
func resolveNamespace(env Environment) namespace {
	if ns := env.getenv(EnvNamespace); ns != "" {
		return namespace{ns, "from $" + EnvNamespace}
	}
	if ns := env.podNamespace(); ns != "" {
		return namespace{ns, "from " + serviceAccountNamespaceFile}
	}
	if ns := env.kubeconfigNamespace(); ns != "" {
		return namespace{ns, "from the current kubeconfig context"}
	}
	return namespace{defaultNamespace, "by default; set $" + EnvNamespace + " to choose another"}
}

func (e Environment) getenv(key string) string {
	if e.Getenv == nil {
		return ""
	}
	return strings.TrimSpace(e.Getenv(key))
}

// podNamespace is empty outside a pod (or with the service-account volume not
// mounted): then the next source decides.
func (e Environment) podNamespace() string {
	if e.ReadFile == nil {
		return ""
	}
	data, err := e.ReadFile(serviceAccountNamespaceFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

func (e Environment) kubeconfigNamespace() string {
	if e.KubeconfigNamespace == nil {
		return ""
	}
	return strings.TrimSpace(e.KubeconfigNamespace())
}
