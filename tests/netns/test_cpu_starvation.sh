#!/usr/bin/env bash
# The controller keeps deciding when the host is starved of CPU, which is
# when shedding matters: with stress-ng busy on every core at nice 0, the
# daemon (started at nice 0 itself) raises its own priority to daemon.nice,
# its heartbeat never lapses (no SYN is admitted by fail-open) and the level
# still moves under an overload of the classic service.
source "$(dirname "$0")/scenario_lib.sh"

command -v stress-ng >/dev/null || fail "stress-ng is required (scripts/deps.sh installs it)"

scenario_up
start_refserver

# The daemon as an operator's shell would start it: nice 0, not the lab's -10.
SC_NICE=(nice -n 0)
start_daemon classic MODE=enforce
SC_NICE=(nice -n "${SCENARIO_NICE:--10}")
nice_of() { awk '{ print $19 }' "/proc/$1/stat"; }
check_eq "daemon nice after start" "$(nice_of "$DAEMON")" -10
grep -q "scheduling priority: nice -10" "$DAEMON_LOG" || fail "no priority line in the log"
pass "the daemon raised itself to nice -10"
sleep 2 # the probe learns the idle latency

# Twice as many CPU hogs as cores, bounded by their own timeout.
hogs=$(($(nproc) * 2))
nice -n 0 stress-ng --cpu "$hogs" --cpu-method loop --timeout 25s --quiet &
LAB_PIDS+=($!)
sleep 1
load overload --rate 800 --count 4000 --timeout-ms 5000
echo "under CPU starvation: $(figures overload)"

counters=$(es_status | jq '[.classes[].counters] ')
fail_open=$(jq '[.[].fail_open] | add' <<<"$counters")
shed=$(jq '[.[] | .shed_cap + .shed_fraction + .shed_rate] | add' <<<"$counters")
check_eq "SYNs admitted by fail-open under starvation" "$fail_open" 0
check_ge "sheds under starvation" "$shed" 1
grep -q "level normal -> " "$DAEMON_LOG" || fail "the level never moved: $(tail -5 "$DAEMON_LOG")"
pass "heartbeat held under $hogs CPU hogs: 0 fail-open admissions, $shed shed, level moved"
stop_daemon
