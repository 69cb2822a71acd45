#!/usr/bin/env bash
# Builds the Helm 4 CLI for the chart's Helm 4 test into $HELM4_BIN (default bin/helm4).
# Helm 4 needs newer k8s.io modules than this module's, so it cannot be a library
# here: it is built from its own module, outside this one, with the ldflags of
# Helm's Makefile so that `helm4 version` names the release. The binary is cached
# per version ($HELM4_CACHE, default ~/.cache/ocm-clusterprofile/helm-<version>),
# so only the first run on a machine pays the few minutes of the build.
set -euo pipefail

HELM4_VERSION="${HELM4_VERSION:-v4.3.1}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HELM4_BIN="${HELM4_BIN:-$ROOT/bin/helm4}"
CACHE="${HELM4_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ocm-clusterprofile/helm-$HELM4_VERSION}"

if [ ! -x "$CACHE/helm" ]; then
  echo "helm4: building helm $HELM4_VERSION (a few minutes on 2 cores)" >&2
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  # The module zip carries no commit, so gitCommit stays empty; a release build
  # has no metadata and a clean tree.
  pkg=helm.sh/helm/v4/internal/version
  (cd "$work" && CGO_ENABLED=0 GOBIN="$work/bin" GOFLAGS="${GOFLAGS:-} -mod=mod" go install -trimpath \
    -ldflags "-w -s -X $pkg.version=$HELM4_VERSION -X $pkg.metadata= -X $pkg.gitTreeState=clean" \
    "helm.sh/helm/v4/cmd/helm@$HELM4_VERSION")
  mkdir -p "$CACHE"
  mv "$work/bin/helm" "$CACHE/helm.tmp" && mv "$CACHE/helm.tmp" "$CACHE/helm"
fi
mkdir -p "$(dirname "$HELM4_BIN")"
if ! cmp -s "$CACHE/helm" "$HELM4_BIN"; then cp "$CACHE/helm" "$HELM4_BIN"; fi
"$HELM4_BIN" version >&2
