#!/usr/bin/env bash
# The operator's first hour, second round (issue #52): one row per problem
# of the issue's table, as the operator-surface test is. Each row is an exit
# code, the line of the message that matters (grep -E; a leading '!' means
# it must not appear) and the command line. Rows that need a state first
# (something attached, a daemon) come after what makes it.
source "$(dirname "$0")/lib.sh"
README="$(cd "$(dirname "$0")/../.." && pwd)/README.md"

lab_up
work=$(mktemp -d)
LAB_DIRS+=("$work")
run=$work/run
mkdir -p "$run"

good=$work/good.toml
cat >"$good" <<TOML
[daemon]
tick = "100ms"
on_exit = "detach"
[[interface]]
name = "$SRV_IF"
[[port]]
port = 8080
TOML
# The same, naming native XDP on the veth: check warns.
sed 's/^name = .*/&\nhook = "xdp"/' "$good" >"$work/native.toml"
printf '[[interface]]\nname = "%s"\n[[port]]\nport = 0\n' "$SRV_IF" >"$work/bad.toml"

rows=0
# expect CODE PATTERN [as=srv] -- ARG...
expect() {
	local code=$1 pattern=$2 as=root out rc=0
	shift 2
	if [ "$1" = as=srv ]; then as=srv; shift; fi
	[ "$1" = -- ] && shift
	case $as in
	srv) out=$(in_srv "$EDGESHED" "$@" 2>&1 </dev/null) || rc=$? ;;
	*) out=$("$EDGESHED" "$@" 2>&1 </dev/null) || rc=$? ;;
	esac
	[ "$rc" = "$code" ] || fail "edgeshed $*: exit $rc, not $code: $out"
	if [ "${pattern:0:1}" = '!' ]; then
		! grep -qE -- "${pattern:1}" <<<"$out" || fail "edgeshed $*: says /${pattern:1}/: $out"
	else
		grep -qE -- "$pattern" <<<"$out" || fail "edgeshed $*: the message does not name /$pattern/: $out"
	fi
	rows=$((rows + 1))
	pass "[$as] edgeshed $* -> $rc: $(grep -m1 -E -- "${pattern#!}" <<<"$out" | head -c 150 || head -1 <<<"$out")"
	LAST_OUT=$out
}
# Every line of the last output within 80 columns (UTF-8 blocks count one).
fits_80() {
	local line LC_ALL=C.UTF-8
	while IFS= read -r line; do
		[ "${#line}" -le 80 ] || fail "$1: a line of ${#line} columns: $line"
	done <<<"$LAST_OUT"
}

# --- nothing attached ---------------------------------------------------------
# 11: JSON for monitoring, whatever is attached.
expect 0 '"interfaces": \[\]' -- status --json --run-dir "$run"
jq -e '.interfaces == []' <<<"$LAST_OUT" >/dev/null || fail "status --json is not JSON: $LAST_OUT"
# 16: every default shown.
expect 0 'heartbeat-timeout-ms.*1000' -- attach --help
# 12: the README agrees with itself on another XDP program.
grep -q 'refused, never replaced; use `tc`' "$README" && fail "README still refuses a neighbour XDP program"
pass "README: another XDP program is chained in the same mode, refused in the other"
# 2: check a config: prints the plan, touches nothing.
expect 0 "would start" as=srv -- check --config "$good" --run-dir "$run"
grep -q "interface $SRV_IF: hook xdp-generic" <<<"$LAST_OUT" || fail "check does not say the hook: $LAST_OUT"
expect 0 "WARNING: $SRV_IF is a veth: native XDP's RSTs" as=srv -- check --config "$work/native.toml" --run-dir "$run"
expect 1 "would refuse this config: .*bad\.toml:4:1: port\[0\]\.port = 0: must be an integer" as=srv -- check --config "$work/bad.toml" --run-dir "$run"
[ -z "$(ls -A "$run")" ] || fail "check wrote in the run directory: $(ls -A "$run")"
[ ! -e "/sys/fs/bpf/edgeshed/$SRV_IF" ] || fail "check made pins"

# --- attached by hand, no daemon ---------------------------------------------
# 1: on a veth, the hook that delivers RSTs, said.
expect 0 "is a veth: hook xdp-generic" as=srv -- attach --iface "$SRV_IF" --port 8080
# 3: settings that a failing-open data plane ignores are warned about.
expect 0 "mode enforce on $SRV_IF has no effect yet: .*fails open.*--heartbeat-timeout-ms 0" -- \
	mode enforce --iface "$SRV_IF" --run-dir "$run"
expect 0 "policy of normal on $SRV_IF has no effect yet" -- policy --iface "$SRV_IF" --class normal --shed-fraction 1
# 13: one style of message, naming the option; lists as attach takes them.
expect 2 "--shed-fraction '1\.5': expected a number in 0\.\.1 " -- policy --iface "$SRV_IF" --class normal --shed-fraction 1.5
expect 2 "port 'http': expected a port number in 1\.\.65535" -- port add http --run-dir "$run"
expect 0 "port 80,443 protected as normal" -- port add 80,443 --iface "$SRV_IF" --run-dir "$run"
# 9: one syntax for durations.
expect 0 "protects" -- status --iface "$SRV_IF" --interval 200ms --run-dir "$run"
expect 2 "duration '10': expected a number and a unit" -- mode enforce --for 10 --run-dir "$run"
# 14: a re-attach that replaces ports says so.
expect 0 "ports 80, 443, 8080 -> 80" as=srv -- attach --iface "$SRV_IF" --port 80 --mode enforce --heartbeat-timeout-ms 0
# 10: status and top in 80 columns, with shed and its reason.
expect 0 "class +policy +in service +admitted/s +shed/s +why" -- status --iface "$SRV_IF" --run-dir "$run"
fits_80 status
expect 0 "shed/s normal" -- top --iterations 2 --interval 100ms --run-dir "$run"
fits_80 top
expect 0 "passed without decision" -- status --iface "$SRV_IF" --verbose --interval 0 --run-dir "$run"
expect 0 "detached" as=srv -- detach --iface "$SRV_IF"

# --- a daemon started with ip netns exec -------------------------------------
# 5: its pins are in its own mount namespace; status says where.
ip netns exec "$SRV_NS" "$EDGESHED" run --config "$good" --run-dir "$work/run-netns" >"$work/netns.log" 2>&1 &
NETNS_DAEMON=$!
LAB_PIDS+=("$NETNS_DAEMON")
wait_for "the ip-netns-exec daemon" grep -q "running:" "$work/netns.log"
expect 1 "runs in another mount namespace.*nsenter -t $NETNS_DAEMON -m" -- status --run-dir "$work/run-netns"
kill -TERM "$NETNS_DAEMON"
wait "$NETNS_DAEMON" || fail "the ip-netns-exec daemon's exit: $?"

# --- the daemon --------------------------------------------------------------
# 6: status right after `run &` says it is starting, then shows it.
nsenter --net="/run/netns/$SRV_NS" "$EDGESHED" run --config "$good" --run-dir "$run" >"$work/daemon.log" 2>&1 &
DAEMON=$!
LAB_PIDS+=("$DAEMON")
expect 0 "is starting: waiting up to 5 s" -- status --run-dir "$run"
grep -q "^$SRV_IF: hook xdp-generic" <<<"$LAST_OUT" || fail "status after the wait shows no interface: $LAST_OUT"
wait_for "daemon running" grep -q "running:" "$work/daemon.log"
# 2: a bad config beside a healthy daemon is no start of it.
expect 1 "not recorded as a start" as=srv -- run --config "$work/bad.toml" --run-dir "$run"
expect 1 "not recorded as a start" as=srv -- run --config "$work/bad.toml" --run-dir "$run"
expect 1 "not recorded as a start" as=srv -- run --config "$work/bad.toml" --run-dir "$run"
expect 0 '!CRASH-LOOPING|crash_looping' -- status --run-dir "$run" --interval 0
[ "$(jq length "$run/starts.json")" = 1 ] || fail "starts recorded: $(cat "$run/starts.json")"
# 8: undoing nothing is done, as a runbook needs.
expect 0 "no runtime changes to reset: already the config's" -- reset --run-dir "$run"
expect 0 "no runtime mode to reset" -- reset mode --run-dir "$run"
expect 0 "no runtime override of class normal to reset" -- override normal --clear --run-dir "$run"
expect 0 "port 9999 unprotected" -- port remove 9999 --run-dir "$run"
# 15: effective values, and an add undone by a remove leaves nothing.
expect 0 "raised to 1" -- override critical --admit-fraction 0.1 --run-dir "$run"
expect 0 "port 9090 protected" -- port add 9090 --run-dir "$run"
expect 0 "port 9090 unprotected" -- port remove 9090 --run-dir "$run"
# The daemon applies each change on its own tick: wait for the tick that has both.
changes_applied() { jq -e '.runtime_changes | tostring | test("admit_fraction") and (test("9090") | not)' "$run/state.json" >/dev/null; }
wait_for "the changes in the state file" changes_applied
expect 0 "class critical admit_fraction=1 " -- status --verbose --interval 0 --run-dir "$run"
grep -q "port 9090" <<<"$LAST_OUT" && fail "an add undone is still listed: $LAST_OUT"
expect 0 "back to the config" -- reset --run-dir "$run"
# 7: two events readers are told of each other; --from-now skips the old.
"$EDGESHED" events --iface "$SRV_IF" --duration 4s --run-dir "$run" >"$work/events1" 2>&1 &
FIRST_READER=$!
LAB_PIDS+=("$FIRST_READER")
sleep 0.5
expect 0 "another \`edgeshed events\` \(pid $FIRST_READER\)" -- events --iface "$SRV_IF" --from-now --duration 2s --run-dir "$run"
wait "$FIRST_READER" || fail "the first events reader: $?"
grep -q "another \`edgeshed events\`" "$work/events1" || fail "the first reader was not told: $(cat "$work/events1")"
pass "both events readers were told of each other"
# 4: the normal case (XDP, no qdisc) logs no libbpf warning.
kill -TERM "$DAEMON"
wait "$DAEMON" || fail "the daemon's exit: $?"
! grep -q "Parent Qdisc" "$work/daemon.log" || fail "libbpf's qdisc warning: $(grep -m1 'Parent Qdisc' "$work/daemon.log")"
pass "$rows rows and the daemon's log: no qdisc warning"
