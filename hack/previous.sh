#!/usr/bin/env bash
# Builds the previous release's artefacts for the upgrade tests, into $PREVIOUS_DIR
# (default bin/previous): its image for this machine's platform, as an OCI layout in
# image/, and its chart archive, both from the revision hack/release/previous names and
# versioned <that revision's VERSION>-git.<7 hex>, which the file VERSION_LABEL holds.
# The build is cached per revision ($PREVIOUS_CACHE, default
# ~/.cache/ocm-clusterprofile/previous), so only the first run on a machine pays for it.
set -euo pipefail
cd "$(dirname "$0")/.."
REF=$(grep -v '^#' hack/release/previous | head -n 1)
CACHE="${PREVIOUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ocm-clusterprofile/previous}/$REF"
OUT="${PREVIOUS_DIR:-bin/previous}"

if [ ! -f "$CACHE/.built" ]; then
  if ! git cat-file -e "$REF^{commit}" 2>/dev/null && [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    # A shallow CI checkout: fetch the history it left out.
    git fetch --quiet --unshallow || true
  fi
  if ! git cat-file -e "$REF^{commit}" 2>/dev/null; then
    echo "previous.sh: the previous release's revision $REF is not in this clone (git fetch it)" >&2
    exit 1
  fi
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  git archive "$REF" | tar -x -C "$src"
  label="$(cat "$src/VERSION")-git.${REF:0:7}"
  date=$(TZ=UTC git show -s --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ "$REF")
  # The chart's version and appVersion (the image's default tag) become the label, which
  # the revision's own `make chart` checks against VERSION.
  sed -i -E "s/^version: .*/version: $label/; s/^appVersion: .*/appVersion: \"$label\"/" \
    "$src/charts/clusterprofile-manager/Chart.yaml"
  rm -rf "$CACHE" && mkdir -p "$CACHE"
  make -C "$src" --no-print-directory image chart VERSION="$label" GIT_REVISION="$REF" BUILD_DATE="$date" \
    IMAGE_LAYOUT="$CACHE/image" IMAGE_PLATFORMS="linux/$(go env GOARCH)" CHART_OUT="$CACHE"
  echo "$label" > "$CACHE/VERSION_LABEL"
  touch "$CACHE/.built"
fi
rm -rf "$OUT" && mkdir -p "$(dirname "$OUT")" && cp -r "$CACHE" "$OUT"
echo "previous release $(cat "$OUT/VERSION_LABEL") in $OUT"
