package doctor

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"open-cluster-management.io/clusterprofile-bundle/pkg/accessprovider"
	"open-cluster-management.io/clusterprofile-bundle/pkg/clusterprofile"
	"open-cluster-management.io/clusterprofile-bundle/pkg/scheme"
)

// Exit codes of the plugin.
const (
	ExitOK     = 0
	ExitFailed = 1 // a check failed
	ExitError  = 2 // bad usage, or the hub could not be read
)

// errChecksFailed ends a run whose report has already been printed.
var errChecksFailed = errors.New("some checks failed")

// Execute runs `kubectl clusterprofile` with args and returns the exit code.
func Execute(args []string, streams genericiooptions.IOStreams) int {
	root := NewCommand(streams)
	root.SetArgs(args)
	err := root.Execute()
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errChecksFailed):
		return ExitFailed
	default:
		fmt.Fprintf(streams.ErrOut, "error: %v\n", err)
		return ExitError
	}
}

// NewCommand is `kubectl clusterprofile` with its subcommands.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	config := genericclioptions.NewConfigFlags(true)
	// --as names the consumer whose rights are checked; the doctor itself
	// never impersonates.
	config.Impersonate, config.ImpersonateUID, config.ImpersonateGroup, config.ImpersonateUserExtra = nil, nil, nil, nil
	root := &cobra.Command{
		Use:           "kubectl-clusterprofile",
		Short:         "Look at ClusterProfiles from a consumer's side",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	config.AddFlags(root.PersistentFlags())
	root.AddCommand(newDoctorCommand(config, streams), newGetCommand(config, streams))
	return root
}

// hubClient reads the hub through the usual kubeconfig rules.
func hubClient(config *genericclioptions.ConfigFlags) (client.Client, string, error) {
	cfg, err := config.ToRESTConfig()
	if err != nil {
		return nil, "", err
	}
	namespace, _, err := config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	return c, namespace, err
}

type doctorFlags struct {
	providers           []string
	msa, plugin, output string
	as, manager         string
	asGroups            []string
	connect             bool
	expiryMargin        time.Duration
}

func newDoctorCommand(config *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	f := &doctorFlags{}
	cmd := &cobra.Command{
		Use:   "doctor -n <namespace> --managed-serviceaccount <name> [--provider <name>,...] [--connect]",
		Short: "Check, per cluster, everything a consumer in the namespace needs; exit 0 only when all pass",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, config, streams)
		},
	}
	flags := cmd.Flags()
	flags.StringSliceVar(&f.providers, "provider", []string{accessprovider.ProxyEntryName}, "the consumer's access provider names, in its order")
	flags.StringVar(&f.msa, "managed-serviceaccount", "", "the ManagedServiceAccount whose token the consumer uses (cp-creds' --managed-serviceaccount)")
	flags.StringVar(&f.plugin, "plugin", DefaultPlugin, "the exec plugin to run with --connect (a path, or a name on PATH)")
	flags.StringVar(&f.as, "as", "", "the consumer's identity, e.g. system:serviceaccount:<ns>:<sa> (default: you)")
	flags.StringSliceVar(&f.asGroups, "as-group", nil, "groups of --as beyond those a service account or authenticated user has")
	flags.BoolVar(&f.connect, "connect", false, "also call /version on each cluster as a consumer would, through the plugin")
	flags.StringVarP(&f.output, "output", "o", "table", "table or json")
	flags.StringVar(&f.manager, "cluster-manager", clusterprofile.DefaultManagerName, "the cluster manager name of the bundle's profiles")
	flags.DurationVar(&f.expiryMargin, "expiry-margin", DefaultExpiryMargin, "a token expiring within this is reported")
	return cmd
}

func (f *doctorFlags) run(cmd *cobra.Command, config *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) error {
	d, err := f.doctor(config)
	if err != nil {
		return err
	}
	rows, err := d.Run(cmd.Context())
	if err != nil {
		return err
	}
	report := NewReport(d.Settings.Namespace, rows, d.Warnings(cmd.Context()))
	report.Mirror = d.ActiveMirror(cmd.Context())
	if f.output == "json" {
		err = PrintJSON(streams.Out, report)
	} else {
		err = PrintTable(streams.Out, report)
	}
	if err == nil && !report.OK {
		return errChecksFailed
	}
	return err
}
