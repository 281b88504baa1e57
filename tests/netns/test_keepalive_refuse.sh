#!/usr/bin/env bash
# keepalive = "refuse": a new request on an open (keep-alive) connection,
# while the class's requests in service are at the cap, gets a RST at both
# ends before the server reads it (bpf/refuse_request.bpf.h). The eager
# server of the matrix (10 slots x 20 ms), configs/port_only.toml plus the
# key, a loadgen pool of 50 keep-alive connections, real TCP between the
# lab's namespaces.
#
# 0. 200 idle connections (tcp_tool hold: opened, never used) held from the
#    start to the end, beside everything below.
# 1. 0.7x on the pool for 6 s from a cold start: nothing refused, no
#    connection reset, no idle connection reclaimed (the limit is open until
#    a queue shows).
# 2. The pool at 0.7x for 3 s, then 5x for 6 s (--ramp): the queue is proven
#    as the load rises, and from then on requests on the open connections
#    are refused: the data plane's requests_refused counts them, and every
#    reset the client saw is one of them (none is a request the server read
#    and lost: the server never saw those requests). The server's own
#    response time (the kernel's p99, median of its 1 s windows from 2 s
#    into the overload) stays within 2.5x the service time: without the key
#    the pool's 50 connections keep 5x the slots' worth in the server (p99
#    ~100 ms). loadgen's pool is open loop: a request waits in the client
#    for a free connection, so its own figures (printed) carry the backlog
#    of the second before the queue was proven, seconds long at 5x; the
#    refusal's time at the client is make bench-servers' to measure. status
#    names the port's setting and the refusals. The idle connections are
#    reclaimed (the class holds far more connections than its cap), at most
#    32 a second: every reset the holder saw is one the data plane counts
#    as reclaimed, and none of the pool's connections (never idle for 1 s)
#    is among them. The server lost no request it had read (its count).
# 3. The filter sits at TC ingress beside the XDP hook while the daemon
#    runs, and detach leaves no filter and no qdisc behind.
source "$(dirname "$0")/servers_lib.sh"

PORT=80
SLOTS=10
SERVICE_MS=20
POOL=50
CALM_S=6
IDLE_N=200

scenario_up
client_xdp_pass
SV_PY_ARGS=(--idle-timeout-s 120) # keeps the idle connections
start_server eager "$PORT" "$SLOTS" "$SERVICE_MS"
measure_capacity cap "$PORT" "$SLOTS" "$SERVICE_MS" 2
echo "eager: measured capacity $CAPACITY/s (nominal 500/s)"
check_ge "eager: measured capacity (req/s)" "$CAPACITY" 100
calm=$(awk -v c="$CAPACITY" 'BEGIN { printf "%.0f", 0.7 * c }')

cfg=$(matrix_config port_only "$PORT")
echo 'keepalive = "refuse"' >>"$cfg"
start_daemon_config "$cfg"
"$EDGESHED" --run-dir "$SC_WORK/run" status --verbose --iface "$SRV_IF" | grep "ports: 80:normal (keepalive refuse)" ||
	fail "status does not name the port's keepalive setting"
in_srv tc filter show dev "$SRV_IF" ingress | grep -q edgeshed_refuse ||
	fail "no request filter at TC ingress: $(in_srv tc filter show dev "$SRV_IF" ingress)"

refused_counter() { es_status | jq '[.classes[].counters.requests_refused] | add'; }
reclaimed_counter() { es_status | jq '[.classes[].counters.reclaimed] | add'; }
# resets CSV: the requests the client saw reset, and their time to the
# reset, p99 (ms).
resets() {
	gawk -F, 'NR > 1 && $3 == "reset" { t[++n] = $4 }
		END { asort(t); r = int(0.99 * n + 0.999999); printf "%d %s\n", n, n ? t[r < 1 ? 1 : r] : "-" }' "$1"
}

echo "== 0. $IDLE_N idle connections held until the end"
"${SC_NICE[@]}" nsenter --net="/run/netns/$CLI_NS" "$TCP_TOOL" hold "$SRV_V4" "$PORT" "$IDLE_N" 60 2000 \
	>"$SC_WORK/hold" 2>"$SC_WORK/hold.err" &
HOLDER=$!
LAB_PIDS+=("$HOLDER")
wait_for --within 10 "the holder's connects to end" grep -q '^opened ' "$SC_WORK/hold"
read -r _ _ _ held_est _ < <(grep '^opened ' "$SC_WORK/hold")
check_eq "idle connections established" "$held_est" "$IDLE_N"
sleep 1.5 # idle for the reclaim's minimum, should anything reclaim them now

echo "== 1. the pool at $calm/s (0.7x) for $CALM_S s, cold start"
load calm --port "$PORT" --keep-alive --max-connections "$POOL" --rate "$calm" --poisson \
	--duration-s "$CALM_S" --count $((calm * CALM_S)) --timeout-ms 5000
read -r ok shed lost p50 p99 _ _ < <(csv_figures "$SC_WORK/calm.csv" 0 999999)
read -r nreset _ < <(resets "$SC_WORK/calm.csv")
echo "calm: ok $ok, refused $shed, lost $lost (reset $nreset), p50 $p50 p99 $p99 ms"
check_eq "0.7x: requests reset" "$nreset" 0
check_eq "0.7x: connections refused" "$shed" 0
check_eq "0.7x: requests refused (data plane)" "$(refused_counter)" 0
check_eq "0.7x: idle connections reclaimed" "$(reclaimed_counter)" 0
pass "0.7x on a keep-alive pool: nothing refused"

echo "== 2. the pool at 0.7x for 3 s, then 5x for 6 s"
before=$(refused_counter)
start_state_sampler "$SC_WORK/states"
load over --port "$PORT" --keep-alive --max-connections "$POOL" --poisson \
	--ramp "0.7x:3s,5x:6s" --capacity "$CAPACITY" --timeout-ms 5000
stop_state_sampler
read -r ok shed lost p50 p99 _ _ < <(csv_figures "$SC_WORK/over.csv" 0 999999)
read -r nreset reset_p99 < <(resets "$SC_WORK/over.csv")
refused=$(($(refused_counter) - before))
# The server's own p99: samples from 5 s on (2 s into the overload).
server_p99=$(awk 'NR == 1 { t0 = $1 } $1 >= t0 + 5000 && $5 != "-" && $5 != "" { print $5 }' "$SC_WORK/states" |
	sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", v[int((NR + 1) / 2)]; else print "-" }')
echo "over: the client: ok $ok, connections refused $shed, lost $lost (reset $nreset, p99 $reset_p99 ms)," \
	"admitted p50 $p50 p99 $p99 ms; the data plane: requests refused $refused; the server's own p99" \
	"from 2 s into the overload: $server_p99 ms"
"$EDGESHED" --run-dir "$SC_WORK/run" status --verbose --iface "$SRV_IF" | grep "requests refused on open connections" ||
	fail "status does not report the refusals"
claim "requests refused on open connections" "$(ge "$refused" 1)"
claim "every reset the client saw is a refusal" "$(is "$nreset" "$refused")"
claim "the server's own p99 from 2 s into the overload <= 2.5x the service time" \
	"$(le "$server_p99" $((5 * SERVICE_MS / 2)))"
reclaimed=$(reclaimed_counter)
kill -USR1 "$HOLDER" 2>/dev/null || true # it ends by itself once none is left
wait "$HOLDER" || fail "tcp_tool hold: exit $?: $(cat "$SC_WORK/hold" "$SC_WORK/hold.err")"
read -r _ _ _ held_open _ held_closed _ held_reset < <(grep '^held ' "$SC_WORK/hold")
echo "idle connections: $reclaimed reclaimed by the data plane; the holder: $held_open of $IDLE_N still" \
	"open, $held_closed closed, $held_reset reset"
"$EDGESHED" --run-dir "$SC_WORK/run" status --verbose --iface "$SRV_IF" | grep "idle connections reclaimed" ||
	fail "status does not report the reclaimed connections"
claim "idle connections reclaimed" "$(ge "$reclaimed" 1)"
claim "every idle connection reset is one reclaimed, and the reclaims hit idle ones only" \
	"$(is "$held_reset" "$reclaimed")"
stop_server
claim "no request the server read was lost" "$(is "$(read_and_lost "$SERVER_LOG")" 0)"
if [ ${#CLAIMS_FAILED[@]} -gt 0 ]; then
	printf '  %s\n' "${CLAIMS_FAILED[@]}" >&2
	fail "keepalive = refuse: ${#CLAIMS_FAILED[@]} claims not met"
fi
pass "5x on a keep-alive pool: requests on open connections refused before the server read them"

echo "== 3. detach"
stop_daemon
in_srv "$EDGESHED" detach --iface "$SRV_IF"
[ -z "$(in_srv tc filter show dev "$SRV_IF" ingress)" ] ||
	fail "detach left a filter: $(in_srv tc filter show dev "$SRV_IF" ingress)"
! in_srv tc qdisc show dev "$SRV_IF" | grep -q clsact ||
	fail "detach left the clsact qdisc edgeshed created: $(in_srv tc qdisc show dev "$SRV_IF")"
pass "detach removed the request filter and its qdisc"
