#!/usr/bin/env bash
# Installs the Debian packages the real-cluster tier runs (root): the container runtime, CNI
# plugins, busybox for the init image, the kernel tools kube-proxy's nftables mode uses, and
# ipset for kube-router's NetworkPolicy firewall.
# Services are not started: the fixture runs containerd itself with a root of its own.
set -euo pipefail
packages=(containerd runc containernetworking-plugins busybox-static nftables conntrack iptables iproute2 openssl ipset)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
[ "${#missing[@]}" -eq 0 ] && exit 0
# policy-rc.d 101 keeps the packages' maintainer scripts from starting the system containerd.
policy=/usr/sbin/policy-rc.d
had_policy=false; [ -e "$policy" ] && had_policy=true && cp -p "$policy" "$policy.k8s-runner"
printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"
restore() { if $had_policy; then mv "$policy.k8s-runner" "$policy"; else rm -f "$policy"; fi; }
trap restore EXIT
# Another apt run on the machine holds the lock for a while; wait for it instead of failing.
apt-get -o DPkg::Lock::Timeout=900 update -q
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends "${missing[@]}"
