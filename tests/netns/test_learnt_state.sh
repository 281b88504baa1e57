#!/usr/bin/env bash
# Learn before the overload, and keep what was learnt. The eager server of
# the matrix (10 slots x 20 ms, port 80), configs/port_only.toml, real TCP
# between the lab's two namespaces.
#
# 1. Observe mode at half load (the runbook's first step), 8 s: the daemon
#    refuses nothing, and state.json's "learnt" holds the service's no-queue
#    response time (within [S, 3 S]: the kernel's p90 of requests that do
#    not queue), its rate (within 25% of what the client completed) and its
#    requests in service. A clean stop writes run_dir/state/learnt.json
#    (0600, version 1, port 80 listened on by uid 0).
# 2. The restart into enforce (the runbook's second step) starts warm (its
#    log names the file), then 1.6x for 4 s: the queue is proven, requests
#    are refused, and the limit starts where Little's law puts the learnt
#    floor at the saturated rate (within [C/2, 4 C]).
# 3. The file is ignored, and the daemon says why, when it is of another
#    service (the config protects 8080), stale (saved two days ago) or of
#    another version.
source "$(dirname "$0")/servers_lib.sh"

PORT=80
SLOTS=10
SERVICE_MS=20
LEARN_S=8
OVERLOAD_S=4

STATE_FILE=
daemon_with_mode() { # MODE [PORT]
	local cfg
	cfg=$(matrix_config port_only "${2:-$PORT}")
	config_mode "$cfg" "$1"
	start_daemon_config "$cfg"
}

scenario_up
client_xdp_pass
STATE_FILE=$SC_WORK/run/state/learnt.json
start_server eager "$PORT" "$SLOTS" "$SERVICE_MS"
measure_capacity cap "$PORT" "$SLOTS" "$SERVICE_MS" 2
echo "eager: measured capacity $CAPACITY/s (nominal 500/s)"
check_ge "eager: measured capacity (req/s)" "$CAPACITY" 100
half=$(awk -v c="$CAPACITY" 'BEGIN { printf "%.0f", 0.5 * c }')
over=$(awk -v c="$CAPACITY" 'BEGIN { printf "%.0f", 1.6 * c }')

echo "== 1. observe mode at $half/s (0.5x) for $LEARN_S s"
daemon_with_mode observe
grep -q "nothing learnt of the service yet" "$DAEMON_LOG" ||
	fail "a first start must say it starts cold: $(cat "$DAEMON_LOG")"
load learn --port "$PORT" --rate "$half" --poisson --duration-s "$LEARN_S" \
	--count $((half * LEARN_S)) --timeout-ms 5000
read -r ok shed lost p50 p99 _ _ < <(csv_figures "$SC_WORK/learn.csv" 0 999999)
completed_rate=$(awk -v n="$ok" -v s="$LEARN_S" 'BEGIN { printf "%.0f", n / s }')
echo "learn: ok $ok ($completed_rate/s), refused $shed, lost $lost, p50 $p50 p99 $p99 ms"
check_eq "observe mode: refused" "$shed" 0
learnt=$(jq -c '.learnt // empty' "$SC_STATE")
[ -n "$learnt" ] || fail "state.json has no \"learnt\" after $LEARN_S s at half load: $(cat "$SC_STATE")"
echo "state.json learnt: $learnt"
"$EDGESHED" --run-dir "$SC_WORK/run" status --iface "$SRV_IF" --verbose | grep "learnt while healthy" ||
	fail "status prints no learnt line"
floor=$(jq -r '.learnt.floor_ms * 10 | round / 10' "$SC_STATE")
rate=$(jq -r '.learnt.rate | round' "$SC_STATE")
check_ge "learnt no-queue response (ms)" "$floor" "$SERVICE_MS"
check_le "learnt no-queue response (ms)" "$floor" $((3 * SERVICE_MS))
check_ge "learnt rate (/s)" "$rate" "$(awk -v r="$completed_rate" 'BEGIN { print 0.75 * r }')"
check_le "learnt rate (/s)" "$rate" "$(awk -v r="$completed_rate" 'BEGIN { print 1.25 * r }')"
stop_daemon
[ -f "$STATE_FILE" ] || fail "a clean stop wrote no $STATE_FILE: $(cat "$DAEMON_LOG")"
check_eq "learnt.json mode" "$(stat -c %a "$STATE_FILE")" 600
check_eq "learnt.json version" "$(jq -r .version "$STATE_FILE")" 1
check_eq "learnt.json service" "$(jq -c .service "$STATE_FILE")" '{"listeners":[{"port":80,"uid":0}],"ports":[80]}'
saved_floor=$(jq -r '.capacity.floor_seconds * 1000' "$STATE_FILE")
check_ge "learnt.json floor (ms)" "$saved_floor" "$SERVICE_MS"
pass "observe mode learnt the service at half load: no-queue response $floor ms, $rate/s; kept in $STATE_FILE"

echo "== 2. restart in enforce mode, then $over/s (1.6x) for $OVERLOAD_S s"
daemon_with_mode enforce
grep "warm start from $STATE_FILE" "$DAEMON_LOG" || fail "no warm start: $(cat "$DAEMON_LOG")"
start_state_sampler "$SC_WORK/states"
load overload --port "$PORT" --rate "$over" --poisson --duration-s "$OVERLOAD_S" \
	--count $((over * OVERLOAD_S)) --timeout-ms 5000
stop_state_sampler
read -r ok shed lost p50 p99 _ _ < <(csv_figures "$SC_WORK/overload.csv" 0 999999)
echo "overload: ok $ok, refused $shed, lost $lost, admitted p50 $p50 p99 $p99 ms; first limit samples: $(awk '$3 != 1000 { print $3; exit }' "$SC_WORK/states"); $(jq -c '{adaptive_limit, adaptive_limit_open, learnt}' "$SC_STATE")"
check_ge "warm start at 1.6x: refused" "$shed" 1
check_eq "warm start at 1.6x: the limit is closed" "$(jq -r .adaptive_limit_open "$SC_STATE")" false
limit=$(jq -r .adaptive_limit "$SC_STATE")
check_ge "adaptive limit after the overload" "$limit" $((SLOTS / 2))
check_le "adaptive limit after the overload" "$limit" $((SLOTS * 4))
stop_daemon
pass "the restart started warm and held the 1.6x overload at a limit of $limit (admitted p99 $p99 ms)"

echo "== 3. learnt state that must be ignored"
daemon_with_mode enforce 8080
grep "learnt state ignored.*of another service" "$DAEMON_LOG" ||
	fail "another port, no refusal of the learnt state: $(cat "$DAEMON_LOG")"
stop_daemon
cp "$STATE_FILE" "$SC_WORK/learnt.saved"
jq ".saved_unix_ms -= 2 * 86400000" "$SC_WORK/learnt.saved" >"$STATE_FILE"
daemon_with_mode enforce
grep "learnt state ignored.*stale, saved" "$DAEMON_LOG" || fail "stale state not refused: $(cat "$DAEMON_LOG")"
stop_daemon
jq ".version = 99" "$SC_WORK/learnt.saved" >"$STATE_FILE"
daemon_with_mode enforce
grep "learnt state ignored.*version 99, this daemon reads 1" "$DAEMON_LOG" ||
	fail "another version not refused: $(cat "$DAEMON_LOG")"
stop_daemon
pass "learnt state of another service, a stale one and one of another version are ignored, each with its reason"
