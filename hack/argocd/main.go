// Command argocd-check runs Argo CD's own code against a hub so that the
// bundle's end-to-end tests, whose module cannot import Argo CD (it needs newer
// k8s.io modules and a newer Go), can check the cluster Secrets the bundle
// writes the way Argo CD itself reads them:
//
//	argocd-check version
//	argocd-check clusters        --kubeconfig HUB --namespace argocd
//	argocd-check sync            --kubeconfig HUB --namespace argocd --cluster NAME --manifests DIR --app APP [--prune]
//	argocd-check appset-clusters --kubeconfig HUB --namespace argocd --selector k=v[,k2=v2]
//	argocd-check appset-decisions --kubeconfig HUB --namespace argocd --configmap NAME --label-selector k=v
//
// Each prints one JSON document on stdout. What goes wrong with one cluster
// (its credentials, its sync) is reported in the document's "error" field, so
// that a test sees every cluster's outcome; only errors that leave nothing to
// report (bad flags, an unreachable hub, an unknown cluster) exit 1, with the
// message on stderr. Logs of Argo CD and gitops-engine go to stderr.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	log "github.com/sirupsen/logrus"
)

// command is one subcommand: it registers its own flags on fs and returns a
// function that runs it against the hub once the flags are parsed.
type command func(fs *flag.FlagSet) func(ctx context.Context, h *hub) (any, error)

var commands = map[string]command{
	"clusters":         clustersCommand,
	"sync":             syncCommand,
	"appset-clusters":  appsetClustersCommand,
	"appset-decisions": appsetDecisionsCommand,
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "argocd-check:", err)
		os.Exit(1)
	}
}

// run is main without the process around it, so that the tests drive the
// same flag parsing and JSON output in-process.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 1 && args[0] == "version" {
		return printJSON(stdout, version())
	}
	if len(args) == 0 || commands[args[0]] == nil {
		return fmt.Errorf("usage: argocd-check version|clusters|sync|appset-clusters|appset-decisions [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "the hub's kubeconfig, as the identity of Argo CD's pods")
	namespace := fs.String("namespace", "argocd", "Argo CD's namespace on the hub")
	logLevel := fs.String("log-level", "warn", "level of Argo CD's logs on stderr (debug, info, warn, error)")
	runCmd := commands[args[0]](fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	level, err := log.ParseLevel(*logLevel)
	if err != nil {
		return err
	}
	// Argo CD logs through logrus; its default output is stderr already, which
	// keeps stdout for the one JSON document.
	log.SetLevel(level)
	h, err := newHub(ctx, *kubeconfig, *namespace)
	if err != nil {
		return err
	}
	defer h.stop()
	out, err := runCmd(ctx, h)
	if err != nil {
		return err
	}
	return printJSON(stdout, out)
}

func printJSON(stdout io.Writer, out any) error {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
