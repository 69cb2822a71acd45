package accessprovider_test

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// A consumer configured like MultiKueue's credentialsProviders turns the
// entries the providers wrote into client configs that run cp-creds with the
// cluster's name.
func TestConsumerBuildsRestConfigsFromTheEntries(t *testing.T) {
	ctx := framework.ContextFor(t)
	installClusterProxy(ctx, t, "CA-1")
	framework.CreateNamespace(ctx, t, env.Client, "consumer-ns")
	createProfile(ctx, t, "consumer-ns", "consumer-c1")
	framework.StartManager(t, env, framework.ManagerOptions{Gates: proxyGate})
	expectEntries(t, ctx, "consumer-ns", "consumer-c1", "open-cluster-management")
	profile := getProfile(NewWithT(t), ctx, "consumer-ns", "consumer-c1")

	consumer := access.New([]access.Provider{{
		Name: "open-cluster-management",
		ExecConfig: &clientcmdapi.ExecConfig{
			APIVersion:         "client.authentication.k8s.io/v1",
			Command:            "/plugins/cp-creds",
			Args:               []string{"--managed-serviceaccount=multikueue"},
			ProvideClusterInfo: true,
			InteractiveMode:    clientcmdapi.NeverExecInteractiveMode,
		},
	}})
	cfg, err := consumer.BuildConfigFromCP(profile)
	g := NewWithT(t)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Host).To(Equal("https://cluster-proxy-addon-user.open-cluster-management-addon:9092/consumer-c1"))
	g.Expect(string(cfg.TLSClientConfig.CAData)).To(Equal("CA-1"))
	g.Expect(cfg.ExecProvider).NotTo(BeNil())
	g.Expect(cfg.ExecProvider.Command).To(Equal("/plugins/cp-creds"))
	g.Expect(cfg.ExecProvider.Args).To(Equal([]string{"--managed-serviceaccount=multikueue"}))
	g.Expect(cfg.ExecProvider.ProvideClusterInfo).To(BeTrue())
	g.Expect(cfg.ExecProvider.Config).NotTo(BeNil())
	raw, err := json.Marshal(cfg.ExecProvider.Config)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(raw).To(MatchJSON(`{"clusterName":"consumer-c1"}`))
}
