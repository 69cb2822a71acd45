//go:build linux

// Command demo shows the ClusterProfile bundle on real Open Cluster
// Management, run locally as processes (test/ocmlocal) and set up as
// clusteradm does: a hub with OCM's cluster-manager operator and the
// controllers it deploys, two managed clusters whose klusterlets (operator
// and agent) register through the real CSR flow, managed-serviceaccount and
// cluster-proxy. It installs the
// bundle with its Helm chart (every gate on) and shows, step by step, the
// clusters registering, their profiles in kueue-system and argocd, the
// agent's health conditions, a synced token, a real request to a managed
// cluster through cp-creds and the cluster-proxy entry with the MultiKueue
// configuration of OCM's documentation, and a live change.
//
//	make demo                     run the scenario and stop
//	make demo DEMO_ARGS=-keep     keep everything running afterwards
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal"
	"open-cluster-management.io/clusterprofile-bundle/test/ocmlocal/registry"
)

// options are the command-line settings.
type options struct {
	binDir  string
	keep    bool
	timeout time.Duration
}

func main() {
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := run(opts); err != nil {
		fmt.Fprintf(os.Stderr, "\ndemo failed: %v\n", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, output io.Writer) (options, error) {
	opts := options{}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&opts.binDir, "bin", filepath.Join(ocmlocal.RepoRoot(), "bin"),
		"The `directory` with clusterprofile-manager, clusterprofile-agent and cp-creds (make build).")
	fs.BoolVar(&opts.keep, "keep", false, "Keep OCM and the bundle running after the scenario, until Ctrl-C.")
	fs.DurationVar(&opts.timeout, "timeout", 3*time.Minute, "How long to wait for each step.")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected arguments %q; see -help", fs.Args())
	}
	return opts, nil
}

// run plays the demo. Whatever happens, every process it started is
// stopped before it returns; Ctrl-C is a normal way to end it.
func run(opts options) error {
	// Absolute: the plugin path goes into the printed configuration.
	binDir, err := filepath.Abs(opts.binDir)
	if err != nil {
		return err
	}
	opts.binDir = binDir
	for _, name := range []string{"clusterprofile-manager", "clusterprofile-agent", "cp-creds"} {
		if _, err := os.Stat(filepath.Join(opts.binDir, name)); err != nil {
			return fmt.Errorf("%s not built (run `make build` first): %w", name, err)
		}
	}
	if err := ocmlocal.BinariesBuilt(); err != nil {
		return fmt.Errorf("%w (make ocm-binaries; the first build takes about 20 minutes)", err)
	}
	if err := registry.BundleImageBuilt(registry.BundleImageLayout()); err != nil {
		return fmt.Errorf("%w (make image)", err)
	}
	ctx, stopSignals := interruptibleContext()
	defer stopSignals()
	start := time.Now()
	err = play(ctx, opts, start)
	if interrupted(ctx) {
		fmt.Println("Stopped cleanly.")
		return nil
	}
	return err
}

// play starts OCM, runs the scenario, and stops OCM again.
func play(ctx context.Context, opts options, start time.Time) error {
	step("Starting a local Open Cluster Management: a hub and 2 managed clusters, as processes on 127.0.0.1")
	env, err := ocmlocal.Start(ctx, ocmlocal.Options{Clusters: 2, ManagedServiceAccount: true, ClusterProxy: true,
		ArgoCD: true, Registry: true, Progress: indentWriter{os.Stdout}})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("\nStopping every process...")
		env.Stop()
	}()
	d := &demo{env: env, opts: opts}
	if err := d.scenario(ctx); err != nil {
		return err
	}
	fmt.Printf("\nThe demo took %s.\n", time.Since(start).Round(time.Second))
	if opts.keep {
		return d.keepRunning(ctx)
	}
	return nil
}

// step prints the heading of a step.
func step(format string, args ...any) {
	fmt.Printf("\n==> "+format+"\n", args...)
}

// indentWriter indents the harness's progress lines under a step.
type indentWriter struct{ w io.Writer }

func (i indentWriter) Write(p []byte) (int, error) {
	if _, err := fmt.Fprintf(i.w, "    %s", p); err != nil {
		return 0, err
	}
	return len(p), nil
}
