#!/usr/bin/env bash
# Builds the real-cluster tier's Go programs into a cache outside the clone, skipping every
# binary already there (a cold build takes under 9 minutes on 2 idle cores, 33 on a loaded machine; a warm one seconds).
#   test/cluster/build.sh            kube binaries, etcd, cluster DNS, the NetworkPolicy enforcer,
#                                    the image tool and the images
#   test/cluster/build.sh registry   only the container registry test/kube/build uses
#   test/cluster/build.sh addons     only CoreDNS and kube-router (docs/deployment.md)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KUBE_VERSION=${KUBE_VERSION:-v1.36.3}
CACHE=${K8S_RUNNER_CLUSTER_CACHE:-$HOME/.cache/k8s-runner/cluster-$KUBE_VERSION}
# The registry is not tied to Kubernetes' version: its own directory in the same cache.
REGISTRY_VERSION=v3.1.2
REGISTRY_DIR=${K8S_RUNNER_REGISTRY_DIR:-$HOME/.cache/k8s-runner/registry-$REGISTRY_VERSION}
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false
mkdir -p "$CACHE/bin" "$CACHE/images" "$REGISTRY_DIR"

minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
# Without these /version says v0.0.0 and the kubelet's node reports it.
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION \
-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
-X k8s.io/component-base/version.gitTreeState=clean"

build_registry() {
  [ -x "$REGISTRY_DIR/registry" ] && return
  # Distribution's go.mod has no replace directives, so `go install` of its command works.
  GOBIN="$REGISTRY_DIR" go install -trimpath -ldflags "-s -w" "github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION"
}

# CoreDNS from its module, with only the plugins the tier's Corefile uses (test/cluster/dns), so
# Service names resolve in pods. kube-router's firewall alone enforces NetworkPolicy: it programs
# iptables and ipsets, which this kernel has; kube-network-policies needs nftables' queue
# statement, which it lacks (CONFIG_NFT_QUEUE). kube-router's go.mod has no replace directives.
COREDNS_VERSION=v1.15.0
KUBE_ROUTER_VERSION=v2.1.0
build_addons() {
  if [ ! -x "$CACHE/bin/coredns" ]; then
    echo "building coredns $COREDNS_VERSION"
    (cd "$here/dns" && go build -trimpath -ldflags "-s -w" -o "$CACHE/bin/coredns.tmp" .)
    mv "$CACHE/bin/coredns.tmp" "$CACHE/bin/coredns"
  fi
  if [ ! -x "$CACHE/bin/kube-router" ]; then
    echo "building kube-router $KUBE_ROUTER_VERSION"
    GOBIN="$CACHE/bin/kube-router.d" go install -trimpath -ldflags "-s -w" "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION"
    mv "$CACHE/bin/kube-router.d/kube-router" "$CACHE/bin/kube-router"
    rmdir "$CACHE/bin/kube-router.d"
  fi
}

build_kube() {
  cd "$here/kube"
  for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
    [ -x "$CACHE/bin/$cmd" ] && continue
    echo "building $cmd"
    go build -trimpath -ldflags "$ldflags" -o "$CACHE/bin/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
    mv "$CACHE/bin/$cmd.tmp" "$CACHE/bin/$cmd"
  done
  if [ ! -x "$CACHE/bin/etcd" ]; then
    echo "building etcd"
    go build -trimpath -ldflags "-s -w" -o "$CACHE/bin/etcd.tmp" ./etcd
    mv "$CACHE/bin/etcd.tmp" "$CACHE/bin/etcd"
  fi
}

build_images() {
  cd "$here/images"
  for prog in mkimage pause kernel; do
    go build -trimpath -ldflags "-s -w" -o "$CACHE/bin/$prog" "./$prog"
  done
  "$CACHE/bin/mkimage" -out "$CACHE/images" -pause "$CACHE/bin/pause" -kernel "$CACHE/bin/kernel" \
    -busybox "${BUSYBOX:-/bin/busybox}" -coredns "$CACHE/bin/coredns"
}

case "${1:-all}" in
  registry) build_registry; echo "built $REGISTRY_DIR/registry"; exit 0 ;;
  kube) build_kube ;;
  addons) build_addons ;;
  images) build_images ;;
  all) build_kube; build_addons; build_images ;;
  *) echo "usage: $0 [all|kube|addons|images|registry]" >&2; exit 2 ;;
esac
echo "built into $CACHE"
