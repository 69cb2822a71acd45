package main

import (
	"runtime"
	"runtime/debug"
)

type versionOutput struct {
	ArgoCD       string `json:"argocd"`
	GitopsEngine string `json:"gitopsEngine"`
	Go           string `json:"go"`
}

// version names the Argo CD modules linked in, from the binary's build info,
// so that a test (and hack/argocd.sh) can tell which release it checks against.
func version() versionOutput {
	out := versionOutput{Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, dep := range info.Deps {
		if dep.Replace != nil {
			dep = dep.Replace
		}
		switch dep.Path {
		case "github.com/argoproj/argo-cd/v3":
			out.ArgoCD = dep.Version
		case "github.com/argoproj/argo-cd/gitops-engine/v3":
			out.GitopsEngine = dep.Version
		}
	}
	return out
}
