#!/usr/bin/env bash
# Prints the path of the promtool binary the monitoring tests check the alert rules with,
# building it once (go-tool.sh). Prometheus publishes its Go module as v0.<minor>.<patch>:
# v0.316.0 is Prometheus 3.16.0, whose go.mod asks for go 1.26.7, within the Go here.
set -euo pipefail
exec bash "$(dirname "$0")/go-tool.sh" promtool v0.316.0 github.com/prometheus/prometheus/cmd/promtool
