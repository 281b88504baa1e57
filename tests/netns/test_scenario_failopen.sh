#!/usr/bin/env bash
# Scenario 5, fail-open: under overload (1.6x) in enforce mode, the daemon
# is killed with SIGKILL. New connections are admitted again within the
# heartbeat timeout (1 s): none is refused from 1.5 s after the kill on. A
# restarted daemon adopts the pinned data plane and refusals resume. The
# data plane is never detached: the same BPF link stays attached throughout
# (the adopting daemon replaces its program in place, under a new id), and
# the device shows an XDP program at every sample (one every 0.1-0.3 s).
source "$(dirname "$0")/scenario_lib.sh"

# "LINK_ID PROG_ID" of the pinned XDP link.
xdp_link() { bpftool link show pinned "/sys/fs/bpf/edgeshed/$SRV_IF/xdp_link" | head -1 | awk '{ print $1 + 0, $4 }'; }
# Captured first: with pipefail, grep -q quitting at the first match can
# kill bpftool with SIGPIPE mid-output, and the pipeline then reads false.
attached() {
	local out
	out=$(in_srv bpftool net show dev "$SRV_IF") && grep -q 'generic id [0-9]' <<<"$out"
}

scenario_up
start_refserver
start_daemon classic MODE=enforce
sleep 2 # the probe learns the idle latency
# Read until both answer (at most 2 s): once, a bpftool read of the link
# came back empty on a busy machine while the program was attached.
link_and_prog() {
	read -r link_before prog_before <<<"$(xdp_link)"
	[ -n "$prog_before" ] && attached
}
wait_for --within 2 --try "the link and the program" link_and_prog ||
	fail "no program attached: $(in_srv bpftool net show dev "$SRV_IF"); link: $(bpftool link show pinned "/sys/fs/bpf/edgeshed/$SRV_IF/xdp_link" 2>&1)"

# 800/s for 12 s: killed at 3 s, restarted at 7 s.
t0=$(now_ms)
load_bg overload --rate 800 --duration-s 12 --timeout-ms 5000
sleep 3
shed_before=$(es_status | jq '.classes.normal.counters | .shed_cap + .shed_fraction + .shed_rate')
check_ge "sheds before the kill" "$shed_before" 1
(
	trap 'exit 0' TERM
	while :; do
		out=$(in_srv bpftool net show dev "$SRV_IF" 2>&1)
		grep -q 'generic id [0-9]' <<<"$out" && echo "$(($(now_ms) - t0)) yes" || echo "$(($(now_ms) - t0)) no: $(tr '\n' ' ' <<<"$out")"
		sleep 0.1
	done
) >"$SC_WORK/attached" &
watcher=$!
LAB_PIDS+=("$watcher")
kill -KILL "$DAEMON"
t_kill=$(($(now_ms) - t0))
{ wait "$DAEMON"; } 2>/dev/null || true
wait_for --within 3 "status says fail-open" bash -c "\"$EDGESHED\" status --iface $SRV_IF --json | jq -e '.fail_open == true'"
t_open=$(($(now_ms) - t0))
fo_before=$(es_status | jq '.classes.normal.counters.fail_open')
sleep "$(awk -v k="$t_kill" -v n="$(($(now_ms) - t0))" 'BEGIN { s = (k + 1500 - n) / 1000; print (s > 0 ? s : 0) }')"
for i in 1 2 3 4 5; do expect_connect ok "$SRV_V4" 80 >/dev/null; done
pass "5 new connections admitted $(($(now_ms) - t0 - t_kill)) ms after the SIGKILL"

sleep "$(awk -v k="$t_kill" -v n="$(($(now_ms) - t0))" 'BEGIN { s = (k + 4000 - n) / 1000; print (s > 0 ? s : 0) }')"
t_restart=$(($(now_ms) - t0)) # the new daemon may shed before its "running:" line
start_daemon classic MODE=enforce
grep -q "adopted the data plane on $SRV_IF" "$DAEMON_LOG" || fail "the restarted daemon did not adopt: $(cat "$DAEMON_LOG")"
pass "$(grep -m1 'adopted the data plane' "$DAEMON_LOG" | cut -d' ' -f3-)"
sleep 1
kill "$watcher"
wait "$watcher" || true
read -r link_after prog_after <<<"$(xdp_link)"
check_eq "XDP link after the restart (prog $prog_before before, $prog_after after)" "$link_after" "$link_before"
samples=$(wc -l <"$SC_WORK/attached")
check_ge "attachment samples from the kill to 1 s after the restart" "$samples" 20
grep ' no' "$SC_WORK/attached" >&2 || true
check_eq "samples with no XDP program, out of $samples" "$(grep -c ' no' "$SC_WORK/attached")" 0
pass "attached throughout: $samples samples from the kill on, link $link_after kept, program $prog_before replaced in place by $prog_after"
wait "$LOAD_PID" || fail "loadgen: exit $?"
fo_after=$(es_status | jq '.classes.normal.counters.fail_open')

csv=$SC_WORK/overload.csv
count() { awk -F, -v a="$1" -v b="$2" -v o="$3" 'NR > 1 && $1 >= a && $1 < b && $3 == o' "$csv" | wc -l; }
last_refused=$(awk -F, -v k="$t_kill" -v r="$t_restart" 'NR > 1 && $3 == "refused" && $1 >= k && $1 < r && $1 > m { m = $1 } END { printf "%d", m }' "$csv")
refused_failopen=$(count $((t_kill + 1500)) "$t_restart" refused)
admitted_failopen=$(count $((t_kill + 1500)) "$t_restart" ok)
refused_after=$(count $((t_restart + 1000)) 99999999 refused)
echo "overload: $(figures overload)"
echo "killed at ${t_kill} ms, status fail-open by ${t_open} ms, restart begun at ${t_restart} ms (from the load's start); fail_open counter ${fo_before} -> ${fo_after}"
[ "$last_refused" -gt 0 ] || fail "no refusal after the kill at all: was the data plane shedding?"
echo "last refusal after the kill: a connection started $((last_refused - t_kill)) ms after it"
echo "from 1.5 s after the kill to the restart: $refused_failopen refused, $admitted_failopen answered; from 1 s after the restart: $refused_after refused"
check_eq "refusals from 1.5 s after the kill to the restart" "$refused_failopen" 0
check_ge "requests answered while failing open" "$admitted_failopen" 100
check_ge "fail_open counter" "$fo_after" 100
check_ge "refusals after the restart" "$refused_after" 100
pass "scenario 5: fail-open $((t_open - t_kill)) ms after SIGKILL (status), last refusal $((last_refused - t_kill)) ms after it, adopted on restart (link $link_after throughout), $refused_after refusals after"
stop_daemon
