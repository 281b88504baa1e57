#!/usr/bin/env bash
# A service in a container, protected from the host's interface: the lab's
# server namespace is the node (edgeshed attached to its interface, as on a
# node's NIC), and the service runs in a pod's namespace behind a routed
# veth, as CNIs build them (192.0.2.2, the node's side 192.0.2.1); the
# client reaches it through the node. The refserver in the pod, 10 slots x
# 20 ms, a new connection per request at 800/s (about 1.6x its measured
# capacity), port_only.toml with the port's `netns` naming the pod.
#
# Precondition, without edgeshed: admitted p99 >= 200 ms (the queue is real).
# Control: the same config without `netns`: the pod's requests are not the
#   node's, nothing is counted, nothing refused (where edgeshed stood before).
# Claims with `netns`: `status` and `events` name the pod's namespace; some refused;
#   admitted p99 from 3 s on <= 100 ms (test_servers.sh's bound for a host
#   service). Then, under load, the pod is removed: the port's namespace
#   reads "gone" (status; edgeshed_port_netns_found 0) and its requests in
#   service 0; a new pod with the same
#   name and address is a new namespace, followed, and once the load ends
#   nothing stays counted. Last, 4 requests held in the pod before the
#   daemon starts, on a port named by the pod's process (`pid`): counted at
#   the start by the seed walk run inside the pod's namespace; the first
#   port named by its listener (`netns = "listener"`). Between them,
#   keepalive = "refuse" in the pod (see its phase below).
source "$(dirname "$0")/servers_lib.sh"
command -v curl >/dev/null || fail "curl is required"

POD_NS=$SV_POD_NS
POD_V4=$SV_POD_V4
# Not 80: `netns = "listener"` searches every namespace of the host, and
# another may serve 80 on a shared machine.
PORT=18080
RATE=800
POD_PIDS=()
LAB_HOOKS+=('pod_down')

pod_down() {
	[ ${#POD_PIDS[@]} -gt 0 ] && sv_stop_pids "${POD_PIDS[@]}"
	POD_PIDS=()
	sv_pod_down
}

# pod_up: the pod's namespace (servers_lib.sh's), the refserver in it.
pod_up() {
	sv_pod_up
	"${SC_NICE[@]}" nsenter --net="/run/netns/$POD_NS" "$REFSERVER" --port "$PORT" --workers 10 \
		--service-ms 20 --metrics-port 0 --duration-s 120 >>"$SC_WORK/pod.log" 2>&1 &
	POD_PIDS+=($!)
	SV_ALL_PIDS+=($!)
	local log=$SC_WORK/pod.log
	wait_for --within 5 --alive "$!" "the pod's service on $POD_V4:$PORT" \
		in_cli "$TCP_TOOL" connect "$POD_V4" "$PORT" 200
}
pod_inode() { stat -L -c %i "/run/netns/$POD_NS"; }

scenario_up
client_xdp_pass
sv_pod_route
pod_up

# offer NAME SECONDS: RATE/s at the pod for SECONDS; FIG_* over the run,
# FIG_P99_SETTLED over the requests from 3 s on.
offer() {
	local name=$1 secs=$2
	load "$name" --target "$POD_V4" --port "$PORT" --rate "$RATE" --count $((RATE * secs)) \
		--duration-s "$secs" --timeout-ms 5000
	read -r FIG_OK FIG_SHED FIG_LOST FIG_P50 FIG_P99 _ _ < <(csv_figures "$SC_WORK/$name.csv" 0 $((secs * 1000)))
	FIG_P99_SETTLED=$(csv_p99_from "$SC_WORK/$name.csv" 3000)
	echo "$name: $RATE/s for $secs s: ok $FIG_OK, refused $FIG_SHED, lost $FIG_LOST, admitted p50 $FIG_P50" \
		"p99 $FIG_P99 ms, from 3 s on $FIG_P99_SETTLED ms"
}
pod_config() {
	local cfg
	cfg=$(matrix_config port_only "$PORT")
	if [ "${1:-}" = listener ]; then
		echo 'netns = "listener"' >>"$cfg"
	elif [ "${1:-}" = netns ]; then
		echo "netns = \"/run/netns/$POD_NS\"" >>"$cfg"
		# The metrics, in the node's namespace: whether the pod's is found.
		sed -i 's/^listen = "off"$/listen = "127.0.0.1:9477"/' "$cfg"
		grep -q '^listen = "127.0.0.1:9477"$' "$cfg" || fail "no metrics listener in $cfg"
	fi
	echo "$cfg"
}
in_service() { es_status | jq '.classes.normal.inflight'; }
# netns_found VALUE: the metric of the pod's namespace reads VALUE.
netns_found() {
	in_srv curl -sf http://127.0.0.1:9477/metrics |
		grep -qx "edgeshed_port_netns_found{port=\"$PORT\",netns=\"netns /run/netns/$POD_NS\"} $1"
}

offer without 2
check_ge "without edgeshed: admitted p99 (ms)" "$FIG_P99" 200
pass "without edgeshed (precondition): admitted p99 $FIG_P99 ms"

start_daemon_config "$(pod_config)"
sleep 1
offer control 3
stop_daemon
check_eq "without netns: refused (the pod's requests are not the node's)" "$FIG_SHED" 0
pass "control, the port without netns: nothing counted, nothing refused (p99 $FIG_P99 ms)"

start_daemon_config "$(pod_config netns)"
sleep 1
first=$(pod_inode)
check_eq "status: the port's namespace" "$(es_status | jq -r '.ports[0].netns')" "net:[$first]"
wait_for --within 5 "edgeshed_port_netns_found 1" netns_found 1
offer with 6
claim "the pod's service at 1.6x: $FIG_SHED refused, want some" "$(ge "$FIG_SHED" 1)"
claim "the pod's service at 1.6x: admitted p99 from 3 s on $FIG_P99_SETTLED ms, want <= 100" \
	"$(le "$FIG_P99_SETTLED" 100)"
# The refusals' events name the pod's namespace (they wait in the ring).
ev=$("$EDGESHED" events --iface "$SRV_IF" --json -n 1 --duration 2s)
check_eq "a refusal's event: port and namespace" "$(jq -r '"\(.port) \(.netns)"' <<<"$ev")" "$PORT net:[$first]"
pass "edgeshed events names the pod's namespace"

# The pod goes under load and comes back as a new namespace.
load_bg recreate --target "$POD_V4" --port "$PORT" --rate "$RATE" --count $((RATE * 8)) \
	--duration-s 8 --timeout-ms 2000
sleep 2
pod_down
gone() { [ "$(es_status | jq -r '.ports[0].netns')" = gone ] && [ "$(in_service)" = 0 ]; }
wait_for --within 5 "the port's namespace gone and nothing in service" gone
wait_for --within 5 "edgeshed_port_netns_found 0" netns_found 0
pass "the pod removed under load: its namespace reads gone, 0 in service"
pod_up
# The kernel may give the new namespace the old one's inode number: what
# tells them apart here is the "gone" between them.
second=$(pod_inode)
followed() { [ "$(es_status | jq -r '.ports[0].netns')" = "net:[$second]" ]; }
wait_for --within 5 "the new pod's namespace followed" followed
pass "the new pod (net:[$second]; the old one net:[$first]) followed"
wait "$LOAD_PID" || fail "loadgen recreate: exit $?"
idle() { [ "$(in_service)" = 0 ]; }
wait_for --within 10 "nothing in service once the load ends" idle
pass "no stale count after the pod's recreation"
offer after 4
claim "the new pod at 1.6x: $FIG_SHED refused, want some" "$(ge "$FIG_SHED" 1)"
stop_daemon

# keepalive = "refuse" in the pod: a pool of 50 keep-alive connections at
# 0.7x for 2 s, then 5x for 8 s, beside 100 idle connections held open
# (its refusals come while the cap binds: 2 to 16 in 5 s at 5x, so 8 s).
# Requests on open connections are refused (the request filter on the
# node's interface finds the pod's sockets by the id the node's namespace
# gives the pod's), idle connections are reclaimed (walks run inside the
# pod's namespace), and every reset the holder saw is one reclaimed.
IDLE_N=100
cfg=$(pod_config netns)
echo 'keepalive = "refuse"' >>"$cfg"
start_daemon_config "$cfg"
counter() { es_status | jq "[.classes[].counters.$1] | add"; }
"${SC_NICE[@]}" nsenter --net="/run/netns/$CLI_NS" "$TCP_TOOL" hold "$POD_V4" "$PORT" "$IDLE_N" 30 2000 \
	>"$SC_WORK/hold" 2>"$SC_WORK/hold.err" &
HOLDER=$!
LAB_PIDS+=("$HOLDER")
wait_for --within 10 "the holder's connects to end" grep -q '^opened ' "$SC_WORK/hold"
load pool --target "$POD_V4" --port "$PORT" --keep-alive --max-connections 50 --poisson \
	--ramp "0.7x:2s,5x:8s" --capacity 500 --timeout-ms 5000
refused=$(counter requests_refused)
reclaimed=$(counter reclaimed)
kill -USR1 "$HOLDER" 2>/dev/null || true
wait "$HOLDER" || fail "tcp_tool hold: exit $?: $(cat "$SC_WORK/hold" "$SC_WORK/hold.err")"
read -r _ _ _ held_open _ held_closed _ held_reset < <(grep '^held ' "$SC_WORK/hold")
echo "keep-alive pool in the pod: $refused requests refused on open connections, $reclaimed idle" \
	"connections reclaimed; the holder: $held_open of $IDLE_N still open, $held_closed closed," \
	"$held_reset reset"
stop_daemon
claim "the pod's requests on open connections refused" "$(ge "$refused" 1)"
claim "the pod's idle connections reclaimed" "$(ge "$reclaimed" 1)"
claim "every idle connection reset is one reclaimed" "$(is "$held_reset" "$reclaimed")"
pass "keepalive = refuse in the pod: $refused refused, $reclaimed reclaimed"

# Requests in service in the pod before the daemon starts are counted (the
# seed walk, run inside the pod's namespace), with the port named by a
# process of the pod (`pid`), and the first port by its listener.
HELD_PORT=18081
"${SC_NICE[@]}" nsenter --net="/run/netns/$POD_NS" "$REFSERVER" --port "$HELD_PORT" --workers 4 \
	--service-ms 4000 --metrics-port 0 --duration-s 30 >>"$SC_WORK/pod.log" 2>&1 &
held_pid=$!
POD_PIDS+=("$held_pid")
SV_ALL_PIDS+=("$held_pid")
wait_for --within 5 --alive "$held_pid" "the pod's slow service on $POD_V4:$HELD_PORT" \
	in_cli "$TCP_TOOL" connect "$POD_V4" "$HELD_PORT" 200
in_cli bash -c '
	for i in 1 2 3 4; do
		exec {fd}<>/dev/tcp/'"$POD_V4/$HELD_PORT"'
		printf "GET / HTTP/1.1\r\nHost: lab\r\n\r\n" >&$fd
	done
	sleep 6' &
LAB_PIDS+=($!)
held() { [ "$(ss -N "$POD_NS" -Htn state established "( sport = :$HELD_PORT )" | wc -l)" -ge 4 ]; }
wait_for --within 5 "4 requests held in the pod" held
cfg=$(pod_config listener)
printf '\n[[port]]\nport = %s\npid = %s\n' "$HELD_PORT" "$held_pid" >>"$cfg"
start_daemon_config "$cfg"
for p in "$PORT" "$HELD_PORT"; do
	check_eq "status: port $p's namespace" \
		"$(es_status | jq -r --argjson p "$p" '.ports[] | select(.port == $p) | .netns')" \
		"net:[$(pod_inode)]"
done
check_eq "requests in service in the pod at the start (seeded)" "$(in_service)" 4
pass "4 requests held in the pod before the start: counted; port $HELD_PORT named by pid $held_pid, $PORT by its listener"
wait_for --within 10 "the held requests answered and uncounted" idle
stop_daemon

if [ ${#CLAIMS_FAILED[@]} -gt 0 ]; then
	printf '  %s\n' "${CLAIMS_FAILED[@]}" >&2
	fail "a pod's service is not protected from the node's interface (${#CLAIMS_FAILED[@]} claims not met)"
fi
pass "a pod's service is protected from the node's interface, and followed when the pod is replaced"
