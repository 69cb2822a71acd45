package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cpv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/cpcreds"
)

func newGetCommand(config *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var msa, output string
	cmd := &cobra.Command{
		Use:   "get -n <namespace> [--managed-serviceaccount <name>]",
		Short: "List the namespace's ClusterProfiles: cluster, set, version, health, providers, token expiry",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "table" && output != "json" {
				return fmt.Errorf("--output %q: use table or json", output)
			}
			c, namespace, err := hubClient(config)
			if err != nil {
				return err
			}
			summaries, err := summarize(cmd.Context(), c, namespace, msa)
			if err != nil {
				return err
			}
			if output == "json" {
				return PrintJSON(streams.Out, summaries)
			}
			return PrintSummaries(streams.Out, summaries, time.Now())
		},
	}
	cmd.Flags().StringVar(&msa, "managed-serviceaccount", "", "show only the token copies of this ManagedServiceAccount")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

// summarize reads the profiles and the synced copies of the namespace. A
// caller who may not list Secrets still gets the profiles.
func summarize(ctx context.Context, c client.Client, namespace, msa string) ([]Summary, error) {
	profiles := &cpv1alpha1.ClusterProfileList{}
	if err := c.List(ctx, profiles, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing ClusterProfiles in namespace %s: %w", namespace, err)
	}
	copies := &corev1.SecretList{}
	err := c.List(ctx, copies, client.InNamespace(namespace), client.HasLabels{cpcreds.LabelSyncedFrom})
	if err != nil && !apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("listing token copies in namespace %s: %w", namespace, err)
	}
	return Summarize(profiles.Items, copies.Items, msa), nil
}
