#!/usr/bin/env bash
# Prints the path of the helm binary the chart tests render with, building it once (go-tool.sh).
set -euo pipefail
exec bash "$(dirname "$0")/go-tool.sh" helm v3.22.0 helm.sh/helm/v3/cmd/helm
