#!/usr/bin/env bash
# Prints the path of the helm binary the chart tests render with, building it first when the
# cache lacks it. helm is built from its Go module (no prebuilt download) into a cache outside
# the clone, so a second run, or CI after a developer session on the same machine, reuses it.
set -euo pipefail

HELM_VERSION="v3.22.0"
dir="${K8S_RUNNER_TOOLS:-$HOME/.cache/k8s-runner/tools}/helm-$HELM_VERSION"
bin="$dir/helm"

if [ ! -x "$bin" ]; then
  command -v go >/dev/null 2>&1 || { echo "go is required to build helm $HELM_VERSION" >&2; exit 1; }
  mkdir -p "$dir"
  # Build into a temporary name and move it in place, so an interrupted build never leaves a
  # half-written binary that a later run would take as done.
  tmp="$(mktemp -d "$dir/build.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  echo "building helm $HELM_VERSION into $dir (once)" >&2
  GOBIN="$tmp" CGO_ENABLED=0 go install -trimpath -ldflags="-s -w" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
  mv "$tmp/helm" "$bin"
fi

echo "$bin"
