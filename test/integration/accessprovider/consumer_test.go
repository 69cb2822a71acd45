package accessprovider_test

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	utiltesting "open-cluster-management.io/clusterprofile-bundle/pkg/util/testing"
	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// cpCredsProvider is a consumer's provider entry configured as in the seeds'
// MultiKueue example.
func cpCredsProvider(name string) access.Provider {
	return access.Provider{
		Name: name,
		ExecConfig: &clientcmdapi.ExecConfig{
			APIVersion:         "client.authentication.k8s.io/v1",
			Command:            "/plugins/cp-creds",
			Args:               []string{"--managed-serviceaccount=multikueue"},
			ProvideClusterInfo: true,
			InteractiveMode:    clientcmdapi.NeverExecInteractiveMode,
		},
	}
}

// A consumer built with cluster-inventory-api's pkg/access turns each entry
// the providers wrote into a client config that runs cp-creds with the
// cluster's name.
func TestConsumerBuildsRestConfigsFromEachEntry(t *testing.T) {
	ctx := framework.ContextFor(t)
	framework.InstallClusterProxy(ctx, t, env.Client, []byte("CA-1"))
	framework.CreateNamespace(ctx, t, env.Client, "consumer-ns")
	framework.CreateCluster(ctx, t, env.Client, utiltesting.MakeManagedCluster("consumer-c1").Obj())
	framework.UpdateCluster(ctx, t, env.Client, "consumer-c1", func(mc *clusterv1.ManagedCluster) {
		mc.Spec.ManagedClusterClientConfigs = []clusterv1.ClientConfig{{URL: "https://api.consumer.example.com:6443", CABundle: utiltesting.FakeCA("CA-D")}}
	})
	createProfile(ctx, t, "consumer-ns", "consumer-c1")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: bothGates})
	expectEntries(t, ctx, "consumer-ns", "consumer-c1", "open-cluster-management", "open-cluster-management-direct")
	profile := getProfile(NewWithT(t), ctx, "consumer-ns", "consumer-c1")

	cases := map[string]struct {
		provider string
		host, ca string
	}{
		"through cluster-proxy": {provider: "open-cluster-management",
			host: "https://cluster-proxy-addon-user.open-cluster-management-addon:9092/consumer-c1", ca: "CA-1"},
		"direct": {provider: "open-cluster-management-direct", host: "https://api.consumer.example.com:6443", ca: utiltesting.FakeCAString("CA-D")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			cfg, err := access.New([]access.Provider{cpCredsProvider(tc.provider)}).BuildConfigFromCP(profile)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cfg.Host).To(Equal(tc.host))
			g.Expect(string(cfg.TLSClientConfig.CAData)).To(Equal(tc.ca))
			g.Expect(cfg.ExecProvider).NotTo(BeNil())
			g.Expect(cfg.ExecProvider.Command).To(Equal("/plugins/cp-creds"))
			g.Expect(cfg.ExecProvider.Args).To(Equal([]string{"--managed-serviceaccount=multikueue"}))
			g.Expect(cfg.ExecProvider.ProvideClusterInfo).To(BeTrue())
			g.Expect(cfg.ExecProvider.Config).NotTo(BeNil(), "the exec cluster config carries the cluster name")
			raw, err := json.Marshal(cfg.ExecProvider.Config)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(raw).To(MatchJSON(`{"clusterName":"consumer-c1"}`))
		})
	}
}
