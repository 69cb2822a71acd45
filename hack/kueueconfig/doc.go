// Package kueueconfig checks the docs' MultiKueue configuration for Kueue
// 0.19 and later (docs/examples/multikueue/kueue-manager-config-v0.19.yaml)
// with Kueue v0.19.2's own loader and validation. Kueue 0.19 needs newer
// k8s.io modules than the bundle's, so it lives in its own module, as
// hack/argocd and hack/helm4 do. The configuration for Kueue 0.16 to 0.18
// is the one the end-to-end suite starts Kueue v0.16.1 with.
package kueueconfig
