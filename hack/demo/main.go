// Command demo shows clusterprofile-manager at work: it starts a local control
// plane (kube-apiserver and etcd from bin/envtest), publishes a small fleet of
// ManagedClusters, runs the real manager binary against it and shows the
// ClusterProfiles it writes, then changes the fleet live and shows how fast
// the profiles follow.
//
//	make demo                     run the scenario and stop
//	make demo DEMO_ARGS=-keep     keep everything running afterwards
//
// With KUBECONFIG set, the demo uses that hub instead of a local control
// plane, creates only objects named demo-* and deletes them at the end.
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

	"open-cluster-management.io/clusterprofile-bundle/test/integration/framework"
)

// options are the command-line settings.
type options struct {
	managerPath string
	keep        bool
	timeout     time.Duration
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
	// A flag set of our own: controller-runtime registers --kubeconfig on the
	// global one, and the demo takes its hub from KUBECONFIG instead.
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&opts.managerPath, "manager", filepath.Join(framework.RepoRoot(), "bin", "clusterprofile-manager"),
		"The clusterprofile-manager `binary` to run; make build writes it to bin/.")
	fs.BoolVar(&opts.keep, "keep", false, "Keep the control plane and the manager running after the scenario, until Ctrl-C.")
	fs.DurationVar(&opts.timeout, "timeout", 30*time.Second, "How long to wait for the ClusterProfiles to converge after each change.")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected arguments %q; see -help", fs.Args())
	}
	return opts, nil
}

// run plays the whole demo. Whatever happens, the manager and the control
// plane it started are stopped before it returns. An interruption (Ctrl-C,
// SIGTERM) is a normal way to end the demo and returns nil.
func run(opts options) (err error) {
	if _, statErr := os.Stat(opts.managerPath); statErr != nil {
		return fmt.Errorf("manager binary not found (run `make build` first): %w", statErr)
	}
	ctx, stopSignals := interruptibleContext()
	defer stopSignals()

	cleanups := &cleanupStack{}
	defer func() {
		err = errors.Join(err, cleanups.run())
		if interrupted(ctx) && err == nil {
			fmt.Println("Stopped cleanly.")
		}
	}()

	err = playScenario(ctx, opts, cleanups)
	if interrupted(ctx) {
		// Errors after an interruption are only the cancelled waits.
		return nil
	}
	return err
}

// playScenario is the demo proper; everything it starts is pushed on cleanups.
func playScenario(ctx context.Context, opts options, cleanups *cleanupStack) error {
	h, err := connectHub(ctx, cleanups)
	if err != nil {
		return err
	}
	s := newScenario(h.prefix)
	if h.existing {
		if err := s.checkSafeOnExistingHub(ctx, h.client); err != nil {
			return err
		}
	}
	if err := s.create(ctx, h, cleanups); err != nil {
		return err
	}
	mgr, err := startManager(opts.managerPath, h)
	if err != nil {
		return err
	}
	cleanups.push("stopping clusterprofile-manager", mgr.stop)
	return s.showLiveChanges(ctx, h, mgr, opts)
}

// cleanupStack runs cleanups in reverse order of registration.
type cleanupStack struct {
	steps []cleanupStep
}

type cleanupStep struct {
	what string
	do   func() error
}

func (c *cleanupStack) push(what string, do func() error) {
	c.steps = append(c.steps, cleanupStep{what: what, do: do})
}

// run runs every cleanup, even after one fails, and reports all failures.
func (c *cleanupStack) run() error {
	var errs []error
	for i := len(c.steps) - 1; i >= 0; i-- {
		step := c.steps[i]
		fmt.Printf("Cleaning up: %s... ", step.what)
		started := time.Now()
		if err := step.do(); err != nil {
			fmt.Println("failed")
			errs = append(errs, fmt.Errorf("%s: %w", step.what, err))
			continue
		}
		fmt.Printf("done (%s)\n", since(started))
	}
	c.steps = nil
	return errors.Join(errs...)
}
