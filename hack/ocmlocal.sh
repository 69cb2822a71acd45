#!/usr/bin/env bash
# Builds the programs of the local real-OCM environment (test/ocmlocal) from
# the Go module proxy: kube-controller-manager, OCM's hub and klusterlet, and
# the managed-serviceaccount and cluster-proxy addons with the
# apiserver-network-proxy tunnel, and Kueue's manager. No release images or
# binaries can be downloaded here, so each program is built from source at a
# pinned version.
#
# Each program is built in its own scratch module that requires exactly the
# upstream module at its pinned version, so the upstream dependency graph is
# used unchanged and this repository's go.mod (pinned to k8s 0.35.4) is never
# touched.
#
# The binaries land in $OCM_BIN_DIR (default bin/ocm). A per-user cache
# ($OCM_CACHE, default ~/.cache/ocm-clusterprofile/ocm/<versions>, Kueue in
# kueue-<version> beside it) keeps them across clean clones, so only the
# first run on a machine pays for the builds (about 45 minutes on 2 cores,
# Kueue 6.5 of them). Build times go to build-times.txt there.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-1.35.4}"
# OCM_VERSION picks OCM's release (operators, hub controllers, klusterlet agent
# and the upstream-mirror comparator); the harness reads the same variable.
OCM_VERSION="${OCM_VERSION:-v1.2.0}"
MSA_VERSION="${MSA_VERSION:-v0.10.0}"
CLUSTER_PROXY_VERSION="${CLUSTER_PROXY_VERSION:-v0.10.0}"
# The apiserver-network-proxy release that cluster-proxy v0.10.0 requires.
ANP_VERSION="${ANP_VERSION:-v0.33.0}"
# Kueue's manager, for MultiKueue against the local OCM (test/ocmlocal
# Options.Kueue); the harness reads the release from bin/ocm/kueue-module.json.
KUEUE_VERSION="${KUEUE_VERSION:-v0.16.1}"
# The Kueue release the harness upgrades to (bin/ocm/kueue-upgrade and
# kueue-upgrade-module.json): the first with the recipe's accessProviders key.
KUEUE_UPGRADE_VERSION="${KUEUE_UPGRADE_VERSION:-v0.19.2}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OCM_BIN_DIR="${OCM_BIN_DIR:-$ROOT/bin/ocm}"
OCM_CACHE_ROOT="${OCM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ocm-clusterprofile/ocm}"
CACHE="$OCM_CACHE_ROOT/k8s-$KUBE_VERSION-ocm-$OCM_VERSION-msa-$MSA_VERSION-proxy-$CLUSTER_PROXY_VERSION-anp-$ANP_VERSION"
TIMES="$CACHE/build-times.txt"
# Kueue is cached beside the OCM programs, each release under its own key
# (kueue-<version>), so that adding or changing one leaves the other builds
# valid.

# These modules are served by the module proxy, but the checksum database
# reachable from here does not know the versions the pinned releases require
# (ocm v1.2.0 pins sigs.k8s.io/about-api v0.0.0-20250131010323-518069c31c03;
# cluster-proxy v0.10.0 pins sigs.k8s.io/apiserver-network-proxy v0.33.0), so
# `go build` fails verifying them. Only the builds that need it (OCM,
# cluster-proxy, ANP: build_unverified) skip the checksum database, and only
# for these module paths. ocm itself is listed for v1.3.1, whose go.mod the
# checksum database here does not know either (its lookup answers 404).
UNVERIFIED_MODULES="sigs.k8s.io/about-api,sigs.k8s.io/apiserver-network-proxy,open-cluster-management.io/ocm"

log() { echo "ocm-binaries: $*" >&2; }

# scratch_module DIR MODULE VERSION [GO.MOD LINES...] writes a go.mod that
# requires MODULE at VERSION, plus any extra lines (replace directives).
scratch_module() {
  local dir="$1" module="$2" version="$3"; shift 3
  mkdir -p "$dir"
  {
    printf 'module ocmlocal/scratch\n\ngo 1.25.0\n\nrequire %s %s\n' "$module" "$version"
    for line in "$@"; do printf '%s\n' "$line"; done
  } > "$dir/go.mod"
}

# build OUT PACKAGE LDFLAGS [ENV...] builds PACKAGE in the current scratch
# module into the cache as OUT and records how long it took.
build() {
  local out="$1" pkg="$2" ldflags="$3"; shift 3
  local start=$SECONDS
  log "building $out from $pkg"
  # No `go mod tidy`: nothing imports the package from the scratch module, so
  # tidy would drop the requirement; -mod=mod fills in go.sum instead.
  env "$@" GOFLAGS=-mod=mod go build -o "$CACHE/$out.tmp" -ldflags "-s -w $ldflags" "$pkg"
  mv "$CACHE/$out.tmp" "$CACHE/$out"
  local took=$((SECONDS - start))
  log "built $out in ${took}s"
  echo "$out $((took / 60))m$((took % 60))s $(date -u +%Y-%m-%dT%H:%MZ)" >> "$TIMES"
}

kube_version_ldflags() {
  local major="${KUBE_VERSION%%.*}" minor="${KUBE_VERSION#*.}"
  minor="${minor%%.*}"
  echo "-X k8s.io/component-base/version.gitVersion=v$KUBE_VERSION \
    -X k8s.io/component-base/version.gitMajor=$major \
    -X k8s.io/component-base/version.gitMinor=$minor"
}

build_kube_controller_manager() {
  local dir="$1/kcm"
  # kubernetes' own go.mod points its staging modules at local paths; map each
  # one to the published module of the matching v0.x version (as envtest.sh).
  local kmod replaces=()
  kmod="$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')"
  while read -r m; do
    replaces+=("replace $m => $m v0.${KUBE_VERSION#*.}")
  done < <(grep -oE 'k8s.io/[a-z0-9-]+ => ./staging/src/k8s.io/[a-z0-9-]+' "$kmod" | awk '{print $1}')
  scratch_module "$dir" k8s.io/kubernetes "v$KUBE_VERSION" "${replaces[@]}"
  (cd "$dir" && build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$(kube_version_ldflags)")
}

# build_upstream OUT MODULE VERSION PACKAGE [GO.MOD LINES...]
build_upstream() {
  local out="$1" module="$2" version="$3" pkg="$4"; shift 4
  local dir="$work/$out"
  scratch_module "$dir" "$module" "$version" "$@"
  (cd "$dir" && build "$out" "$pkg" "" ${NOSUMDB:+GONOSUMDB="$NOSUMDB"})
}

# build_unverified is build_upstream for the modules that require
# UNVERIFIED_MODULES (see above).
build_unverified() { NOSUMDB="$UNVERIFIED_MODULES" build_upstream "$@"; }

need() { [ ! -x "$CACHE/$1" ]; }

mkdir -p "$CACHE" "$OCM_BIN_DIR"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if need kube-controller-manager; then build_kube_controller_manager "$work"; fi

ocm=open-cluster-management.io/ocm
# registration-operator: the cluster-manager and klusterlet operators and the
# klusterlet agent; the rest: the hub Deployments the ClusterManager creates
# (work: its webhook).
for cmd in registration-operator registration placement addon work; do
  if need "$cmd"; then build_unverified "$cmd" "$ocm" "$OCM_VERSION" "$ocm/cmd/$cmd"; fi
done

msa=open-cluster-management.io/managed-serviceaccount
# The image's entry point is /msa (subcommands manager and agent).
if need msa; then build_upstream msa "$msa" "$MSA_VERSION" "$msa/cmd"; fi

proxy=open-cluster-management.io/cluster-proxy
# The image's entry points: /manager (addon manager), /cluster-proxy
# (controllers, user-server, service-proxy), /agent (addon agent).
if need cluster-proxy-manager; then build_unverified cluster-proxy-manager "$proxy" "$CLUSTER_PROXY_VERSION" "$proxy/cmd/addon-manager"; fi
if need cluster-proxy; then build_unverified cluster-proxy "$proxy" "$CLUSTER_PROXY_VERSION" "$proxy/cmd/cluster-proxy"; fi
if need cluster-proxy-addon-agent; then build_unverified cluster-proxy-addon-agent "$proxy" "$CLUSTER_PROXY_VERSION" "$proxy/cmd/addon-agent"; fi

anp=sigs.k8s.io/apiserver-network-proxy
# The release's go.mod replaces its konnectivity-client with a local
# directory; use the client published with the same release instead.
anp_client="replace $anp/konnectivity-client => $anp/konnectivity-client $ANP_VERSION"
if need proxy-server; then build_unverified proxy-server "$anp" "$ANP_VERSION" "$anp/cmd/server" "$anp_client"; fi
if need proxy-agent; then build_unverified proxy-agent "$anp" "$ANP_VERSION" "$anp/cmd/agent" "$anp_client"; fi

# The benchmark's comparator: OCM's own ClusterProfile mirror, alone
# (hack/_upstreammirror).
if need upstream-clusterprofile-mirror; then
  mkdir -p "$work/upstream-mirror"
  cp "$ROOT/hack/_upstreammirror/main.go" "$work/upstream-mirror/"
  NOSUMDB="$UNVERIFIED_MODULES" scratch_module "$work/upstream-mirror" "$ocm" "$OCM_VERSION"
  (cd "$work/upstream-mirror" && build upstream-clusterprofile-mirror . "" GONOSUMDB="$UNVERIFIED_MODULES")
fi

# build_kueue VERSION NAME builds Kueue's manager (the image's /manager), with
# its release in its version package as Kueue's Makefile sets it, into
# bin/ocm/NAME, and records its module (its chart and CRDs) in
# bin/ocm/NAME-module.json.
build_kueue() {
  local version="$1" name="$2" kueue=sigs.k8s.io/kueue
  local cache="$OCM_CACHE_ROOT/kueue-$version"
  mkdir -p "$cache"
  if [ ! -x "$cache/kueue" ]; then
    scratch_module "$work/$name" "$kueue" "$version"
    (CACHE="$cache" TIMES="$cache/build-times.txt"
      cd "$work/$name" && build kueue "$kueue/cmd/kueue" "-X $kueue/pkg/version.GitVersion=$version")
  fi
  if ! cmp -s "$cache/kueue" "$OCM_BIN_DIR/$name"; then cp "$cache/kueue" "$OCM_BIN_DIR/$name"; fi
  (cd "$work" && GOFLAGS=-mod=mod go mod download -json "$kueue@$version") > "$OCM_BIN_DIR/$name-module.json.tmp"
  mv "$OCM_BIN_DIR/$name-module.json.tmp" "$OCM_BIN_DIR/$name-module.json"
  [ -f "$cache/build-times.txt" ] && log "Kueue $version's build time recorded in $cache/build-times.txt: $(tr '\n' ';' < "$cache/build-times.txt")"
  return 0
}
build_kueue "$KUEUE_VERSION" kueue
build_kueue "$KUEUE_UPGRADE_VERSION" kueue-upgrade

for b in kube-controller-manager registration-operator registration placement addon work msa \
  cluster-proxy-manager cluster-proxy cluster-proxy-addon-agent proxy-server proxy-agent upstream-clusterprofile-mirror; do
  if ! cmp -s "$CACHE/$b" "$OCM_BIN_DIR/$b"; then cp "$CACHE/$b" "$OCM_BIN_DIR/$b"; fi
done
# The harness reads OCM's release and its module directory from here: the
# images it maps to these binaries carry that version, and the operators' own
# manifests (CRDs, RBAC, Deployments, as clusteradm applies them) come from
# that module.
(cd "$work" && GONOSUMDB="$UNVERIFIED_MODULES" GOFLAGS=-mod=mod go mod download -json "$ocm@$OCM_VERSION") > "$OCM_BIN_DIR/ocm-module.json.tmp"
mv "$OCM_BIN_DIR/ocm-module.json.tmp" "$OCM_BIN_DIR/ocm-module.json"
[ -f "$TIMES" ] && log "build times recorded in $TIMES: $(tr '\n' ';' < "$TIMES")"
echo "$OCM_BIN_DIR"
