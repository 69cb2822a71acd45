package monitoring_test

import (
	"os"
	"testing"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// env is the control plane of the end-to-end test.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Options{}, &env))
}
