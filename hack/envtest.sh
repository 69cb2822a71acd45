#!/usr/bin/env bash
# Builds the test control plane (kube-apiserver and etcd) from the Go module
# proxy, because setup-envtest cannot download release binaries here.
#
# The binaries land in $ENVTEST_DIR (default bin/envtest). A per-user cache
# ($ENVTEST_CACHE, default ~/.cache/ocm-clusterprofile/envtest) keeps them
# across clean clones, so only the first run on a machine pays the ~4 minute
# kube-apiserver build.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-1.35.4}"
ETCD_VERSION="${ETCD_VERSION:-3.6.6}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENVTEST_DIR="${ENVTEST_DIR:-$ROOT/bin/envtest}"
ENVTEST_CACHE="${ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ocm-clusterprofile/envtest}"
CACHE="$ENVTEST_CACHE/k8s-$KUBE_VERSION-etcd-$ETCD_VERSION"

log() { echo "envtest: $*" >&2; }

build_kube_apiserver() {
  local work="$1"
  local minor="${KUBE_VERSION#*.}"; minor="${minor%%.*}"
  local major="${KUBE_VERSION%%.*}"
  log "building kube-apiserver v$KUBE_VERSION (takes a few minutes on 2 cores)"
  mkdir -p "$work/kube" && cd "$work/kube"
  cat > go.mod <<MOD
module envtest/kubeapiserver

go 1.25.0

require k8s.io/kubernetes v$KUBE_VERSION
MOD
  # kubernetes' own go.mod points its staging modules at local paths; map each
  # one to the published module of the matching v0.x version.
  local kmod
  kmod="$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')"
  grep -oE 'k8s.io/[a-z0-9-]+ => ./staging/src/k8s.io/[a-z0-9-]+' "$kmod" | awk '{print $1}' |
    while read -r m; do echo "replace $m => $m v0.${KUBE_VERSION#*.}"; done >> go.mod
  # No `go mod tidy`: nothing imports the main package, so tidy would drop the
  # requirement and the build would resolve kubernetes@latest instead.
  GOFLAGS=-mod=mod go build -o "$CACHE/kube-apiserver" -ldflags "-s -w \
    -X k8s.io/component-base/version.gitVersion=v$KUBE_VERSION \
    -X k8s.io/component-base/version.gitMajor=$major \
    -X k8s.io/component-base/version.gitMinor=$minor" \
    k8s.io/kubernetes/cmd/kube-apiserver
}

build_etcd() {
  local work="$1"
  log "building etcd v$ETCD_VERSION"
  mkdir -p "$work/etcd" && cd "$work/etcd"
  cat > go.mod <<MOD
module envtest/etcd

go 1.25.0

require go.etcd.io/etcd/server/v3 v$ETCD_VERSION
MOD
  cat > main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  GOFLAGS=-mod=mod go mod tidy >/dev/null
  GOFLAGS=-mod=mod go build -o "$CACHE/etcd" -ldflags "-s -w" .
}

mkdir -p "$CACHE" "$ENVTEST_DIR"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
[ -x "$CACHE/etcd" ] || (build_etcd "$work")
[ -x "$CACHE/kube-apiserver" ] || (build_kube_apiserver "$work")
for b in etcd kube-apiserver; do
  if ! cmp -s "$CACHE/$b" "$ENVTEST_DIR/$b"; then cp "$CACHE/$b" "$ENVTEST_DIR/$b"; fi
done
"$ENVTEST_DIR/kube-apiserver" --version >&2
echo "$ENVTEST_DIR"
