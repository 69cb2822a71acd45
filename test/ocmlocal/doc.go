//go:build linux

// Package ocmlocal runs a real Open Cluster Management environment on this
// machine, as local processes on 127.0.0.1 with no containers, set up as
// clusteradm sets it up: a hub control plane (etcd, kube-apiserver,
// kube-controller-manager) with OCM's cluster-manager operator and a
// ClusterManager, N managed control planes each with OCM's klusterlet
// operator and a Klusterlet, registered through the real bootstrap → CSR →
// client certificate flow, and optionally the managed-serviceaccount and
// cluster-proxy addons, Kueue and Argo CD's integration.
//
// There is no kubelet: the Deployments the operators create (hub
// controllers and webhooks, the klusterlet agent), and those addons ship
// (in ManifestWorks on the managed clusters, or directly on the hub), are
// run by the harness's own "kubelet", which maps each container image to a
// locally built binary and runs it in a pod sandbox. With Options.Registry
// an OCI registry runs too, holding this bundle's image; containers of
// images from there are pulled, unpacked and run from the image's root
// file system instead. The API servers reach Services (the operators'
// webhooks) through the harness's service network.
//
// This package is the environment (Env, Start) and the API the suites and
// the demo use; each part lives in a package of its own, which imports
// only the parts below it (test/style checks the layers):
//
//   - process, pki, binaries, podsandbox: processes, ports and polling;
//     the control planes' key material; the programs the harness runs;
//     what the pod runner (cmd/ocmlocal-pod) does inside a sandbox.
//   - controlplane, sandbox, images, registry: one control plane; a pod
//     sandbox and its relays; the node side of images; the local OCI
//     registry with the bundle's image and charts.
//   - kubelet, charts: the kubelet of a control plane; Helm's install,
//     upgrade and uninstall.
//   - servicenet, ocm, addons: the service network; OCM as clusteradm sets
//     it up; managed-serviceaccount and cluster-proxy.
//   - kueue, argocdcheck, docsconsumer: Kueue as the docs' MultiKueue
//     recipe sets it up; Argo CD's own code; the consumer's pod of the
//     chart's README.
//
// The programs are built by `make ocm-binaries` (hack/ocmlocal.sh) and
// `make envtest`.
package ocmlocal
