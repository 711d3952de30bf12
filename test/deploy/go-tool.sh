#!/usr/bin/env bash
# go-tool.sh NAME VERSION PACKAGE: prints the path of a tool the tests run, building it first
# when the cache lacks it. Tools are built from their Go module (no prebuilt download) into a
# cache outside the clone, so a second run, or CI after a developer session on the same
# machine, reuses them.
set -euo pipefail
name="$1" version="$2" package="$3"
dir="${K8S_RUNNER_TOOLS:-$HOME/.cache/k8s-runner/tools}/$name-$version"
bin="$dir/$name"

if [ ! -x "$bin" ]; then
  command -v go >/dev/null 2>&1 || { echo "go is required to build $name $version" >&2; exit 1; }
  mkdir -p "$dir"
  # Built into a temporary name and moved in place, so an interrupted build never leaves a
  # half-written binary that a later run would take as done.
  tmp="$(mktemp -d "$dir/build.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  echo "building $name $version into $dir (once)" >&2
  GOBIN="$tmp" CGO_ENABLED=0 go install -trimpath -ldflags="-s -w" "$package@$version" >&2
  mv "$tmp/$name" "$bin"
fi

echo "$bin"
