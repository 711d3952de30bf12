#!/usr/bin/env bash
# Writes kube/go.mod and kube/go.sum: a module of our own that builds the Kubernetes
# components from k8s.io/kubernetes. Kubernetes' go.mod replaces its 33 staging modules with
# directories inside its own repository, which a dependent module cannot see, so each one is
# replaced here by its published v0.X.Y. The list is read from the release's go.mod, never typed,
# so a version bump is a change of KUBE_VERSION alone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KUBE_VERSION=${KUBE_VERSION:-v1.36.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.8}
staging_version=v0.${KUBE_VERSION#v1.}

kube_dir=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | jq -r .Dir)
mapfile -t staging < <(go mod edit -json "$kube_dir/go.mod" |
  jq -r '.Replace[] | select(.New.Path | startswith("./staging/src/")) | .Old.Path')
[ "${#staging[@]}" -gt 0 ] || { echo "no staging replaces found in $kube_dir/go.mod" >&2; exit 1; }

cd "$here/kube"
rm -f go.mod go.sum
go mod init k8s-runner.test/cluster/kube >/dev/null 2>&1
go mod edit -go="$(go mod edit -json "$kube_dir/go.mod" | jq -r .Go)"
go mod edit -require="k8s.io/kubernetes@$KUBE_VERSION" -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION"
for path in "${staging[@]}"; do
  go mod edit -replace="$path=$path@$staging_version"
done
# `tool` lines keep the commands' dependencies in the build list through `go mod tidy`.
for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
  go mod edit -tool="k8s.io/kubernetes/cmd/$cmd"
done
go mod tidy
echo "kube/go.mod: k8s.io/kubernetes $KUBE_VERSION, ${#staging[@]} staging modules at $staging_version, etcd $ETCD_VERSION"
