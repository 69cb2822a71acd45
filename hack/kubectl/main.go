// Command kubectl is kubectl itself, built from its own library at this
// module's Kubernetes version, for the end-to-end tests that run the
// commands the docs tell a user to type (test/e2e/docs_test.go): no kubectl
// is installed on the machines the tests run on.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
	os.Exit(0)
}
