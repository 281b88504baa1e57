#!/usr/bin/env bash
# Load-balancer feedback with a real HAProxy: HAProxy, in the client
# namespace, balances two backends (roundrobin, equal weights), each a
# refserver in a namespace of its own behind an edgeshed daemon of its own
# (own interface, own run directory), whose [agent] answers HAProxy's
# agent-check. Backend a is reached over IPv4, backend b over IPv6. A file
# signal pushes a to high and back; the share of new requests that HAProxy
# sends to a must fall to about its agent weight (25 of 125 = 20%) and
# recover, and the cap of the high level must reach HAProxy as the server's
# maxconn, and be lifted after. GET /ready on a's metrics listener turns 503
# at high (not_ready_from = "high").
#
#   client ns (HAProxy, curl) --veth-- a ns (edgeshed + refserver, 198.51.100.1)
#                             --veth-- b ns (edgeshed + refserver, 2001:db8:b::1)
source "$(dirname "$0")/lib.sh"
: "${REFSERVER:?path of the refserver binary}"
command -v haproxy >/dev/null || fail "haproxy is required (scripts/deps.sh installs it)"
command -v curl >/dev/null || fail "curl is required"

REQUESTS=200     # per phase, each on a new connection
WEIGHT_HIGH=25   # [agent] weights.high, the default
STATIC_LIMIT=50  # [limit] initial: the cap of the normal class at high

lab_up # SRV_NS: backend a; CLI_NS: HAProxy and the client
A_NS=$SRV_NS A_IF=$SRV_IF A_ADDR=$SRV_V4
LB_V4=$CLI_V4
B_NS="es-srvb-$LAB_ID"
B_IF="es-b$LAB_ID"
B_PEER="es-lb$LAB_ID"
B_ADDR=2001:db8:b::1
LB_V6=2001:db8:b::2

work=$(mktemp -d /tmp/edgeshed-lb.XXXXXX)
LAB_DIRS+=("$work")
# A copy of the binary for the whole run: a rebuild of the tree meanwhile
# must not swap the program between the daemons' starts.
cp "$EDGESHED" "$work/edgeshed"
EDGESHED=$work/edgeshed
in_b() { nsenter --net="/run/netns/$B_NS" "$@"; }

# Backend b's namespace, link, daemon and pins go before lib.sh's lab: its
# daemon (on_exit = "detach") first, then whatever is left.
B_DAEMON=
LAB_HOOKS+=('lb_b_cleanup')
lb_b_cleanup() {
	if [ "${LB_FAILED:-1}" -ne 0 ] && [ -n "${LB_V4:-}" ]; then
		echo "--- HAProxy's view of the backend" >&2
		in_cli curl -s --max-time 2 "http://$LB_V4:8404/stats;csv" 2>/dev/null | grep -E '^(# |be,)' |
			cut -d, -f1-2,5-8,18-20,37-40,62-66 >&2
	fi
	if [ -n "$B_DAEMON" ]; then kill -TERM "$B_DAEMON" 2>/dev/null && wait "$B_DAEMON" 2>/dev/null; fi
	ip netns pids "$B_NS" 2>/dev/null | xargs -r kill 2>/dev/null
	sleep 0.2
	[ -d "/sys/fs/bpf/edgeshed/$B_IF" ] && in_b "$EDGESHED" detach --iface "$B_IF" >/dev/null 2>&1
	rm -rf "/sys/fs/bpf/edgeshed/$B_IF"
	rmdir /sys/fs/bpf/edgeshed 2>/dev/null
	ip netns del "$B_NS" 2>/dev/null
	if [ "${LB_FAILED:-1}" -ne 0 ]; then
		for f in "$work"/daemon-*.log "$work"/haproxy.log; do
			[ -s "$f" ] && { echo "--- last lines of $(basename "$f")"; tail -n 20 "$f" | cut -c1-300; } >&2
		done
	fi
	return 0
}

ip netns add "$B_NS"
ip link add "$B_IF" netns "$B_NS" type veth peer name "$B_PEER" netns "$CLI_NS"
in_b ip link set lo up
in_b ip -6 addr add "$B_ADDR/64" dev "$B_IF" nodad
in_cli ip -6 addr add "$LB_V6/64" dev "$B_PEER" nodad
in_b ip link set "$B_IF" up
in_cli ip link set "$B_PEER" up
b_mac=$(in_b ip -o link show "$B_IF" | grep -o 'link/ether [^ ]*' | cut -d' ' -f2)
lb_mac=$(in_cli ip -o link show "$B_PEER" | grep -o 'link/ether [^ ]*' | cut -d' ' -f2)
in_cli ip neigh replace "$B_ADDR" lladdr "$b_mac" dev "$B_PEER"
in_b ip neigh replace "$LB_V6" lladdr "$lb_mac" dev "$B_IF"

# The services: refserver on port 80 in each backend namespace.
for side in a b; do
	ns=$A_NS
	[ "$side" = b ] && ns=$B_NS
	nsenter --net="/run/netns/$ns" "$REFSERVER" --port 80 --workers 8 --service-ms 2 --metrics-port 0 \
		--duration-s 280 >"$work/refserver-$side.log" 2>&1 &
	LAB_PIDS+=($!)
done

# One daemon per backend, enforcing: the level comes from a file signal
# (pressure = value / 1.0; high is entered at 1.3, critical at 2.0), the
# limit is static so that the cap at high is known, and levels step down
# after 1 s below their exit.
start_backend_daemon() {
	local side=$1 ns=$2 iface=$3 agent_listen=$4 ready_from=$5
	echo 0.1 >"$work/pressure-$side"
	cat >"$work/edgeshed-$side.toml" <<TOML
[daemon]
run_dir = "$work/run-$side"
tick = "100ms"
on_exit = "detach"

[dataplane]
mode = "enforce"

[metrics]
listen = "127.0.0.1:9477"
not_ready_from = "$ready_from"

[agent]
listen = "$agent_listen"

[[interface]]
name = "$iface"
hook = "xdp-generic"

[[port]]
port = 80

[levels]
exit_after = "1s"

[limit]
algorithm = "static"
initial = $STATIC_LIMIT

[[signal]]
name = "pressure"
kind = "file"
path = "$work/pressure-$side"
target = 1.0
TOML
	nsenter --net="/run/netns/$ns" "$EDGESHED" run --config "$work/edgeshed-$side.toml" \
		>"$work/daemon-$side.log" 2>&1 &
	local pid=$!
	LAB_PIDS+=("$pid")
	log=$work/daemon-$side.log wait_for "daemon $side running" grep -q "running:" "$work/daemon-$side.log"
	DAEMON_PID=$pid
}
start_backend_daemon a "$A_NS" "$A_IF" "$A_ADDR:9478" high
start_backend_daemon b "$B_NS" "$B_IF" "[$B_ADDR]:9478" critical
B_DAEMON=$DAEMON_PID
pass "two backends, each behind its own daemon with its agent on port 9478"

# HAProxy in the client namespace: the service's frontend, and the stats
# page (CSV) to read what HAProxy made of the agents' answers.
cat >"$work/haproxy.cfg" <<CFG
global
	maxconn 1000
	pidfile $work/haproxy.pid
defaults
	mode http
	timeout connect 1s
	timeout client 5s
	timeout server 5s
	timeout check 1s
frontend fe
	bind $LB_V4:8080
	default_backend be
frontend stats
	bind $LB_V4:8404
	stats enable
	stats uri /stats
backend be
	balance roundrobin
	http-response set-header x-server %[srv_name]
	server a $A_ADDR:80 weight 100 check inter 1s agent-check agent-addr $A_ADDR agent-port 9478 agent-inter 1s
	server b [$B_ADDR]:80 weight 100 check inter 1s agent-check agent-addr $B_ADDR agent-port 9478 agent-inter 1s
CFG
in_cli haproxy -c -q -f "$work/haproxy.cfg" || fail "haproxy refuses the config"
nsenter --net="/run/netns/$CLI_NS" haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy.log" 2>&1 &
LAB_PIDS+=($!)

# hap_stat SERVER FIELD: a field of the server's row of HAProxy's CSV stats.
hap_stat() {
	in_cli curl -s --max-time 2 "http://$LB_V4:8404/stats;csv" |
		awk -F, -v sv="$1" -v field="$2" '
			NR == 1 { sub(/^# /, ""); for (i = 1; i <= NF; i++) col[$i] = i; next }
			$1 == "be" && $2 == sv { print $(col[field]); exit }'
}
hap_stat_is() { [ "$(hap_stat "$1" "$2")" = "$3" ]; }
wait_for "HAProxy sees both servers up" eval 'hap_stat_is a status UP && hap_stat_is b status UP'
# CHECKED: the agent answered, with no health word (up/down) in its line.
wait_for "HAProxy's agent checks answered" eval 'hap_stat_is a agent_status CHECKED && hap_stat_is b agent_status CHECKED'

# agent_line ADDR: what the agent answers a connection from the client namespace.
agent_line() { in_cli timeout 3 bash -c "cat </dev/tcp/$1/9478"; }
ready_of_a() { in_srv curl -s --max-time 2 -w '%{http_code}' "http://127.0.0.1:9477/ready" | tr '\n' ' '; }

# share PHASE: REQUESTS requests through HAProxy, each on a new connection
# (one curl, bounded per request and as a whole); prints a's share and
# records the counts. Every request must be answered by a or b.
share() {
	local phase=$1 urls=() i out a b
	for i in $(seq "$REQUESTS"); do urls+=(-o /dev/null "http://$LB_V4:8080/"); done
	out=$(in_cli timeout 120 curl -s --max-time 2 -H 'Connection: close' -w '%header{x-server}\n' "${urls[@]}") ||
		fail "$phase: curl failed: $(tail -n 3 <<<"$out")"
	a=$(grep -cx a <<<"$out" || true)
	b=$(grep -cx b <<<"$out" || true)
	[ $((a + b)) -eq "$REQUESTS" ] || fail "$phase: $((a + b)) of $REQUESTS requests answered by a or b"
	echo "$phase $a $b" >>"$work/shares"
	awk -v a="$a" -v n="$REQUESTS" 'BEGIN { printf "%.3f", a / n }'
}
# in_range WHAT VALUE MIN MAX
in_range() {
	awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }' ||
		fail "$1 = $2, outside [$3, $4]"
}

# Before: both at normal, full weight, no maxconn.
[ "$(agent_line "$A_ADDR")" = "100% ready maxconn:0" ] || fail "agent a at normal: '$(agent_line "$A_ADDR")'"
[ "$(agent_line "$B_ADDR")" = "100% ready maxconn:0" ] || fail "agent b at normal: '$(agent_line "$B_ADDR")'"
[ "$(ready_of_a)" = "ready 200" ] || fail "a's /ready at normal: '$(ready_of_a)'"
wait_for "a at full weight" hap_stat_is a weight 100
before=$(share before)
in_range "a's share before" "$before" 0.40 0.60
echo "before: a's share $before (weight $(hap_stat a weight)/$(hap_stat b weight), a's maxconn '$(hap_stat a slim)')"
[ -z "$(hap_stat a slim)" ] || fail "a has a maxconn before any cap: $(hap_stat a slim)"
pass "before: the agents say '100% ready maxconn:0', HAProxy splits evenly"

# During: a's pressure at 1.5 puts it at high.
echo 1.5 >"$work/pressure-a"
wait_for "a at high" grep -qx high "$work/run-a/level"
line=$(agent_line "$A_ADDR")
[ "$line" = "$WEIGHT_HIGH% ready maxconn:$STATIC_LIMIT" ] || fail "agent a at high: '$line'"
[ "$(ready_of_a)" = "not ready: high 503" ] || fail "a's /ready at high: '$(ready_of_a)'"
wait_for "HAProxy applies a's agent weight" hap_stat_is a weight "$WEIGHT_HIGH"
wait_for "HAProxy applies a's maxconn" hap_stat_is a slim "$STATIC_LIMIT"
[ "$(hap_stat b weight)" = 100 ] || fail "b's weight moved: $(hap_stat b weight)"
during=$(share during)
expected=$(awk -v w="$WEIGHT_HIGH" 'BEGIN { printf "%.3f", w / (w + 100) }')
in_range "a's share at high" "$during" 0.12 0.28
awk -v d="$during" -v b="$before" 'BEGIN { exit !(d <= b - 0.15) }' ||
	fail "a's share fell only from $before to $during"
echo "during: a's share $during, expected $expected (weight $(hap_stat a weight)/$(hap_stat b weight), a's maxconn $(hap_stat a slim))"
pass "during: a's agent says '$line' and /ready 503; HAProxy sends a $during of new requests"

# After: the pressure goes; a steps down to normal, one level a second.
echo 0.1 >"$work/pressure-a"
wait_for "a back at normal" grep -qx normal "$work/run-a/level"
[ "$(agent_line "$A_ADDR")" = "100% ready maxconn:0" ] || fail "agent a after: '$(agent_line "$A_ADDR")'"
[ "$(ready_of_a)" = "ready 200" ] || fail "a's /ready after: '$(ready_of_a)'"
wait_for "HAProxy restores a's weight" hap_stat_is a weight 100
wait_for "HAProxy lifts a's maxconn" hap_stat_is a slim ""
after=$(share after)
in_range "a's share after" "$after" 0.40 0.60
echo "after: a's share $after (weight $(hap_stat a weight)/$(hap_stat b weight), a's maxconn '$(hap_stat a slim)')"
pass "after: back to '100% ready maxconn:0', maxconn lifted, HAProxy splits evenly again"

grep -q "level normal -> high" "$work/daemon-a.log" || fail "a's daemon logged no rise to high"
if grep -q "level normal ->" "$work/daemon-b.log"; then fail "b's level moved: $(grep 'level ' "$work/daemon-b.log")"; fi
echo "HAProxy shares of new requests to a (of $REQUESTS each): before $before, during $during (expected $expected), after $after"
LB_FAILED=0
