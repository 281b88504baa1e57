#!/usr/bin/env bash
# The fail-safe matrix: what the data plane does, and what `edgeshed status`
# says, when the controller is not deciding. A pinned critical level (or a
# signal at 5x its target) makes every new connection to port 8080 refused
# while the daemon decides; each case then takes the daemon away:
#   1. SIGSTOP (hung), heartbeat_timeout 1s: admitted within the timeout,
#      status says stopped, a change sent meanwhile is refused (and not
#      applied later); SIGCONT brings the refusals back.
#   2. SIGKILL, heartbeat_timeout 1s (fail-open): admitted, status says died.
#   3. crash loop (killed right after each start): admitted between lives,
#      status says crash-looping; a clean stop clears it.
#   4. config unreadable at start: the daemon refuses to start and says why,
#      the pinned data plane stays open, status gives the error.
#   5. SIGKILL, heartbeat_timeout 0 (fail-static): the last policy stays in
#      force (still refused), status says fail-static and why.
#   6. every signal stale: all_stale = hold keeps refusing, fail_open
#      admits; status says so.
# And first: the modes of the pins, locks, socket and run files.
source "$(dirname "$0")/lib.sh"

lab_up
serve 8080 300

work=$(mktemp -d)
LAB_DIRS+=("$work")
run_dir=$work/run
injected=$work/injected
log=$work/daemon.log
echo 0.1 >"$injected"
es() { "$EDGESHED" --run-dir "$run_dir" "$@"; }
status_json() { es status --iface "$SRV_IF" --json --interval 0; }
jq_is() { [ "$(status_json | jq -r "$1")" = "$2" ]; }
outcome() { in_cli "$TCP_TOOL" connect "$SRV_V4" 8080 1000 | cut -d' ' -f1; }
outcome_is() { [ "$(outcome)" = "$1" ]; }
now_ms() { date +%s%3N; }
# sleep_until T0 MS: sleeps until MS after T0 (both in ms).
sleep_until() { sleep "$(awk -v t="$1" -v d="$2" -v n="$(now_ms)" 'BEGIN { s = (t + d - n) / 1000; print (s > 0 ? s : 0) }')"; }

# write_config HEARTBEAT_TIMEOUT ALL_STALE: the signal is the cases' own.
write_config() {
	daemon_config --keep-signal --daemon 'on_exit = "fail_open"' --daemon "heartbeat_timeout = \"$1\"" \
		--daemon "all_stale = \"$2\"" --signal 'stale_after = "500ms"' "$work" 8080 enforce >/dev/null
	cat >>"$work/edgeshed.toml" <<TOML

[metrics]
listen = "off"
TOML
}

start_daemon() {
	lab_daemon "$work/edgeshed.toml" "$log" --run-dir "$run_dir"
	wait_for "daemon $DAEMON in status" jq_is '.daemon.pid' "$DAEMON"
}
kill_daemon() {
	kill "-$1" "$DAEMON"
	{ wait "$DAEMON"; } 2>/dev/null || true
}
# expect_status WHAT...: the text status contains every WHAT.
expect_status() {
	local out
	out=$(es status --iface "$SRV_IF" --interval 0 --verbose 2>&1) || true
	for want in "$@"; do
		grep -qF -- "$want" <<<"$out" || fail "status lacks '$want':
$out"
	done
	pass "status: $(grep -m1 -E 'FAIL-OPEN|fail-static|daemon:' <<<"$out" | sed 's/^ *//')"
}

write_config 1s hold
start_daemon
es pin critical >/dev/null
wait_for "refusals at level critical" outcome_is refused
pass "pinned critical: new connections refused"

# Root only: pins, locks, the socket and what the daemon keeps; the level
# file is for the protected service to read, and so is status's state.
modes() { for f in "$@"; do echo "$(stat -c %a "$f") ${f#"$run_dir/"}"; done; }
pin_dir=/sys/fs/bpf/edgeshed/$SRV_IF
bad=$( {
	modes /sys/fs/bpf/edgeshed "$pin_dir" | grep -v '^700 '
	modes "$pin_dir"/* | grep -v '^600 '
	modes "$run_dir"/{daemon.lock,control.sock,runtime.json,starts.json} | grep -v '^600 '
	modes "$run_dir"/{level,state.json} | grep -v '^644 '
} || true)
[ -z "$bad" ] || fail "modes: $bad"
pass "modes: pin dirs 700, $(ls "$pin_dir" | wc -l) pins 600, lock, socket, runtime and starts 600, level and state 644"

# 1. SIGSTOP: alive, not ticking.
kill -STOP "$DAEMON"
t0=$(now_ms)
sleep_until "$t0" 1500
outcome_is ok || fail "still refused 1.5 s after SIGSTOP (heartbeat timeout 1 s): $(outcome)"
pass "SIGSTOP: admitted $(($(now_ms) - t0)) ms after it"
[ "$(status_json | jq -r '.daemon_health.state, .fail_open' | paste -sd' ')" = "stopped true" ] ||
	fail "status JSON after SIGSTOP: $(status_json | jq -c '{daemon_health, fail_open, fail_open_reason}')"
expect_status "daemon: STOPPED: the daemon (pid $DAEMON) is stopped (SIGSTOP" \
	"FAIL-OPEN: admitting everything: no controller heartbeat for" "timeout 1000 ms): the daemon (pid $DAEMON) is stopped"
# A change sent now times out; the daemon must not apply it once it wakes.
out=$(es mode observe 2>&1) && fail "a stopped daemon took a change: $out"
grep -qF "is stopped (SIGSTOP" <<<"$out" || fail "the refusal does not say the daemon is stopped: $out"
pass "a change while stopped is refused: $out"
kill -CONT "$DAEMON"
wait_for "refusals after SIGCONT" outcome_is refused
wait_for "status running after SIGCONT" jq_is '.daemon_health.state' running
sleep 0.3
[ "$(status_json | jq -r .mode)" = enforce ] || fail "the change refused while stopped was applied later"
pass "SIGCONT: refusing again, status running, the expired change not applied"

# 2. SIGKILL, fail-open.
kill_daemon KILL
t0=$(now_ms)
sleep_until "$t0" 1500
outcome_is ok || fail "still refused 1.5 s after SIGKILL: $(outcome)"
pass "SIGKILL: admitted $(($(now_ms) - t0)) ms after it"
expect_status "daemon: not running: the daemon (pid $DAEMON) exited without stopping cleanly: it was killed or crashed" \
	"FAIL-OPEN: admitting everything" "killed or crashed"

# 3. A crash loop: each life adopts the data plane and refuses (the pin is
# in runtime.json), then dies. The first daemon's start is in the window too.
lives=""
for i in 1 2 3; do
	start_daemon
	wait_for "refusals in life $i" outcome_is refused
	kill_daemon KILL
	lives+=" $DAEMON"
done
t0=$(now_ms)
[ "$(status_json | jq -r '.daemon_health.state')" = crash_looping ] ||
	fail "not seen as a crash loop: $(status_json | jq -c .daemon_health)"
expect_status "daemon: not running: the daemon is crash-looping: 4 starts in the last 60 s without a clean stop"
sleep_until "$t0" 1500
outcome_is ok || fail "still refused 1.5 s after the last crash: $(outcome)"
pass "crash loop (pids$lives): admitted between lives"
start_daemon
expect_status "daemon: CRASH-LOOPING: the daemon is crash-looping: 5 starts" "(pid $DAEMON now)"
kill_daemon TERM
[ ! -e "$run_dir/starts.json" ] || fail "a clean stop left the start history: $(cat "$run_dir/starts.json")"
expect_status "daemon: not running, it stopped cleanly or never started"
outcome_is ok || fail "refused after a clean stop with on_exit = fail_open"
pass "a clean stop clears the crash history and leaves the data plane admitting"

# 4. A config that cannot be read: nothing starts, the data plane stays open.
cp "$work/edgeshed.toml" "$work/good.toml"
printf '[daemon]\ntick = "1ms"\n' >"$work/edgeshed.toml"
set +e
out=$(in_srv "$EDGESHED" --run-dir "$run_dir" run --config "$work/edgeshed.toml" 2>&1)
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "the daemon started with an invalid config"
grep -qF "$work/edgeshed.toml:2:1: daemon.tick" <<<"$out" || fail "the refusal does not name file, line and key: $out"
pass "invalid config refused (exit $rc): $out"
[ "$(status_json | jq -r '.daemon_health.state')" = start_failed ] ||
	fail "status after a failed start: $(status_json | jq -c .daemon_health)"
expect_status "daemon: not running: the daemon's last start" "failed: $work/edgeshed.toml:2:1: daemon.tick"
outcome_is ok || fail "refused after a failed start"
rm "$work/edgeshed.toml"
out=$(in_srv "$EDGESHED" --run-dir "$run_dir" run --config "$work/edgeshed.toml" 2>&1) && fail "started without a config"
expect_status "failed: " "$work/edgeshed.toml"
outcome_is ok || fail "refused after a start without a config"
pass "missing config refused: $out"

# 5. Fail-static: heartbeat_timeout 0 keeps the last policy.
write_config 0 hold
start_daemon
es pin critical >/dev/null
wait_for "refusals with fail-static" outcome_is refused
kill_daemon KILL
t0=$(now_ms)
sleep_until "$t0" 2500
outcome_is refused || fail "fail-static admitted 2.5 s after SIGKILL: $(outcome)"
pass "fail-static: still refused $(($(now_ms) - t0)) ms after SIGKILL"
[ "$(status_json | jq -r '.fail_open')" = false ] || fail "fail-static shown as fail-open"
# The two failed starts of case 4 and this death make a crash loop.
expect_status "heartbeat timeout 0 (fail-static): the last policy published stays in force: the daemon is crash-looping: 3 starts" \
	"last failure"
# Back to the normal cycle for the last case, cleanly.
start_daemon
es unpin >/dev/null
kill_daemon TERM

# 6. Every signal stale: pressure 5x target drives the level to critical,
# then the signal's file goes away.
write_config 1s hold
echo 5 >"$injected"
start_daemon
wait_for "critical from the signal" jq_is '.daemon.level' critical
wait_for "refusals at critical" outcome_is refused
rm "$injected"
wait_for "the signal stale" jq_is '.daemon.all_stale' true
sleep 1
outcome_is refused || fail "all_stale = hold did not hold the level"
expect_status "every signal is stale: holding the last level (all_stale = hold)" "STALE"
pass "all stale, hold: still refusing at $(status_json | jq -r .daemon.level)"
write_config 1s fail_open
kill -HUP "$DAEMON"
wait_for "fail-open on all stale" jq_is '.daemon.fail_open' true
wait_for "admitted on all stale" outcome_is ok
expect_status "FAIL-OPEN: every signal is stale and all_stale = fail_open: admitting everything"
[ "$(status_json | jq -r '.daemon_health.state')" = running ] || fail "the daemon is not running"
pass "all stale, fail_open: admitting"
echo 5 >"$injected"
wait_for "the signal back" jq_is '.daemon.all_stale' false
wait_for "refusals once the signal is back" outcome_is refused
pass "signal back: refusing again"
kill_daemon TERM
pass "fail-safe matrix: stopped, killed, crash-looping, unreadable config, fail-static and all stale"
