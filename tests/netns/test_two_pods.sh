#!/usr/bin/env bash
# Two pods serving one port behind one node, as a CNI's bridge builds them:
# the lab's server namespace is the node (edgeshed on its interface), with
# a bridge (192.0.2.1) and a veth into each pod (A 192.0.2.2, B 192.0.2.3);
# the client reaches both through the node. Each pod runs a refserver of 10
# slots x 20 ms on the same port; the config names the port twice, once per
# pod's namespace (port_only.toml otherwise). A is offered 800/s (about
# 1.6x), B 350/s (about 0.7x) at the same time, a new connection per
# request.
#
# Precondition, without edgeshed: A's admitted p99 >= 200 ms (a real
# queue), B nothing refused or lost (the harness harms nothing).
# Claims with edgeshed: each pod is a service with a law of its own (the
#   log and `status` say which; A's limit binds, in status; `events` name
#   A's namespace); A: some refused, admitted p99 from 3 s on <= 100 ms
#   (test_pods.sh's bound for one pod); B: 0 refused, 0 lost. A daemon
#   restarted keeps each pod's service id. Then A is
#   removed under B's load and made anew (a new namespace of the same name
#   and address): its service goes, the new pod is a new service, B still
#   refuses nothing, A's new service protects it (some refused at 1.6x),
#   and once the load ends neither service has a request left in service.
source "$(dirname "$0")/servers_lib.sh"

PORT=18082
RATE_A=800
RATE_B=350
BR=es-br$LAB_ID
NODE_V4=192.0.2.1
POD_A=es-pa-$LAB_ID
POD_B=es-pb-$LAB_ID
POD_A_V4=192.0.2.2
POD_B_V4=192.0.2.3
POD_PIDS=()
LAB_HOOKS+=('pods_down')

# pod_up NS ADDRESS LETTER: the pod's namespace, its veth (named by LETTER)
# on the node's bridge, and a refserver in it.
pod_up() {
	local ns=$1 address=$2 veth=es-v$3$LAB_ID
	# A pod made anew: its old veth goes with the old namespace's last
	# process, which may still be exiting.
	wait_for --within 5 "the old $veth gone" veth_gone "$veth"
	ip netns add "$ns"
	ip netns exec "$ns" ip link set lo up
	in_srv ip link add "$veth" type veth peer name eth0 netns "$ns"
	in_srv ip link set "$veth" master "$BR" up
	ip netns exec "$ns" ip addr add "$address/24" dev eth0
	ip netns exec "$ns" ip link set eth0 up
	ip netns exec "$ns" ip route add default via "$NODE_V4"
	# A pod made anew has a new MAC behind the old address (a CNI's
	# gratuitous ARP would say so).
	in_srv ip neigh flush to "$address" dev "$BR"
	"${SC_NICE[@]}" nsenter --net="/run/netns/$ns" "$REFSERVER" --port "$PORT" --workers 10 \
		--service-ms 20 --metrics-port 0 --duration-s 120 >>"$SC_WORK/$ns.log" 2>&1 &
	POD_PIDS+=($!)
	SV_ALL_PIDS+=($!)
	local log=$SC_WORK/$ns.log
	wait_for --within 5 --alive "$!" "the pod's service on $address:$PORT" \
		in_cli "$TCP_TOOL" connect "$address" "$PORT" 200
}
veth_gone() { ! in_srv ip link show "$1" >/dev/null 2>&1; }
# pod_down NS: its processes killed, its namespace deleted (its veth with it).
pod_down() {
	ip netns pids "$1" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$1" 2>/dev/null
	true
}
pods_down() {
	[ ${#POD_PIDS[@]} -gt 0 ] && sv_stop_pids "${POD_PIDS[@]}"
	POD_PIDS=()
	pod_down "$POD_A"
	pod_down "$POD_B"
	in_srv ip link del "$BR" 2>/dev/null
	true
}

scenario_up
client_xdp_pass
in_srv sysctl -qw net.ipv4.ip_forward=1
in_cli ip route add "${NODE_V4%.*}.0/24" via "$SRV_V4"
in_srv ip link add "$BR" type bridge
in_srv ip addr add "$NODE_V4/24" dev "$BR"
in_srv ip link set "$BR" up
pod_up "$POD_A" "$POD_A_V4" a
pod_up "$POD_B" "$POD_B_V4" b

# offer_both NAME SECONDS: A at RATE_A and B at RATE_B at once; A_* and B_*
# the figures, A_P99_SETTLED A's p99 from 3 s on.
offer_both() {
	local name=$1 secs=$2
	load_bg "$name.b" --target "$POD_B_V4" --port "$PORT" --rate "$RATE_B" \
		--count $((RATE_B * secs)) --duration-s "$secs" --timeout-ms 5000
	local b_pid=$LOAD_PID
	load "$name.a" --target "$POD_A_V4" --port "$PORT" --rate "$RATE_A" --count $((RATE_A * secs)) \
		--duration-s "$secs" --timeout-ms 5000
	wait "$b_pid" || fail "loadgen $name.b: exit $?"
	read -r A_OK A_SHED A_LOST _ A_P99 _ _ < <(csv_figures "$SC_WORK/$name.a.csv" 0 $((secs * 1000)))
	read -r B_OK B_SHED B_LOST _ B_P99 _ _ < <(csv_figures "$SC_WORK/$name.b.csv" 0 $((secs * 1000)))
	A_P99_SETTLED=$(csv_p99_from "$SC_WORK/$name.a.csv" 3000)
	echo "$name: A $RATE_A/s: ok $A_OK, refused $A_SHED, lost $A_LOST, p99 $A_P99 ms, from 3 s on" \
		"$A_P99_SETTLED ms; B $RATE_B/s: ok $B_OK, refused $B_SHED, lost $B_LOST, p99 $B_P99 ms"
}

offer_both without 4
check_ge "without edgeshed: A's admitted p99 (ms)" "$A_P99" 200
check_eq "without edgeshed: B refused" "$B_SHED" 0
check_eq "without edgeshed: B lost" "$B_LOST" 0
pass "without edgeshed (precondition): A p99 $A_P99 ms, B nothing refused or lost (p99 $B_P99 ms)"

cfg=$(matrix_config port_only "$PORT")
sed -i "/^\[\[port\]\]\$/a netns = \"/run/netns/$POD_A\"" "$cfg"
printf '\n[[port]]\nport = %s\nnetns = "/run/netns/%s"\n' "$PORT" "$POD_B" >>"$cfg"
start_daemon_config "$cfg"
services_named() {
	grep -q "service [0-9]*: netns /run/netns/$POD_A," "$DAEMON_LOG" &&
		grep -q "service [0-9]*: netns /run/netns/$POD_B," "$DAEMON_LOG"
}
wait_for --within 5 "a service of its own for each pod in the log" services_named
# port_field NS FIELD: the status' FIELD of the port served in pod NS.
port_field() {
	es_status | jq -r --arg ns "net:[$(stat -L -c %i "/run/netns/$1")]" --argjson port "$PORT" \
		"[.ports[] | select(.port == \$port and .netns == \$ns)][0].$2"
}
a_id=$(port_field "$POD_A" service)
b_id=$(port_field "$POD_B" service)
[[ $a_id =~ ^[0-9]+$ && $b_id =~ ^[0-9]+$ && $a_id != "$b_id" ]] ||
	fail "status: the port in each pod is not a service of its own (A: $a_id, B: $b_id)"
pass "each pod's namespace is a service of its own (status: A service $a_id, B service $b_id)"
sleep 1
offer_both with 8
a_cap=$(port_field "$POD_A" service_cap)
b_cap=$(port_field "$POD_B" service_cap)
echo "status after the load: A's limit $a_cap, B's $b_cap"
claim "status: A's own limit binds after its overload ($a_cap), want >= 1" "$(ge "$a_cap" 1)"
claim "A at 1.6x: $A_SHED refused, want some" "$(ge "$A_SHED" 1)"
claim "A at 1.6x: admitted p99 from 3 s on $A_P99_SETTLED ms, want <= 100" \
	"$(le "$A_P99_SETTLED" 100)"
claim "B at 0.7x beside A: $B_SHED refused, want 0" "$(le "$B_SHED" 0)"
claim "B at 0.7x beside A: $B_LOST lost, want 0" "$(le "$B_LOST" 0)"
# The refusals' events name A's namespace, not B's on the same port.
ev=$("$EDGESHED" events --iface "$SRV_IF" --json -n 1 --duration 2s)
check_eq "a refusal's event: port and namespace" "$(jq -r '"\(.port) \(.netns)"' <<<"$ev")" \
	"$PORT net:[$(stat -L -c %i "/run/netns/$POD_A")]"
pass "edgeshed events names the overloaded pod's namespace"

# A daemon restarted adopts the data plane: each pod keeps its service id
# (and so the connections counted under it). A connection held open to B
# meanwhile keeps B's id from being free for the taking.
"${SC_NICE[@]}" nsenter --net="/run/netns/$CLI_NS" "$TCP_TOOL" hold "$POD_B_V4" "$PORT" 1 4 2000 \
	>"$SC_WORK/hold" 2>&1 &
holder=$!
LAB_PIDS+=("$holder")
sleep 1
stop_daemon
start_daemon_config "$cfg"
wait_for --within 5 "a service of its own for each pod in the new daemon's log" services_named
check_eq "after a restart: A's and B's services" "$(port_field "$POD_A" service) $(port_field "$POD_B" service)" \
	"$a_id $b_id"
pass "a restarted daemon keeps each pod's service id"
wait "$holder" || fail "tcp_tool hold: exit $?: $(cat "$SC_WORK/hold")"

# A removed under B's load, and made anew: a new namespace, a new service.
load_bg recreate.b --target "$POD_B_V4" --port "$PORT" --rate "$RATE_B" --count $((RATE_B * 6)) \
	--duration-s 6 --timeout-ms 5000
b_pid=$LOAD_PID
sleep 1
pod_down "$POD_A"
a_gone() { grep -q "service [0-9]* (netns /run/netns/$POD_A) is gone" "$DAEMON_LOG"; }
wait_for --within 5 "A's service gone" a_gone
pod_up "$POD_A" "$POD_A_V4" a
a_again() { [ "$(grep -c "service [0-9]*: netns /run/netns/$POD_A," "$DAEMON_LOG")" -ge 2 ]; }
wait_for --within 5 "the new A a service of its own" a_again
wait "$b_pid" || fail "loadgen recreate.b: exit $?"
read -r B_OK B_SHED B_LOST _ B_P99 _ _ < <(csv_figures "$SC_WORK/recreate.b.csv" 0 6000)
echo "recreate: B $RATE_B/s while A was made anew: ok $B_OK, refused $B_SHED, lost $B_LOST, p99 $B_P99 ms"
claim "B while A was made anew: $B_SHED refused, want 0" "$(le "$B_SHED" 0)"
pass "A removed and made anew: its service gone, the new pod a new one"
offer_both after 6
claim "the new A at 1.6x: $A_SHED refused, want some" "$(ge "$A_SHED" 1)"
claim "B beside the new A: $B_SHED refused, want 0" "$(le "$B_SHED" 0)"
both_idle() { [ "$(port_field "$POD_A" service_inflight)" = 0 ] && [ "$(port_field "$POD_B" service_inflight)" = 0 ]; }
wait_for --within 10 "nothing left in service in either pod's service" both_idle
pass "no stale count once the load ends (the old A's connections gone with it)"
grep "service [0-9]*" "$DAEMON_LOG" | sed 's/^/  log: /' | head -20
stop_daemon

if [ ${#CLAIMS_FAILED[@]} -gt 0 ]; then
	printf '  %s\n' "${CLAIMS_FAILED[@]}" >&2
	fail "two pods on one port: ${#CLAIMS_FAILED[@]} claims not met"
fi
pass "two pods on one port: the overloaded one protected, the healthy one untouched"
