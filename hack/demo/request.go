//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/pkg/doctor"
	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
)

// seedConfig is MultiKueue's configuration from OCM's documentation; only
// the plugin's path differs (there /plugins/cp-creds, mounted from an image).
const seedConfig = `    multiKueue:
      clusterProfile:
        credentialsProviders:
        - name: open-cluster-management
          execConfig:
            apiVersion: client.authentication.k8s.io/v1
            command: %s
            args:
            - --managed-serviceaccount=multikueue
            provideClusterInfo: true
            interactiveMode: Never
`

// realRequest plays MultiKueue: it reads each profile in kueue-system and
// lists the cluster's namespaces with cluster-inventory-api's pkg/access
// through the open-cluster-management entry (cluster-proxy's user server,
// ANP's tunnel, the proxy agent), cp-creds handing it the synced token.
func (d *demo) realRequest(ctx context.Context) error {
	step("A consumer (configured as MultiKueue) reaches each cluster through cp-creds and cluster-proxy")
	cpCreds := filepath.Join(d.opts.binDir, "cp-creds")
	fmt.Printf(seedConfig, cpCreds)
	// As in Kueue's pod, cp-creds finds the consumer's own hub identity in
	// its environment; here a kubeconfig whose namespace is kueue-system.
	if err := os.Setenv("KUBECONFIG", d.consumerKubeconfig); err != nil {
		return err
	}
	c := &consumer.Consumer{Profiles: d.hub, Namespace: kueueNS, Providers: consumer.SeedProviders(cpCreds)}
	for _, cluster := range []string{"cluster1", "cluster2"} {
		p, err := c.Profile(ctx, cluster)
		if err != nil {
			return err
		}
		for _, a := range p.Status.AccessProviders {
			if a.Name == consumer.ProxyProvider {
				fmt.Printf("    %s/%s entry %q: server %s\n", kueueNS, cluster, a.Name, a.Cluster.Server)
			}
		}
		var names []string
		err = d.waitFor(ctx, "namespaces of "+cluster+" listed through the user server", func(ctx context.Context) (bool, error) {
			names, err = c.ListNamespaces(ctx, cluster)
			return err == nil, err
		})
		if err != nil {
			return err
		}
		fmt.Printf("    %s: %s\n", cluster, strings.Join(names, ", "))
	}
	return nil
}

// docsConsumerName is the consumer's pod that podFromTheDocs runs.
const docsConsumerName = "docs-consumer"

// podFromTheDocs runs a consumer's pod in kueue-system as the chart's
// README says: an initContainer from the bundle's image copies /cp-creds
// into an emptyDir at /plugins, and the consumer's container (the bundle's
// doctor, building clients from the profiles as MultiKueue does) reaches
// each cluster with that copy, every container run from the image.
func (d *demo) podFromTheDocs(ctx context.Context) error {
	step("A consumer's pod as the docs say: an initContainer copies /cp-creds from %s, the consumer reaches each cluster with the copy",
		d.env.Registry.BundleReference())
	fmt.Printf("    initContainers: [{name: install-cp-creds, command: [cp, /cp-creds, /plugins/cp-creds]}]  (emptyDir at /plugins)\n")
	if err := d.env.StartDocsConsumer(ctx, kueueNS, docsConsumerName, consumer.ManagedServiceAccount); err != nil {
		return err
	}
	var report doctor.Report
	err := d.waitFor(ctx, "every cluster answered the pod through /plugins/cp-creds", func(context.Context) (bool, error) {
		var err error
		if report, err = d.env.DocsConsumerReport(kueueNS, docsConsumerName); err != nil {
			return false, err
		}
		for _, row := range report.Rows {
			if row.ServerVersion == "" {
				return false, fmt.Errorf("%s: no answer yet", row.Cluster)
			}
		}
		return len(report.Rows) > 0, nil
	})
	if err != nil {
		return err
	}
	for _, row := range report.Rows {
		fmt.Printf("    %s through %q: /version %s in %s\n", row.Cluster, row.Provider, row.ServerVersion, row.Latency.Round(time.Millisecond))
	}
	return d.env.StopDocsConsumer(ctx, kueueNS, docsConsumerName)
}
