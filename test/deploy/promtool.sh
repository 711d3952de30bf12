#!/usr/bin/env bash
# Prints the path of the promtool binary the monitoring tests check the alert rules with,
# building it first when the cache lacks it. Like helm.sh: built from its Go module (no
# prebuilt download) into a cache outside the clone, so later runs and CI reuse it.
set -euo pipefail

# Prometheus publishes its Go module as v0.<minor>.<patch>; v0.316.0 is Prometheus 3.16.0,
# whose go.mod asks for go 1.26.7, within the Go this project builds with.
PROMTOOL_VERSION="v0.316.0"
dir="${K8S_RUNNER_TOOLS:-$HOME/.cache/k8s-runner/tools}/promtool-$PROMTOOL_VERSION"
bin="$dir/promtool"

if [ ! -x "$bin" ]; then
  command -v go >/dev/null 2>&1 || { echo "go is required to build promtool $PROMTOOL_VERSION" >&2; exit 1; }
  mkdir -p "$dir"
  # A temporary name moved in place, so an interrupted build never leaves a half-written binary.
  tmp="$(mktemp -d "$dir/build.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  echo "building promtool $PROMTOOL_VERSION into $dir (once)" >&2
  GOBIN="$tmp" CGO_ENABLED=0 go install -trimpath -ldflags="-s -w" \
    "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION" >&2
  mv "$tmp/promtool" "$bin"
fi

echo "$bin"
