//go:build linux

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	authv1beta1 "open-cluster-management.io/managed-serviceaccount/apis/authentication/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
)

const (
	releaseName      = "clusterprofile-manager"
	releaseNamespace = "clusterprofile-system"
	// agentNamespace and agentDeployment are where OCM's work agent applies
	// the bundle's agent on each managed cluster.
	agentNamespace  = "open-cluster-management-agent-addon"
	agentDeployment = "cluster-profile-agent"
	kueueNS         = "kueue-system"
	argocdNS        = "argocd"
	// workerSet selects the clusters labelled workerLabel=true; it is bound
	// into kueue-system. OCM's "default" set (every cluster) is bound into
	// argocd.
	workerSet   = "multikueue"
	workerLabel = "multikueue-worker"
	defaultSet  = "default"
)

// demo is the running scenario.
type demo struct {
	env                *ocmlocal.Env
	opts               options
	hub                client.Client
	consumerKubeconfig string
	// nodeCounted is when cluster1's profile first counted its node.
	nodeCounted *firstCount
}

func (d *demo) scenario(ctx context.Context) error {
	var err error
	if d.hub, err = d.env.HubClient(); err != nil {
		return err
	}
	steps := []func(context.Context) error{
		d.showClusters, d.installBundle, d.prepareFleet, d.showProfiles,
		d.showAgentConditions, d.showRunningFromTheImage, d.showSyncedToken, d.realRequest, d.podFromTheDocs, d.argoCD, d.liveChange,
	}
	for _, s := range steps {
		if err := s(ctx); err != nil {
			return err
		}
	}
	return nil
}

// installBundle installs the chart as a platform engineer would, every
// gate on, from the local registry (`helm install oci://...`), with the
// bundle's image there: the hub's kubelet runs its manager Deployment from
// the unpacked image with the chart's arguments, user and service account.
func (d *demo) installBundle(ctx context.Context) error {
	step("Installing the bundle with its Helm chart from %s into %s, every feature gate on", d.env.Registry.ChartReference, releaseNamespace)
	return d.env.InstallBundle(ctx, releaseName, releaseNamespace)
}

// prepareFleet does what a platform engineer does for MultiKueue and Argo
// CD: a node per cluster (what the agent reports on), the worker set bound
// into kueue-system and the default set into argocd, the workers labelled,
// and the multikueue ManagedServiceAccount, synced to profiles in Kueue's
// namespace only, allowed to list namespaces on each cluster.
func (d *demo) prepareFleet(ctx context.Context) error {
	step("Preparing the fleet: set %q (label %s=true) bound into %s, set %q into %s, ManagedServiceAccount %q",
		workerSet, workerLabel, kueueNS, defaultSet, argocdNS, consumer.ManagedServiceAccount)
	set := &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: workerSet},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType:  clusterv1beta2.LabelSelector,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{workerLabel: "true"}}}}}
	if err := d.hub.Create(ctx, set); err != nil {
		return err
	}
	for _, b := range []struct{ namespace, set string }{{kueueNS, workerSet}, {argocdNS, defaultSet}} {
		if err := d.bind(ctx, b.namespace, b.set); err != nil {
			return err
		}
	}
	for _, c := range d.env.Clusters {
		if err := d.prepareCluster(ctx, c); err != nil {
			return err
		}
		if c.Name == "cluster1" {
			d.nodeCounted = d.timeNodeCount(ctx, types.NamespacedName{Namespace: kueueNS, Name: c.Name})
		}
		fmt.Printf("    %s: node registered, labelled %s=true, ManagedServiceAccount %s/%s created for %s only\n",
			c.Name, workerLabel, c.Name, consumer.ManagedServiceAccount, kueueNS)
	}
	d.consumerKubeconfig = filepath.Join(d.env.WorkDir, "kueue.kubeconfig")
	return consumer.WriteKubeconfig(ctx, d.env.HubConfig(), kueueNS, d.consumerKubeconfig)
}

func (d *demo) bind(ctx context.Context, namespace, set string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := d.hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return d.hub.Create(ctx, &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: set},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: set}})
}

func (d *demo) prepareCluster(ctx context.Context, c *ocmlocal.ManagedCluster) error {
	if err := c.PrepareForConsumers(ctx); err != nil {
		return err
	}
	if err := d.labelCluster(ctx, c.Name, `"true"`); err != nil {
		return err
	}
	// Scoped to Kueue's namespace: Argo CD's namespace, which serves the
	// same clusters, gets no copy of MultiKueue's token.
	return d.hub.Create(ctx, &authv1beta1.ManagedServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Name, Name: consumer.ManagedServiceAccount,
			Labels:      map[string]string{cpcreds.LabelSyncToClusterProfile: "true"},
			Annotations: map[string]string{cpcreds.AnnotationConsumerNamespaces: kueueNS}},
		Spec: authv1beta1.ManagedServiceAccountSpec{Rotation: authv1beta1.ManagedServiceAccountRotation{
			Enabled: true, Validity: metav1.Duration{Duration: 24 * time.Hour}}},
	})
}

// waitFor polls until done says so, and prints how long it took.
func (d *demo) waitFor(ctx context.Context, what string, done func(context.Context) (bool, error)) error {
	start := time.Now()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, d.opts.timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := done(ctx)
		if err != nil {
			last = err
		}
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w (last error: %v)", what, err, last)
	}
	fmt.Printf("    %s after %s\n", what, time.Since(start).Round(100*time.Millisecond))
	return nil
}
