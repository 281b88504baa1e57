#!/usr/bin/env bash
# A daemon protecting one port on two interfaces: each interface's tracker
# counts every connection to the port in the namespace, whichever interface
# it came in on, so the daemon must count each connection once, not once
# per interface. Three connections are held before the daemon starts (its
# attach seeds them), two after (the trackers count them): 5 connections.
# Each sends its request once the daemon runs: 5 requests in service.
source "$(dirname "$0")/lib.sh"
: "${REFSERVER:?path of the refserver binary}"

lab_up
SRV_IF2="es-t$LAB_ID"
CLI_IF2="es-u$LAB_ID"
SRV2_V4=192.0.2.1
CLI2_V4=192.0.2.2
LAB_HOOKS+=('[ -d "/sys/fs/bpf/edgeshed/$SRV_IF2" ] && in_srv "$EDGESHED" detach --iface "$SRV_IF2" >/dev/null 2>&1; rm -rf "/sys/fs/bpf/edgeshed/$SRV_IF2"')
ip link add "$SRV_IF2" netns "$SRV_NS" type veth peer name "$CLI_IF2" netns "$CLI_NS"
in_srv ip addr add "$SRV2_V4/24" dev "$SRV_IF2"
in_cli ip addr add "$CLI2_V4/24" dev "$CLI_IF2"
in_srv ip link set "$SRV_IF2" up
in_cli ip link set "$CLI_IF2" up

work=$(mktemp -d)
LAB_DIRS+=("$work")
log=$work/log
cat >"$work/edgeshed.toml" <<TOML
[daemon]
run_dir = "$work/run"

[metrics]
listen = "off"

[[interface]]
name = "$SRV_IF"
hook = "xdp-generic"

[[interface]]
name = "$SRV_IF2"
hook = "xdp-generic"

[[port]]
port = 8080

[[signal]]
name = "inflight"
kind = "inflight"
target = 100
TOML

# Each request is held 8 s: every connection stays established.
in_srv "$REFSERVER" --port 8080 --workers 8 --service-ms 8000 --metrics-port 0 \
	--duration-s 30 >/dev/null 2>&1 &
LAB_PIDS+=($!)
listening() { [ -n "$(ss -N "$SRV_NS" -Hltn '( sport = :8080 )')" ]; }
wait_for "refserver on port 8080" listening
# hold ADDR N: N connections to ADDR:8080, each with a request sent once
# $work/go exists (at most 5 s on), held for 9 s.
hold() {
	in_cli bash -c '
		fds=()
		for i in $(seq '"$2"'); do
			exec {fd}<>/dev/tcp/'"$1"'/8080
			fds+=($fd)
		done
		for i in $(seq 50); do [ -e '"$work/go"' ] && break; sleep 0.1; done
		for fd in "${fds[@]}"; do printf "GET / HTTP/1.1\r\nHost: lab\r\n\r\n" >&$fd; done
		sleep 9' &
	LAB_PIDS+=($!)
}
established() { [ "$(ss -N "$SRV_NS" -Htn state established '( sport = :8080 )' | wc -l)" -ge "$1" ]; }

hold "$SRV_V4" 3
wait_for "3 connections before the daemon starts" established 3
lab_daemon "$work/edgeshed.toml" "$log"
wait_for "daemon running" grep -q "running:" "$log"
grep -q "attached to $SRV_IF2" "$log" || fail "no attach to the second interface"
hold "$SRV2_V4" 2
wait_for "5 connections" established 5
# The requests after the attach: each tracker sees them enter service.
touch "$work/go"

iface_conns() { "$EDGESHED" status --iface "$1" --json | jq '[.classes[].connections] | add'; }
iface_inflight() { "$EDGESHED" status --iface "$1" --json | jq '[.classes[].inflight] | add'; }
daemon_inflight() {
	"$EDGESHED" --run-dir "$work/run" status --iface "$SRV_IF" --json |
		jq '.daemon.signals[] | select(.name == "inflight") | .value'
}
five() { [ "$(daemon_inflight)" = 5 ]; }
wait_for "the daemon's in-flight to read 5" five
# Each tracker saw all five, so a sum would have read 10.
[ "$(iface_inflight "$SRV_IF")" = 5 ] && [ "$(iface_inflight "$SRV_IF2")" = 5 ] ||
	fail "each interface should count 5 requests: $(iface_inflight "$SRV_IF") and $(iface_inflight "$SRV_IF2")"
[ "$(iface_conns "$SRV_IF")" = 5 ] && [ "$(iface_conns "$SRV_IF2")" = 5 ] ||
	fail "each interface should count all 5 connections: $(iface_conns "$SRV_IF") and $(iface_conns "$SRV_IF2")"
pass "two interfaces on port 8080, 5 connections (3 seeded at attach) with a request each: the daemon counts 5 in service, each interface 5"
