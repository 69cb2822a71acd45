//go:build linux

// Package e2e runs the bundle against real Open Cluster Management on this
// machine (test/ocmlocal): OCM's hub, two klusterlets registered through
// the real CSR flow, managed-serviceaccount, cluster-proxy with its user
// server and tunnel, and kube-controller-manager for garbage collection.
// The bundle's image and chart (`make image`) and the previous release's
// (`make previous`) are pushed into the local registry; the suite installs
// the previous release from there (all gates on) and upgrades it to this
// one. The hub's "kubelet" pulls the image and runs the chart's manager
// Deployment from the unpacked image, chrooted, with the chart's arguments,
// user and service account, and each cluster's runs the agent addon that
// OCM's work agent applies with the image the chart configured. A
// consumer's pod copies cp-creds from the image as the docs say. OCM's own
// programs run from their binaries (bin/ocm). Kueue's manager runs on the
// hub from its own chart (bin/ocm/kueue), as MultiKueue's consumer of
// kueue-system, with cp-creds from the unpacked image. Nothing OCM would
// write is written by hand.
//
// The fixtures only this suite uses (fixtures_*.go) live here, next to it,
// not in the harness: MultiKueueClusters and their Active condition, Argo
// CD's identity on a cluster, the CSR cleaner's work done early, and the
// count of a consumer's watches from an API server's audit log.
package e2e
