package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/yaml"

	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
)

// showProfileTable prints the profiles as `kubectl get clusterprofiles -A`
// with the clusterset and cluster-name labels as columns. It runs kubectl
// when there is one, so the user sees exactly what they would type.
func showProfileTable(ctx context.Context, h *hub) error {
	args := []string{"get", "clusterprofiles", "-A",
		"-L", clusterprofile.LabelClusterSet, "-L", clusterprofile.LabelClusterName}
	if h.existing {
		// Only the demo's profiles, not those of the hub's other managers.
		args = append(args, "-l", clusterprofile.LabelClusterManager+"="+h.managerName)
	}
	if ran := runKubectl(ctx, h, args); ran {
		return nil
	}
	profiles, err := listProfiles(ctx, h)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "NAMESPACE\tNAME\tAGE\tCLUSTERSET\tCLUSTER-NAME")
	for _, p := range profiles {
		age := time.Since(p.CreationTimestamp.Time).Round(time.Second)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", p.Namespace, p.Name, age,
			p.Labels[clusterprofile.LabelClusterSet], p.Labels[clusterprofile.LabelClusterName])
	}
	return w.Flush()
}

// runKubectl prints and runs a kubectl command against the hub. It returns
// false, having said why, when there is no kubectl or it failed, so that the
// caller prints the same information itself.
func runKubectl(ctx context.Context, h *hub, args []string) bool {
	if h.kubeconfig != "" {
		args = append([]string{"--kubeconfig", displayPath(h.kubeconfig)}, args...)
	}
	fmt.Printf("\n$ kubectl %s\n", strings.Join(args, " "))
	path, err := exec.LookPath("kubectl")
	if err != nil {
		fmt.Println("(kubectl is not on PATH; the same table, read from the API:)")
		return false
	}
	cmd := exec.CommandContext(ctx, path, args...)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = os.Stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() == nil {
			fmt.Printf("(kubectl failed: %v %s; the same table, read from the API:)\n", err, strings.TrimSpace(stderr.String()))
		}
		return false
	}
	return true
}

// showProfile prints a profile's labels, spec and status as YAML, as the
// API server returns them.
func showProfile(ctx context.Context, h *hub, key types.NamespacedName) error {
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(cpv1alpha1.GroupVersion.WithKind("ClusterProfile"))
	if err := h.client.Get(ctx, key, p); err != nil {
		return fmt.Errorf("reading ClusterProfile %s: %w", key, err)
	}
	view := map[string]any{
		"metadata": map[string]any{"name": p.GetName(), "namespace": p.GetNamespace(), "labels": p.GetLabels()},
		"spec":     p.Object["spec"],
		"status":   p.Object["status"],
	}
	out, err := yaml.Marshal(view)
	if err != nil {
		return fmt.Errorf("rendering ClusterProfile %s: %w", key, err)
	}
	fmt.Printf("\nClusterProfile %s (metadata trimmed; the whole object: kubectl get clusterprofile %s -n %s -o yaml):\n",
		key, key.Name, key.Namespace)
	fmt.Print(indent(string(out), "    "))
	return nil
}

// showConditions prints the mirrored conditions of every profile of a cluster.
func showConditions(ctx context.Context, h *hub, cluster string) error {
	profiles, err := listProfiles(ctx, h)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	for _, p := range profiles {
		if p.Name != cluster {
			continue
		}
		for _, conditionType := range []string{cpv1alpha1.ClusterConditionControlPlaneHealthy, clusterprofile.ConditionJoined} {
			c := meta.FindStatusCondition(p.Status.Conditions, conditionType)
			if c == nil {
				continue
			}
			fmt.Fprintf(w, "    %s/%s\t%s=%s\t%s: %s\n", p.Namespace, p.Name, c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return w.Flush()
}

func indent(text, prefix string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		if line != "" {
			lines[i] = prefix + line
		}
	}
	return strings.Join(lines, "")
}
