#!/usr/bin/env bash
# Installs every build and test dependency of edgeshed on Debian 12.
# Idempotent: packages already present are skipped, and apt's lists are
# refreshed at most once per run.
set -euo pipefail

packages=(
	# build
	make cmake pkg-config g++ clang llvm
	# data plane
	libbpf-dev bpftool libelf-dev zlib1g-dev linux-libc-dev
	# userspace libraries
	libspdlog-dev libfmt-dev libcli11-dev libtomlplusplus-dev
	nlohmann-json3-dev libcpp-httplib-dev libsystemd-dev
	# tests
	libgtest-dev libgmock-dev iproute2 procps util-linux jq
	# demo and benchmark plots
	gnuplot-nox
	# benchmarks: the alternatives to edgeshed, and tools of the lab.
	# nginx and haproxy run only inside a bench's namespace, never as services.
	nftables iptables nginx haproxy ethtool gawk
)

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: run as root (apt-get needs it)" >&2
	exit 1
fi

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps.sh: all ${#packages[@]} packages present"
	exit 0
fi

echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Installing nginx or haproxy must not start them as system services: for
# the length of the install, invoke-rc.d is told no (policy-rc.d exit 101),
# unless the machine already has a policy of its own.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\n# deps.sh: no service starts during its install\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	trap 'rm -f "$policy"' EXIT
fi
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"

# A service that the install enabled for the next boot is disabled again, for
# the packages this run installed only.
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
	for svc in nginx haproxy; do
		[[ " ${missing[*]} " == *" $svc "* ]] && systemctl disable --now "$svc" >/dev/null 2>&1 || true
	done
fi
