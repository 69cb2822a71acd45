#!/usr/bin/env bash
# Builds argocd-check (hack/argocd) into $ARGOCD_BIN (default bin/argocd-check)
# for the end-to-end tests that check the bundle's cluster Secrets with Argo
# CD's own code. Argo CD needs newer k8s.io modules and a newer Go than this
# module's, so the probe is a module of its own, built with the Go toolchain
# Argo CD's release needs ($ARGOCD_GOTOOLCHAIN), which the go command fetches
# from the module proxy on first use. The binary is cached per Argo CD version
# ($ARGOCD_CACHE, default ~/.cache/ocm-clusterprofile/argocd-<version>) under a
# hash of the probe's sources, so only the first run on a machine, or after a
# change to the probe, pays the few minutes of the build.
#
# `hack/argocd.sh test` runs the probe's own tests (against envtest) instead.
# Either way, when the toolchain cannot be fetched the script says why and
# stops without failing outside CI (the end-to-end tests then skip with that
# reason); in CI ($CI set) it fails.
set -euo pipefail

MODE="${1:-build}"
ARGOCD_VERSION="${ARGOCD_VERSION:-v3.6.1}"
ARGOCD_GOTOOLCHAIN="${ARGOCD_GOTOOLCHAIN:-go1.27.3}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/hack/argocd"
ARGOCD_BIN="${ARGOCD_BIN:-$ROOT/bin/argocd-check}"
CACHE="${ARGOCD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ocm-clusterprofile/argocd-$ARGOCD_VERSION}"

log() { echo "argocd: $*" >&2; }

# The version is the probe's go.mod's (with Argo CD's replace block beside it);
# a different ARGOCD_VERSION cannot be built by this script alone.
pinned="$(awk '$1 == "github.com/argoproj/argo-cd/v3" { print $2; exit }' "$SRC/go.mod")"
if [ "$pinned" != "$ARGOCD_VERSION" ]; then
  log "hack/argocd/go.mod requires Argo CD $pinned, not $ARGOCD_VERSION: change its require and replace blocks (from Argo CD's go.mod) to build another release"
  exit 1
fi

# Test files are left out of the key: they do not change the binary.
key="$(cd "$SRC" && { echo "$ARGOCD_GOTOOLCHAIN"; cat go.mod go.sum $(ls *.go | grep -v '_test\.go$' | sort); } | sha256sum | cut -c1-16)"
cached="$CACHE/argocd-check-$key"

# toolchain sets go_version to the go command's version with Argo CD's
# toolchain, or says why it cannot be had: a failure in CI, a skip elsewhere.
toolchain() {
  if go_version="$(cd "$SRC" && GOTOOLCHAIN="$ARGOCD_GOTOOLCHAIN" go version 2>&1)"; then
    return
  fi
  log "cannot get the Go toolchain $ARGOCD_GOTOOLCHAIN that Argo CD $ARGOCD_VERSION needs (the go command fetches it from the module proxy):"
  echo "$go_version" >&2
  if [ -n "${CI:-}" ]; then exit 1; fi
  if [ "$MODE" = test ]; then
    log "skipping argocd-check's own tests"
  else
    log "skipping: the Argo CD end-to-end test skips without $ARGOCD_BIN"
  fi
  exit 0
}

if [ "$MODE" = test ]; then
  toolchain
  cd "$SRC" && exec env GOTOOLCHAIN="$ARGOCD_GOTOOLCHAIN" go test ./... -count=1
fi

if [ ! -x "$cached" ]; then
  toolchain
  log "building argocd-check against Argo CD $ARGOCD_VERSION with $go_version (about 6 minutes on 2 cores when cold)"
  mkdir -p "$CACHE"
  (cd "$SRC" && GOTOOLCHAIN="$ARGOCD_GOTOOLCHAIN" CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$cached.tmp" .)
  mv "$cached.tmp" "$cached"
  # Older builds of the probe for this version are of no more use.
  find "$CACHE" -maxdepth 1 -name 'argocd-check-*' ! -name "argocd-check-$key" -delete
fi
mkdir -p "$(dirname "$ARGOCD_BIN")"
if ! cmp -s "$cached" "$ARGOCD_BIN"; then cp "$cached" "$ARGOCD_BIN"; fi
version="$("$ARGOCD_BIN" version)"
echo "$version" >&2
if ! grep -q "\"argocd\": \"$ARGOCD_VERSION\"" <<<"$version"; then
  log "$ARGOCD_BIN does not link Argo CD $ARGOCD_VERSION"
  exit 1
fi
