//go:build linux

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/agentapi"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
	"open-cluster-management.io/clusterprofile-bundle/test/consumer"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
)

// showClusters prints the ManagedClusters as their klusterlets registered
// them.
func (d *demo) showClusters(ctx context.Context) error {
	step("The clusters registered themselves: bootstrap token, CSR signed, accepted (hubAcceptsClient)")
	clusters := &clusterv1.ManagedClusterList{}
	if err := d.hub.List(ctx, clusters); err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "    NAME\tACCEPTED\tAVAILABLE\tKUBERNETES\tCLUSTERSET\tURL")
	for _, c := range clusters.Items {
		available := meta.FindStatusCondition(c.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
		url := ""
		if len(c.Spec.ManagedClusterClientConfigs) > 0 {
			url = c.Spec.ManagedClusterClientConfigs[0].URL
		}
		fmt.Fprintf(w, "    %s\t%v\t%s\t%s\t%s\t%s\n", c.Name, c.Spec.HubAcceptsClient, conditionStatus(available),
			c.Status.Version.Kubernetes, c.Labels[clusterv1beta2.ClusterSetLabel], url)
	}
	return w.Flush()
}

// showProfiles waits for every profile the bindings call for and prints them.
func (d *demo) showProfiles(ctx context.Context) error {
	step("The bundle publishes a ClusterProfile per cluster in each namespace its set is bound into")
	want := []types.NamespacedName{{Namespace: kueueNS, Name: "cluster1"}, {Namespace: kueueNS, Name: "cluster2"},
		{Namespace: argocdNS, Name: "cluster1"}, {Namespace: argocdNS, Name: "cluster2"}}
	err := d.waitFor(ctx, "4 profiles with both access entries", func(ctx context.Context) (bool, error) {
		for _, key := range want {
			p := &cpv1alpha1.ClusterProfile{}
			if err := d.hub.Get(ctx, key, p); err != nil || len(p.Status.AccessProviders) < 2 {
				return false, client.IgnoreNotFound(err)
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	return d.printProfiles(ctx)
}

func (d *demo) printProfiles(ctx context.Context) error {
	profiles := &cpv1alpha1.ClusterProfileList{}
	if err := d.hub.List(ctx, profiles); err != nil {
		return err
	}
	sort.Slice(profiles.Items, func(i, j int) bool {
		a, b := profiles.Items[i], profiles.Items[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "    NAMESPACE\tNAME\tCLUSTERSET\tKUBERNETES\tCONTROLPLANEHEALTHY\tACCESS PROVIDERS")
	for _, p := range profiles.Items {
		var entries []string
		for _, a := range p.Status.AccessProviders {
			entries = append(entries, a.Name)
		}
		healthy := meta.FindStatusCondition(p.Status.Conditions, cpv1alpha1.ClusterConditionControlPlaneHealthy)
		fmt.Fprintf(w, "    %s\t%s\t%s\t%s\t%s\t%s\n", p.Namespace, p.Name, p.Labels[clusterprofile.LabelClusterSet],
			p.Status.Version.Kubernetes, conditionStatus(healthy), strings.Join(entries, ","))
	}
	return w.Flush()
}

// showAgentConditions waits for the agent's report on cluster1 and prints
// the profile's conditions and the agent's properties.
func (d *demo) showAgentConditions(ctx context.Context) error {
	step("The cluster-profile-agent addon (placed by OCM, run on each cluster) reports health into the profiles")
	key := types.NamespacedName{Namespace: kueueNS, Name: "cluster1"}
	p := &cpv1alpha1.ClusterProfile{}
	err := d.waitFor(ctx, "the agent's report in "+key.String(), func(ctx context.Context) (bool, error) {
		if err := d.hub.Get(ctx, key, p); err != nil {
			return false, err
		}
		return meta.FindStatusCondition(p.Status.Conditions, agentapi.ConditionAllNodesHealthy) != nil && property(p, agentapi.ClaimNodes) == "1", nil
	})
	if err != nil {
		return err
	}
	if err := d.showNodeLag(ctx, "cluster1"); err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "    CONDITION\tSTATUS\tREASON\tMESSAGE")
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(w, "    %s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	fmt.Fprintln(w, "    PROPERTY\tVALUE")
	for _, prop := range p.Status.Properties {
		if strings.HasSuffix(prop.Name, agentapi.ClaimSuffix) {
			fmt.Fprintf(w, "    %s\t%s\n", prop.Name, prop.Value)
		}
	}
	return w.Flush()
}

// firstCount is when a profile first counted its cluster's node.
type firstCount struct {
	done chan struct{}
	at   time.Time
}

// timeNodeCount watches, from the moment the cluster's node registers, for
// the profile to count it, so the tour shows that lag however long the
// steps before showNodeLag take.
func (d *demo) timeNodeCount(ctx context.Context, key types.NamespacedName) *firstCount {
	fc := &firstCount{done: make(chan struct{})}
	go func() {
		p := &cpv1alpha1.ClusterProfile{}
		_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			if d.hub.Get(ctx, key, p) != nil || property(p, agentapi.ClaimNodes) != "1" {
				return false, nil
			}
			fc.at = time.Now()
			close(fc.done)
			return true, nil
		})
	}()
	return fc
}

// showNodeLag prints how long after the cluster's node registered its
// profile counted it: a significant change of the facts, which the agent
// and the mirror each publish at once after the cluster's first report.
func (d *demo) showNodeLag(ctx context.Context, cluster string) error {
	cs, err := d.env.Cluster(cluster).Clientset()
	if err != nil {
		return err
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, cluster+"-node", metav1.GetOptions{})
	if err != nil {
		return err
	}
	select {
	case <-d.nodeCounted.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	fmt.Printf("    %s's node registered at %s; its profile counts it (%s=1) %s later\n", cluster,
		node.CreationTimestamp.Format(time.TimeOnly), agentapi.ClaimNodes, d.nodeCounted.at.Sub(node.CreationTimestamp.Time).Round(time.Second))
	return nil
}

// property is the value of the profile's property of that name, or "".
func property(p *cpv1alpha1.ClusterProfile, name string) string {
	for _, prop := range p.Status.Properties {
		if prop.Name == name {
			return prop.Value
		}
	}
	return ""
}

// showSyncedToken waits for the token copy of cluster1 in kueue-system and
// prints what it is, without the token itself.
func (d *demo) showSyncedToken(ctx context.Context) error {
	step("The managed-serviceaccount agent's real token is copied next to the profile, for cp-creds")
	key := types.NamespacedName{Namespace: kueueNS, Name: "cluster1-" + consumer.ManagedServiceAccount}
	s := &corev1.Secret{}
	err := d.waitFor(ctx, "Secret "+key.String(), func(ctx context.Context) (bool, error) {
		return d.hub.Get(ctx, key, s) == nil, nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("    Secret %s: owned by %s, token of %s (%d bytes), ca.crt %d bytes\n", key,
		owners(s), tokenSubject(s.Data["token"]), len(s.Data["token"]), len(s.Data["ca.crt"]))
	fmt.Printf("    cp-creds sends it only to the servers the hub publishes for cluster1: %s\n",
		s.Annotations[cpcreds.AnnotationPublishedServers])
	elsewhere := types.NamespacedName{Namespace: argocdNS, Name: key.Name}
	if err := d.hub.Get(ctx, elsewhere, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s must not exist: the ManagedServiceAccount names only %s (%v)", elsewhere, kueueNS, err)
	}
	fmt.Printf("    Secret %s: none, though %s serves cluster1 too: the ManagedServiceAccount names only %s\n", elsewhere, argocdNS, kueueNS)
	return nil
}

func owners(obj client.Object) string {
	var out []string
	for _, o := range obj.GetOwnerReferences() {
		out = append(out, o.Kind+" "+o.Name)
	}
	return strings.Join(out, ", ")
}

// tokenSubject reads the subject of a service account token (a JWT).
func tokenSubject(token []byte) string {
	parts := strings.Split(string(token), ".")
	if len(parts) != 3 {
		return "(not a JWT)"
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Sub string `json:"sub"`
	}
	if err != nil || json.Unmarshal(raw, &claims) != nil {
		return "(unreadable JWT)"
	}
	return claims.Sub
}

func conditionStatus(c *metav1.Condition) string {
	if c == nil {
		return "-"
	}
	return string(c.Status)
}

// showRunningFromTheImage shows that the kubelets run the manager and each
// agent from the bundle's image in the local registry: each process
// chrooted into the unpacked image, executing the image's binary.
func (d *demo) showRunningFromTheImage(ctx context.Context) error {
	step("The manager and the agents run from the image %s, not from bin/", d.env.Registry.BundleReference())
	type pod struct {
		cp                             *ocmlocal.ControlPlane
		namespace, deployment, program string
	}
	pods := []pod{{d.env.Hub, releaseNamespace, releaseName, "clusterprofile-manager"}}
	for _, c := range d.env.Clusters {
		pods = append(pods, pod{c.ControlPlane, agentNamespace, agentDeployment, "clusterprofile-agent"})
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "    CLUSTER\tDEPLOYMENT\tPID\tIMAGE PLATFORM DIGEST\tEXECUTABLE")
	for _, p := range pods {
		var c ocmlocal.ContainerStatus
		var notYet error
		err := d.waitFor(ctx, p.deployment+" on "+p.cp.Name+" running from the image", func(context.Context) (bool, error) {
			c, notYet = d.env.RunsFromImage(p.cp, p.namespace, p.deployment, p.program)
			return notYet == nil, nil
		})
		if err != nil {
			return fmt.Errorf("%w: %v", err, notYet)
		}
		fmt.Fprintf(w, "    %s\t%s/%s\t%d\t%s\t%s\n", p.cp.Name, p.namespace, p.deployment, c.PID, c.ImageDigest, filepath.Join(c.Rootfs, p.program))
	}
	return w.Flush()
}
