#!/usr/bin/env bash
# Prints the path of the Jaeger binary the tracing tier test reads traces back from, building it
# once into the tools cache beside helm and promtool. Jaeger v1.75.0's `cmd/jaeger` is Jaeger v2
# (an OpenTelemetry Collector distribution: OTLP in, the query API out). It is built from the
# module test/cluster/jaeger/, whose go.mod names it as a tool and repeats the one replace
# Jaeger's own go.mod carries (sarama), because `go install pkg@version` refuses a module with
# replaces. Cold, here (7 December 2026, 2 cores shared with the real-cluster tier's own Go build
# and other test runs, load 10-18, this build at nice 10): 1 min 54 s to download the modules,
# 29 min 32 s to build them (an 81 MiB binary); on an idle machine it should take a fraction of
# that, not measured. Warm it is instant.
set -euo pipefail
version=v1.75.0
dir="${K8S_RUNNER_TOOLS:-$HOME/.cache/k8s-runner/tools}/jaeger-$version"
bin="$dir/jaeger"
module="$(cd "$(dirname "$0")/../cluster/jaeger" && pwd)"

if [ ! -x "$bin" ]; then
  command -v go >/dev/null 2>&1 || { echo "go is required to build jaeger $version" >&2; exit 1; }
  mkdir -p "$dir"
  # Into a temporary name first, so that an interrupted build never leaves a binary a later run takes as done.
  tmp="$(mktemp -d "$dir/build.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  echo "building jaeger $version into $dir (once)" >&2
  (cd "$module" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$tmp/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger) >&2
  mv "$tmp/jaeger" "$bin"
fi

echo "$bin"
