#!/usr/bin/env bash
# Never refuse a healthy service with a heavy tail: the eager (asyncio)
# server of the matrix, 10 slots, 90% of its requests 5 ms and 10% 100 ms
# (mean 14.5 ms, nominal 690/s), its capacity measured; a new connection per
# request at 0.7x that capacity (Poisson arrivals), 3,000 requests. Its long
# requests hold most of the slots now and then and the short ones queue
# behind them: the response time's p90 wanders up to the long requests' 100
# ms with no overload at all. edgeshed with only the port named
# (configs/port_only.toml, enforce), a cold start 1 s before the load.
#
# Precondition, without edgeshed: nothing refused or lost.
# Claims with edgeshed: 0 refused, 0 lost, the data plane decided on every
# new connection.
# At ae8a0fc the proof of a queue read a p90 window 1.5x over its lowest,
# with in-flight up, as a queue: 4 runs in 8 refused some of the 3,000
# (471, 384, 274, 7); the simulator's minute at 0.7x, 4 seeds: 40,667
# sheds. The proof now wants that p90 over 1.25x the p99.9 learnt while
# the service was healthy (law/open_start.cpp, kTailRise).
# SV_POD=1 or cgroup: the server in a pod, the port naming its namespace or
# its cgroup (servers_lib.sh; `make bench-never-harm-pods`).
source "$(dirname "$0")/servers_lib.sh"

PORT=80
W=10
SHORT_MS=5
LONG_MS=100
LONG_SHARE=0.1
COUNT=3000

scenario_up
client_xdp_pass
sv_in_pod_if_asked

SV_PY_ARGS=(--long-share "$LONG_SHARE" --long-ms "$LONG_MS")
start_server eager "$PORT" "$W" "$SHORT_MS"
# At the mean service time (14.5 ms): 1.5x nominal, as the matrix measures.
measure_capacity cap "$PORT" "$W" 14.5 2
echo "eager heavy tail: measured capacity $CAPACITY/s (nominal $((W * 1000 * 10 / 145))/s)"
check_ge "measured capacity (req/s)" "$CAPACITY" 100
RATE=$(awk -v c="$CAPACITY" 'BEGIN { printf "%.0f", 0.7 * c }')
SECS=$(awk -v n="$COUNT" -v r="$RATE" 'BEGIN { printf "%.0f", n / r + 1 }')

load without --port "$PORT" --rate "$RATE" --poisson --count "$COUNT" --duration-s "$SECS" \
	--timeout-ms 10000
read -r ok shed lost p50 p99 _ _ < <(csv_figures "$SC_WORK/without.csv" 0 1)
check_eq "without edgeshed: refused" "$shed" 0
check_eq "without edgeshed: lost" "$lost" 0
pass "without edgeshed (precondition): $ok of $COUNT at $RATE/s answered, admitted p50 $p50 p99 $p99 ms"

start_matrix_daemon port_only "$PORT"
sleep 1
check_eq "data plane mode" "$(es_status | jq -r .mode)" enforce
start_state_sampler "$SC_WORK/states"
syn0=$(es_status | jq '.classes.normal.counters | .admitted + .shed_cap + .shed_fraction + .shed_rate')
load with --port "$PORT" --rate "$RATE" --poisson --count "$COUNT" --duration-s "$SECS" \
	--timeout-ms 10000
stop_state_sampler
syn1=$(es_status | jq '.classes.normal.counters | .admitted + .shed_cap + .shed_fraction + .shed_rate')
read -r ok shed lost p50 p99 _ _ < <(csv_figures "$SC_WORK/with.csv" 0 1)
limits=$(awk '{ print $3 }' "$SC_WORK/states" | sort -n | uniq | xargs | cut -c1-60)
echo "with edgeshed: $ok answered, $shed refused, $lost lost, admitted p50 $p50 p99 $p99 ms;" \
	"data plane: $((syn1 - syn0)) SYNs; adaptive limits seen: $limits"
check_ge "SYNs the data plane decided on" $((syn1 - syn0)) "$COUNT"
# The requests were timed, or refusing none would prove nothing.
check_ge "the kernel's response p50 (ms), the short requests' $SHORT_MS ms" "$(kernel_p50 "$PORT")" 4
claim "heavy tail at 0.7x with edgeshed: $shed of $COUNT refused, want 0" "$(is "$shed" 0)"
claim "heavy tail at 0.7x with edgeshed: $lost lost (timeouts, resets, errors), want 0" "$(is "$lost" 0)"
# The limit may still be proven in the first ticks (in 1 run of 4 at
# 4b52570, on a loaded machine): then it starts at 20 and grows, and must
# refuse nothing all the same.
echo "adaptive limits seen: $limits"
stop_daemon
stop_server

if [ ${#CLAIMS_FAILED[@]} -gt 0 ]; then
	echo "--- edgeshed refused or harmed a healthy heavy-tailed service:" >&2
	printf '  %s\n' "${CLAIMS_FAILED[@]}" >&2
	fail "edgeshed with port_only.toml harms a heavy-tailed healthy service (${#CLAIMS_FAILED[@]} claims not met)"
fi
pass "a heavy-tailed healthy service at 0.7x is never refused"
