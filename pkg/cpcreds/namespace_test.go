package cpcreds

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeEnvironment answers like a process with these settings; "" means unset.
func fakeEnvironment(envVar, podFile, kubeconfigContext string) Environment {
	return Environment{
		Getenv: func(key string) string {
			if key == EnvNamespace {
				return envVar
			}
			return ""
		},
		ReadFile: func(path string) ([]byte, error) {
			if path != serviceAccountNamespaceFile || podFile == "" {
				return nil, fs.ErrNotExist
			}
			return []byte(podFile), nil
		},
		KubeconfigNamespace: func() string { return kubeconfigContext },
	}
}

func TestResolveNamespace(t *testing.T) {
	tests := map[string]struct {
		env  Environment
		want namespace
	}{
		"$NAMESPACE wins over everything": {
			env:  fakeEnvironment("from-env", "from-pod", "from-kubeconfig"),
			want: namespace{"from-env", "from $NAMESPACE"},
		},
		"pod namespace comes next": {
			env:  fakeEnvironment("", "from-pod\n", "from-kubeconfig"),
			want: namespace{"from-pod", "from " + serviceAccountNamespaceFile},
		},
		"kubeconfig context after that": {
			env:  fakeEnvironment("", "", "from-kubeconfig"),
			want: namespace{"from-kubeconfig", "from the current kubeconfig context"},
		},
		"default last": {
			env:  fakeEnvironment("", "", ""),
			want: namespace{"default", `by default; set $NAMESPACE to choose another`},
		},
		"blank $NAMESPACE counts as unset": {
			env:  fakeEnvironment("  ", "from-pod", ""),
			want: namespace{"from-pod", "from " + serviceAccountNamespaceFile},
		},
		"unreadable pod namespace file is skipped": {
			env: Environment{
				ReadFile:            func(string) ([]byte, error) { return nil, errors.New("permission denied") },
				KubeconfigNamespace: func() string { return "from-kubeconfig" },
			},
			want: namespace{"from-kubeconfig", "from the current kubeconfig context"},
		},
		"empty environment": {
			env:  Environment{},
			want: namespace{"default", `by default; set $NAMESPACE to choose another`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := resolveNamespace(tc.env)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(namespace{})); diff != "" {
				t.Errorf("resolveNamespace() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProviderNamespaceOverridesEnvironment(t *testing.T) {
	p := &Provider{Namespace: "configured", Env: fakeEnvironment("from-env", "from-pod", "from-kubeconfig")}

	if diff := cmp.Diff("configured", p.namespace().name); diff != "" {
		t.Errorf("namespace (-want +got):\n%s", diff)
	}
}
