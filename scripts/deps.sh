#!/usr/bin/env bash
# Installs every build and test dependency of edgeshed on Debian 12.
# Idempotent: packages already present are skipped, and apt's lists are
# refreshed at most once per run.
set -euo pipefail

packages=(
	# build
	make cmake pkg-config g++ clang llvm ccache
	# data plane
	libbpf-dev bpftool libelf-dev zlib1g-dev linux-libc-dev
	# userspace libraries
	libspdlog-dev libfmt-dev libcli11-dev libtomlplusplus-dev
	nlohmann-json3-dev libcpp-httplib-dev libsystemd-dev
	# the scrapes' and probes' HTTP client
	libcurl4-openssl-dev
	# tests
	libgtest-dev libgmock-dev iproute2 procps util-linux jq
	# sharing the NIC: xdp-filter beside edgeshed (netns test
	# test_xdp_neighbours.sh); its libxdp comes with it
	xdp-tools
	# CLI tests: the metrics endpoint checked by promtool, top driven in tmux
	curl tmux prometheus
	# deployment artifacts and their checks: man page lint (groff, man-db),
	# systemd-analyze verify, promtool (shipped by prometheus, above), manifest
	# parsing and Kubernetes API models (python3-kubernetes)
	groff-base man-db systemd python3 python3-yaml python3-kubernetes
	# fuzzing: libFuzzer and the sanitizer runtimes of clang 14
	libclang-rt-14-dev
	# make lint
	clang-tidy cppcheck
	# demo and benchmark plots
	gnuplot-nox
	# benchmarks: the alternatives to edgeshed, and tools of the lab.
	# nginx and haproxy run only inside a bench's namespace, never as services.
	nftables iptables nginx haproxy ethtool gawk
	# where a SYN's CPU goes (bench-synflood SYNFLOOD_PROFILE=1)
	linux-perf
	# the controller under CPU starvation (netns test)
	stress-ng
	# QUIC netns test: a real client and server (ngtcp2's examples gtlsclient
	# and gtlsserver), and the self-signed certificate the test makes. The
	# server runs only inside the test's namespace, never as a service.
	ngtcp2-client ngtcp2-server openssl
	# keep-alive netns test: the clients users have (wrk, h2load over TLS
	# through nginx, curl above, a Go net/http client built from
	# tests/tools/go_http_client.go)
	wrk nghttp2-client golang-go
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

# These are build and test tools: none of their daemons may start. The
# prometheus package is wanted for promtool alone, and its postinst would
# otherwise start a Prometheus server on :9090; nginx and haproxy run only
# inside a benchmark's namespace, gtlsserver (ngtcp2-server's ngtcp2d, on
# :7777) only inside the QUIC test's. A policy-rc.d answering 101
# ("action forbidden") tells invoke-rc.d to start nothing; one that was there
# already is the admin's and is left as it is.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	own_policy=1
	trap 'rm -f "$policy"' EXIT
fi
apt-get install -y -q --no-install-recommends "${missing[@]}"
if [ "$own_policy" -eq 1 ]; then
	rm -f "$policy"
	trap - EXIT
fi

# policy-rc.d stops the start, not the enabling: on a host booted with
# systemd, keep the services this run installed from starting at next boot.
# Each is package:service.
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
	for unit in prometheus:prometheus nginx:nginx haproxy:haproxy ngtcp2-server:ngtcp2d; do
		if [[ " ${missing[*]} " == *" ${unit%%:*} "* ]]; then
			systemctl disable --now "${unit#*:}" >/dev/null 2>&1 || true
		fi
	done
fi
