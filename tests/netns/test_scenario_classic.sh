#!/usr/bin/env bash
# Scenario 1, the classic overload case: a service of 10 workers x 20 ms
# (capacity 500/s) is offered 2,000 requests at 1.6x (800/s), each on a new
# connection. Without edgeshed, admitted p99 > 10x the service time (200 ms).
# With edgeshed (the demo's adaptive controller, action rst): admitted p99,
# completed rate and time to refusal within scenario_lib.sh's bounds (3x the
# service time, 80% of capacity, 20 ms).
source "$(dirname "$0")/scenario_lib.sh"

scenario_up
start_refserver

offer() { load "$1" --rate 800 --count 2000 --timeout-ms 5000; }

offer without
check_eq "without: offered" "$(jv without .total.offered)" 2000
check_eq "without: refused" "$(jv without .total.refused)" 0
check_ge "without: ok count" "$(jv without .total.ok_latency_ms.count)" 1
check_ge "without: admitted p99 (ms)" "$(jv without .total.ok_latency_ms.p99)" 200
echo "without edgeshed: $(figures without)"
pass "scenario 1 without edgeshed: $(short_figures without)"
sleep 1 # the last connections close

start_daemon classic MODE=enforce
sleep 2 # the probe learns the idle latency
offer with
check_eq "with: offered" "$(jv with .total.offered)" 2000
check_classic_with with "with edgeshed"
pass "scenario 1 with edgeshed: $(short_figures with)"
shed=$(es_status | jq '.classes.normal.counters | .shed_cap + .shed_fraction + .shed_rate')
sent=$(es_status | jq '.classes.normal.counters.rst_sent')
check_ge "data plane sheds" "$shed" 1
pass "data plane: $shed shed, $sent RST sent, level $(daemon_level)"
stop_daemon
