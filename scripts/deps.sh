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
	# fuzzing: libFuzzer and the sanitizer runtimes of clang 14
	libclang-rt-14-dev
	# demo and benchmark plots
	gnuplot-nox
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
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
