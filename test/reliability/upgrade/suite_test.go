// Package upgrade_test is the part of the reliability suite about what an
// operator changes under a running manager: a gate turned off, whose one-shot
// cleanup meets an API server that refuses for a while. Real kube-apiserver
// and etcd (envtest); the manager runs in-process, wired as the binary.
package upgrade_test

import (
	"os"
	"testing"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{}, &env))
}
