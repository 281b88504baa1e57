#!/usr/bin/env bash
# Scenario 6, observe mode: the classic overload case (2,000 requests at
# 1.6x, 800/s) with dataplane.mode = "observe": no client is refused, while
# the status counters show what enforce would have shed (would_shed_* > 0)
# and nothing shed (shed_* = 0).
source "$(dirname "$0")/scenario_lib.sh"

scenario_up
start_refserver
start_daemon classic MODE=observe
sleep 2 # the probe learns the idle latency
[ "$(es_status | jq -r .mode)" = observe ] || fail "mode: $(es_status | jq -c '{mode}')"
load observe --rate 800 --count 2000 --timeout-ms 5000
echo "observe: $(figures observe)"
check_eq "offered" "$(jv observe .total.offered)" 2000
check_eq "refused" "$(jv observe .total.refused)" 0
check_eq "resets" "$(jv observe .total.reset)" 0
check_eq "answered" "$(jv observe .total.ok)" 2000

st=$(es_status)
c=.classes.normal.counters
would=$(jq "$c | .would_shed_cap + .would_shed_fraction + .would_shed_rate" <<<"$st")
shed=$(jq "$c | .shed_cap + .shed_fraction + .shed_rate" <<<"$st")
echo "status counters: $(jq -c "$c | {admitted, would_shed_cap, would_shed_fraction, would_shed_rate, shed_cap, shed_fraction, shed_rate, rst_sent}" <<<"$st"), daemon level $(jq -r '.daemon.level // "none"' <<<"$st")"
check_ge "would_shed_* (normal)" "$would" 1
for k in shed_cap shed_fraction shed_rate rst_sent rst_capped; do
	for cls in critical normal background; do
		check_eq "$cls $k" "$(jq ".classes.$cls.counters.$k" <<<"$st")" 0
	done
done
pass "scenario 6 (observe): loadgen refused 0 of 2000 (admitted p99 $(jv observe .total.ok_latency_ms.p99) ms), would_shed $would, shed $shed"
stop_daemon
