#!/usr/bin/env bash
# The operator's tools against a running daemon in the lab: status (text and
# JSON), runtime tuning (mode, action, pin with expiry, class override, ports,
# prefixes, reset), the level file, GET /level and GET /ready, /metrics checked by
# promtool, events from real sheds, top in tmux (q and Ctrl-C), the locks
# against a second daemon, status once the daemon is gone, and saved runtime
# changes that cannot be read.
source "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null || fail "promtool is required (Debian package prometheus)"
command -v tmux >/dev/null || fail "tmux is required"
command -v curl >/dev/null || fail "curl is required"

lab_up
serve 8080
serve 9090

work=$(mktemp -d)
LAB_DIRS+=("$work")
run_dir=$work/run
es() { "$EDGESHED" --run-dir "$run_dir" "$@"; }
TMUX_SESSIONS=()
LAB_HOOKS+=('for s in "${TMUX_SESSIONS[@]}"; do tmux kill-session -t "$s" 2>/dev/null; done')

daemon_config "$work" 8080 observe >/dev/null
cat >>"$work/edgeshed.toml" <<TOML

[metrics]
listen = "127.0.0.1:9477"
TOML

log=$work/daemon.log
lab_daemon "$work/edgeshed.toml" "$log"
# One interface asked for: its object, with the daemon beside it.
status_json() { es status --iface "$SRV_IF" --json --interval 0.2; }
jq_is() { [ "$(status_json | jq -r "$1")" = "$2" ]; }
wait_for "the daemon's first tick" test -s "$run_dir/state.json"
wait_for "the daemon in status" jq_is '.daemon.pid' "$DAEMON"

# status: text and JSON, parsed back.
out=$(es status --iface "$SRV_IF" --interval 0.2 --verbose)
for want in "daemon: running, pid $DAEMON" "level normal" "$SRV_IF: hook xdp-generic, mode observe, action rst, ABI" \
	"injected" "ports: 8080:normal" "admitted/s"; do
	grep -qF "$want" <<<"$out" || fail "status lacks '$want':
$out"
done
s=$(status_json)
[ "$(jq -r '.iface' <<<"$s")" = "$SRV_IF" ] || fail "status json: $s"
[ "$(jq '.rates.classes.normal | has("shed") and has("admitted") and has("would_shed")' <<<"$s")" = true ] ||
	fail "no per-class rates: $s"
[ "$(jq -r '.daemon.signals[0] | "\(.name) \(.target) \(.stale)"' <<<"$s")" = "injected 1 false" ] || fail "signal: $s"
pass "status shows daemon, level, signal and rates"

# Level for the service: a file and GET /level.
[ "$(cat "$run_dir/level")" = normal ] || fail "level file: $(cat "$run_dir/level")"
[ "$(in_srv curl -sf http://127.0.0.1:9477/level)" = normal ] || fail "GET /level"
ready=$(in_srv curl -s -w '%{http_code}' http://127.0.0.1:9477/ready | tr '\n' ' ')
[ "$ready" = "ready 200" ] || fail "GET /ready at normal: $ready"
[ "$(stat -c %a "$run_dir/control.sock")" = 600 ] || fail "control socket mode $(stat -c %a "$run_dir/control.sock")"
pass "level file and GET /level say normal, GET /ready 200; control socket is 0600"

# Runtime tuning: enforce, pin critical for a while; normal is then shed.
es mode enforce | grep -q "mode enforce until removed" || fail "mode enforce"
out=$(es pin critical --for 20s) || fail "pin: $out"
grep -q "level pinned at critical for 20 s" <<<"$out" || fail "pin reply: $out"
wait_for "level critical" jq_is '.daemon.level' critical
s=$(status_json)
[ "$(jq -r '.daemon.level_pinned' <<<"$s")" = true ] || fail "not shown as pinned: $s"
[ "$(jq -r '.mode' <<<"$s")" = enforce ] || fail "mode not in the data plane: $s"
left=$(jq '.daemon.runtime_changes.level.left_s' <<<"$s")
awk -v l="$left" 'BEGIN { exit !(l > 10 && l <= 20) }' || fail "pin time left: $left"
wait_for "level file critical" grep -qx critical "$run_dir/level"
[ "$(in_srv curl -sf http://127.0.0.1:9477/level)" = critical ] || fail "GET /level after pin"
ready=$(in_srv curl -s -w '%{http_code}' http://127.0.0.1:9477/ready | tr '\n' ' ')
[ "$ready" = "not ready: critical 503" ] || fail "GET /ready after pin: $ready"
grep -q "operator: level pinned at critical for 20 s" "$log" || fail "pin not logged"
pass "pinned critical (${left}s left), visible in status, level file, /level, /ready and the log"

# Events from real sheds: start the reader, then connect.
es events --iface "$SRV_IF" --json --count 3 --duration 15s >"$work/events" 2>"$work/events.err" &
EVENTS=$!
LAB_PIDS+=("$EVENTS")
sleep 0.5
for i in 1 2 3 4; do expect_connect refused $SRV_V4 8080; done
wait "$EVENTS" || fail "events exit $?: $(cat "$work/events.err")"
[ "$(wc -l <"$work/events")" = 3 ] || fail "events: $(cat "$work/events")"
jq -e "select(.source == \"$CLI_V4\" and .port == 8080 and .class == \"normal\" and .verdict == \"shed\"
	and .reason == \"fraction\" and .outcome == \"rst\")" "$work/events" >/dev/null ||
	fail "events do not describe the sheds: $(cat "$work/events")"
pass "events: $(head -1 "$work/events")"

# Metrics: scraped over HTTP, checked by promtool, values as the data plane says.
# The endpoint serves what the last tick read, so the fourth shed shows from
# the tick after it.
metrics_shed() {
	in_srv curl -sf http://127.0.0.1:9477/metrics >"$work/metrics" || return 1
	awk -v i="$SRV_IF" '$1 == "edgeshed_decisions_total{iface=\"" i "\",protocol=\"tcp\",class=\"normal\",verdict=\"shed\",reason=\"fraction\"}" { print $2 }' "$work/metrics"
}
four_sheds_in_metrics() { [ "$(metrics_shed)" -ge 4 ] 2>/dev/null; }
wait_for "the 4 sheds in GET /metrics" four_sheds_in_metrics
shed=$(metrics_shed) || fail "GET /metrics"
promtool check metrics <"$work/metrics" 2>&1 | tee "$work/promtool" >/dev/null
[ "${PIPESTATUS[0]}" = 0 ] && [ ! -s "$work/promtool" ] || fail "promtool: $(cat "$work/promtool")"
grep -q '^edgeshed_pressure_level 3$' "$work/metrics" || fail "pressure level metric"
grep -q '^edgeshed_level_pinned 1$' "$work/metrics" || fail "pinned metric"
grep -q '^edgeshed_tick_seconds_count [1-9]' "$work/metrics" || fail "tick histogram"
pass "/metrics passes promtool: $(grep -c '^# TYPE' "$work/metrics") families, $shed normal sheds"

# top in tmux: a frame with sparklines; q quits, Ctrl-C too, terminal restored.
# A bounded trickle of refused connections, so the capture shows shed rates.
(for i in $(seq 150); do in_cli "$TCP_TOOL" connect $SRV_V4 8080 300 >/dev/null || true; sleep 0.05; done) &
LAB_PIDS+=($!)
for key in q C-c; do
	session=es-top-$$-$key
	TMUX_SESSIONS+=("$session")
	tmux new-session -d -s "$session" -x 170 -y 45 \
		"'$EDGESHED' --run-dir '$run_dir' top --interval 0.3; echo top-exited-\$?; sleep 30"
	wait_for "a top frame" sh -c "tmux capture-pane -p -t '$session' | grep -q 'shed/s normal'"
	sleep 1.2 # a few frames for the sparklines
	tmux capture-pane -p -t "$session" >"$work/top-$key.txt"
	tmux send-keys -t "$session" "$key"
	wait_for "top to exit on $key" sh -c "tmux capture-pane -p -t '$session' | grep -q 'top-exited-0'"
	# Back on the normal screen: the frame is gone, the exit line is there.
	tmux capture-pane -p -t "$session" | grep -q 'edgeshed top' && fail "terminal not restored after $key"
	tmux kill-session -t "$session"
done
for want in "edgeshed top" "last minute" "pressure" "shed/s normal" "level critical (pinned)" "$SRV_IF: hook" \
	"operator changes: mode enforce (until removed); level pinned critical ("; do
	grep -qF "$want" "$work/top-q.txt" || fail "top frame lacks '$want':
$(cat "$work/top-q.txt")"
done
echo "--- edgeshed status, while the trickle is shed"
es status --iface "$SRV_IF" --interval 1
echo "--- edgeshed top (tmux capture-pane)"
sed 's/[[:space:]]*$//' "$work/top-q.txt" | grep -v '^$'
pass "top draws, and exits on q and on Ctrl-C with the terminal restored"

# A source prefix made critical is admitted at level critical; ports edit.
es prefix add "$CLI_V4/32" --class critical | grep -q "classed critical" || fail "prefix add"
sleep 0.3
expect_connect ok $SRV_V4 8080
es prefix remove "$CLI_V4/32" >/dev/null || fail "prefix remove"
es port add 9090 --class background | grep -q "9090 protected as background" || fail "port add"
wait_for "9090 protected" jq_is '[.ports[].port] | index(9090) != null' true
expect_connect refused $SRV_V4 9090
es port remove 9090 >/dev/null || fail "port remove"
wait_for "9090 unprotected" jq_is '[.ports[].port] | index(9090) == null' true
expect_connect ok $SRV_V4 9090
pass "prefix and port edits apply at runtime"

# Class override over the law, then unpin and reset.
es override normal --admit-fraction 1 --for 1m | grep -q "class normal overridden" || fail "override"
sleep 0.3
expect_connect ok $SRV_V4 8080
es override normal --clear >/dev/null || fail "override --clear"
es unpin | grep -q "level pin back to the config" || fail "unpin"
es action drop | grep -q "action drop" || fail "action"
wait_for "action drop in the data plane" jq_is '.action' drop
es reset | grep -q "changes back to the config" || fail "reset"
wait_for "mode back to observe" jq_is '.mode' observe
wait_for "action back to rst" jq_is '.action' rst
# Idempotent, as a runbook needs (#52 row 8): exit 0, and it says so.
out=$(es reset 2>&1) || fail "reset with nothing to reset failed: $out"
grep -q "no runtime changes to reset: already the config's" <<<"$out" || fail "reset message: $out"
pass "override, unpin, action and reset apply; an empty reset says so and exits 0 ($out)"

# A pin expires by itself.
es pin high --for 1s >/dev/null
wait_for "level high" jq_is '.daemon.level' high
wait_for "pin expiry" grep -q "operator: level pin high expired" "$log"
pass "pin expired by itself: $(grep -m1 'pin high expired' "$log" | cut -c1-100)"

# Locks: a second daemon is refused, on the same run dir or the same interface.
out=$(in_srv "$EDGESHED" run --config "$work/edgeshed.toml" 2>&1) && fail "second daemon started"
grep -q "another edgeshed daemon is running with run directory" <<<"$out" || fail "run dir lock: $out"
sed "s|^run_dir = .*|run_dir = \"$work/run2\"|" "$work/edgeshed.toml" >"$work/other.toml"
out=$(in_srv "$EDGESHED" run --config "$work/other.toml" 2>&1) && fail "second daemon on the interface started"
grep -q "another edgeshed daemon is running on $SRV_IF" <<<"$out" || fail "interface lock: $out"
out=$("$EDGESHED" detach --iface "$SRV_IF" 2>&1) && fail "detach under a running daemon"
grep -q "a running daemon manages $SRV_IF" <<<"$out" || fail "detach message: $out"
# An attach would write its own mode (observe by default; off here, so that
# a change shows) under the daemon.
mode_before=$(es status --iface "$SRV_IF" --json --interval 0 | jq -r '.mode')
[ "$mode_before" != off ] || fail "the daemon's mode is off already"
out=$(in_srv "$EDGESHED" attach --iface "$SRV_IF" --port 8080 --mode off 2>&1) && fail "attach under a running daemon"
grep -q "a running daemon manages $SRV_IF" <<<"$out" || fail "attach message: $out"
[ "$(es status --iface "$SRV_IF" --json --interval 0 | jq -r '.mode')" = "$mode_before" ] ||
	fail "the refused attach changed the mode from $mode_before"
pass "second daemon, detach and attach refused while one runs (mode still $mode_before)"

# Without the daemon: status says so; mode works directly on the maps.
kill -TERM "$DAEMON"
wait "$DAEMON" || fail "daemon exit $?"
[ ! -e "$run_dir/level" ] && [ ! -e "$run_dir/state.json" ] && [ ! -e "$run_dir/control.sock" ] ||
	fail "files left in the run dir: $(ls "$run_dir")"
out=$(es status --iface "$SRV_IF" --interval 0)
grep -q "daemon: not running" <<<"$out" || fail "status without daemon: $out"
es mode off --iface "$SRV_IF" | grep -q "written to the data plane directly" || fail "mode off without daemon"
[ "$(es status --iface "$SRV_IF" --json --interval 0 | jq -r '.mode')" = off ] || fail "mode off not applied"
out=$(es pin high 2>&1) && fail "pin without daemon succeeded"
grep -q "needs the daemon" <<<"$out" || fail "pin message: $out"
pass "without the daemon: status says so, mode off works, pin explains why not"

# Saved runtime changes that cannot be read: the daemon starts without them
# and keeps the file, renamed, for the operator.
echo '{"mode": ' >"$run_dir/runtime.json"
: >"$log"
lab_daemon "$work/edgeshed.toml" "$log"
wait_for "the restarted daemon's first tick" test -s "$run_dir/state.json"
grep -qF "runtime changes in $run_dir/runtime.json ignored (not JSON); moved to $run_dir/runtime.json.invalid" \
	"$log" || fail "no word of the unreadable runtime changes: $(cat "$log")"
[ -f "$run_dir/runtime.json.invalid" ] || fail "the unreadable runtime changes were not kept: $(ls "$run_dir")"
kill -TERM "$DAEMON"
wait "$DAEMON" || fail "daemon exit $?"
pass "unreadable runtime changes: started without them, kept as runtime.json.invalid"
