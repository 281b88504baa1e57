#!/usr/bin/env bash
# The operator's surface (issue #40): bad command lines and bad configs, as
# a table. Each row is an exit code (2 usage, 1 refused, 0 done), the cause
# the message must name, and the command line; after each row nothing is
# attached (no pin directory, no XDP program, no TC filter on the lab's
# interface) and nothing is written (the run directory named holds at most
# the start record of a refused `run` and the lock it took to record it, the run directory a config names is
# never made). Then the same with a daemon running, and as a user without
# privileges (uid 64999).
source "$(dirname "$0")/lib.sh"

lab_up
work=$(mktemp -d)
LAB_DIRS+=("$work")
run=$work/run               # the run directory every command is given
named_in_config=$work/cfgrun # the one the configs name: --run-dir must win
nobody=64999

# --- configs -----------------------------------------------------------------
good=$work/good.toml
cat >"$good" <<TOML
[daemon]
run_dir = "$named_in_config"
[[interface]]
name = "$SRV_IF"
hook = "xdp-generic"
[[port]]
port = 8080
TOML
printf '' >"$work/empty.toml"
# Protects nothing: an interface and no [[port]].
sed '/^\[\[port\]\]/,$d' "$good" >"$work/noport.toml"
# An interface this namespace does not have, on line 4.
sed "s/^name = \"$SRV_IF\"/name = \"es-nosuch0\"/" "$good" >"$work/noif.toml"
{ cat "$good"; echo 'latency_objective = "-1s"'; } >"$work/negative.toml"
{ cat "$good"; printf '[shedding]\nfraction = 0.5\n'; } >"$work/section.toml"
grep -q '^\[\[port\]\]' "$work/noport.toml" && fail "noport.toml has a port"
grep -q es-nosuch0 "$work/noif.toml" || fail "noif.toml names no missing interface"

# The default run directory: a refused start given --run-dir must not make it.
default_run_dir_existed=false
[ -e /run/edgeshed ] && default_run_dir_existed=true

# --- checks ------------------------------------------------------------------
# Each listing is read whole before it is searched: `cmd | grep -q` under
# pipefail fails when cmd dies of SIGPIPE after grep's first match.
attached() {
	local link filters
	link=$(in_srv ip -d link show dev "$SRV_IF")
	filters=$(in_srv tc filter show dev "$SRV_IF" ingress 2>/dev/null)
	[ -e "/sys/fs/bpf/edgeshed/$SRV_IF" ] || grep -q 'prog/xdp' <<<"$link" || [ -n "$filters" ]
}
# Nothing attached, nothing written but a start record in $run.
nothing_done() {
	local row=$1 f
	! attached || fail "$row: left the data plane attached: $(ls /sys/fs/bpf/edgeshed 2>&1)"
	[ ! -e "$named_in_config" ] || fail "$row: wrote $named_in_config, which --run-dir overrides"
	if [ -d "$run" ]; then
		for f in "$run"/* "$run"/.[!.]*; do
			[ -e "$f" ] || continue
			# A refused start is recorded by a process that took the lock (#52).
			case $(basename "$f") in starts.json | daemon.lock) ;; *) fail "$row: wrote $f" ;; esac
		done
	fi
	# The default run directory holds no trace of this test's configs.
	! grep -qs "$work" /run/edgeshed/starts.json || fail "$row: wrote /run/edgeshed/starts.json"
	$default_run_dir_existed || [ ! -e /run/edgeshed ] || fail "$row: made /run/edgeshed"
}

rows=0
after_row=nothing_done
# expect CODE PATTERN [as=nobody|srv] -- ARG...: the command exits CODE, its
# output matches PATTERN (grep -E), and then $after_row holds.
expect() {
	local code=$1 pattern=$2 as=root out rc=0 row
	shift 2
	if [ "$1" = as=nobody ] || [ "$1" = as=srv ]; then as=${1#as=}; shift; fi
	[ "$1" = -- ] && shift
	row="edgeshed $*"
	case $1 in
	completion-probe)
		shift
		out=$(cd "$work" && bash -c 'source <("$0" completion bash); COMP_WORDS=(edgeshed "$@")
			COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _edgeshed; printf "%s\n" "${COMPREPLY[*]##*/}"' \
			"$EDGESHED" "$@") || rc=$?
		as=bash
		;;
	esac
	[ "$as" = bash ] || case $as in
	nobody) out=$(setpriv --reuid=$nobody --regid=$nobody --clear-groups "$EDGESHED" "$@" 2>&1 </dev/null) || rc=$? ;;
	srv) out=$(in_srv "$EDGESHED" "$@" 2>&1 </dev/null) || rc=$? ;;
	*) out=$("$EDGESHED" "$@" 2>&1 </dev/null) || rc=$? ;;
	esac
	[ "$rc" = "$code" ] || fail "$row: exit $rc, not $code: $out"
	grep -qE -- "$pattern" <<<"$out" || fail "$row: the message does not name /$pattern/: $out"
	"$after_row" "$row"
	rows=$((rows + 1))
	pass "[$as] $row -> $rc: $(head -c 160 <<<"$out" | head -1)"
}

# --- without a daemon --------------------------------------------------------
mkdir -p "$run"
table_without_daemon() {
	# --iface naming nothing is an error, never "every interface".
	expect 1 'nothing is attached on nosuch0' -- mode enforce --iface nosuch0 --run-dir "$run"
	expect 1 'nothing is attached on nonexistent' -- status --iface nonexistent --run-dir "$run"
	expect 1 'nothing is attached on nonexistent' -- events --iface nonexistent -n 1 --run-dir "$run"
	# Protecting nothing is said on purpose or refused.
	expect 2 'nothing to protect on .*give --port' as=srv -- attach --iface "$SRV_IF" --hook xdp-generic
	expect 2 "port '0': expected 1\.\.65535" as=srv -- attach --iface "$SRV_IF" --port 0
	expect 2 "port '0': expected a port number in 1\.\.65535" -- port add 0 --run-dir "$run"
	expect 2 'excludes' as=srv -- attach --iface "$SRV_IF" --no-port --port 80
	# Checked at the edge: usage errors exit 2, before anything is read.
	expect 2 "unknown command 'stauts'; did you mean 'status'\?" -- stauts
	expect 2 "unknown command 'ad'; did you mean 'add'\?" -- port ad 80
	expect 2 "count '-1': expected a number in 1\.\." -- events -n -1
	expect 2 "reset 'port:70000': the port must be in 1\.\.65535" -- reset port:70000 --run-dir "$run"
	expect 2 "cannot reset 'bogus': give all, mode" -- reset bogus --run-dir "$run"
	expect 2 '--burst requires --rate' -- policy --iface "$SRV_IF" --class normal --burst 10
	expect 2 '--burst requires --rate' -- override normal --burst 10 --run-dir "$run"
	# Configs: refused with file (and line), before the kernel or the run
	# directory the config names; --run-dir after the subcommand is taken.
	expect 1 'empty\.toml: no \[\[interface\]\] configured' as=srv -- run --config "$work/empty.toml" --run-dir "$run"
	expect 1 'noport\.toml: no \[\[port\]\] configured: nothing would be protected; add' as=srv -- \
		run --config "$work/noport.toml" --run-dir "$run"
	expect 1 'noif\.toml:4:8: interface\[0\]\.name = "es-nosuch0": no such interface' as=srv -- \
		run --run-dir "$run" --config "$work/noif.toml"
	expect 1 'negative\.toml:[0-9]+:[0-9]+: port\[0\]\.latency_objective = "-1s": negative durations are not allowed' \
		as=srv -- run --config "$work/negative.toml" --run-dir "$run"
	expect 1 'section\.toml:[0-9]+:[0-9]+: unknown section "shedding" \(the sections are agent, critical, daemon' \
		as=srv -- --run-dir "$run" run --config "$work/section.toml"
	# --run-dir is in every subcommand's help; --version says what runs.
	expect 0 '--run-dir' -- run --help
	expect 0 '--run-dir' -- port add --help
	expect 0 'data plane ABI [0-9]+' -- --version
	# Completion: reset's targets, files after run --config, nothing after -n.
	expect 0 '^class:critical class:normal class:background$' -- completion-probe reset cl
	expect 0 "^$(basename "$good")\$" -- completion-probe run --config "$work/go"
	expect 0 '^$' -- completion-probe events -n ""
}
table_without_daemon
# The refused runs recorded their cause where --run-dir said.
grep -q 'no \[\[port\]\] configured' "$run/starts.json" || fail "the refused start is not in $run/starts.json"
rm -rf "$run" && mkdir -p "$run"

# Permission first, also without a daemon; mode and pin said "Permission
# denied" but not what to do.
for cmd in "status" "top --iterations 1" "events -n 1" "mode off" "pin high"; do
	# shellcheck disable=SC2086 # a command line
	expect 1 "needs root: .*run it as root" as=nobody -- $cmd --run-dir "$run"
done

# --- with a daemon -----------------------------------------------------------
log=$work/daemon.log
# --run-dir after the subcommand, over the config's daemon.run_dir.
# nsenter itself, not in_srv in a subshell, so that SIGTERM reaches the daemon.
nsenter --net="/run/netns/$SRV_NS" "$EDGESHED" run --config "$good" --run-dir "$run" >"$log" 2>&1 &
DAEMON=$!
LAB_PIDS+=("$DAEMON")
wait_for "daemon running" grep -q "running:" "$log"
# The check every row above relied on sees a data plane that is there.
attached || fail "attached() does not see the daemon's data plane on $SRV_IF"
[ -S "$run/control.sock" ] || fail "no control socket in the --run-dir $run: $(ls "$run")"
[ ! -e "$named_in_config" ] || fail "the daemon wrote $named_in_config although --run-dir named $run"
pass "the daemon's run directory is the --run-dir given after the subcommand, not daemon.run_dir"

es_mode() { "$EDGESHED" status --iface "$SRV_IF" --json --interval 0 --run-dir "$run" | jq -r .mode; }
mode_is() { [ "$(es_mode)" = "$1" ]; }
wait_for "the daemon's mode in the data plane" mode_is observe
unchanged() {
	[ "$(es_mode)" = observe ] || fail "$1: mode is $(es_mode), not observe"
	kill -0 "$DAEMON" || fail "$1: the daemon died"
}
after_row=unchanged
# --iface under a daemon: applied to that interface through the daemon, or
# refused with the reason; never "every interface".
expect 1 '--iface nosuch0: the running daemon does not manage nosuch0' -- mode enforce --iface nosuch0 --run-dir "$run"
expect 1 'nothing is attached on nonexistent' -- status --iface nonexistent --run-dir "$run"
expect 2 "reset 'port:70000': the port must be in 1\.\.65535" -- reset port:70000 --run-dir "$run"
expect 2 "cannot reset 'bogus'" -- reset bogus --run-dir "$run"
expect 2 "count '-1': expected a number in 1\.\." -- events -n -1 --run-dir "$run"
expect 2 '--burst requires --rate' -- policy --iface "$SRV_IF" --class normal --burst 10
for cmd in "status" "top --iterations 1" "events -n 1"; do
	# shellcheck disable=SC2086 # a command line
	expect 1 "needs root: .*run it as root" as=nobody -- $cmd --run-dir "$run"
done
out=$(setpriv --reuid=$nobody --regid=$nobody --clear-groups "$EDGESHED" status --run-dir "$run" 2>&1) || true
! grep -q 'no interface is attached' <<<"$out" || fail "non-root status blames the interface: $out"
# The clamp is said, naming the floor.
expect 0 'warning: critical keeps its floor: admit fraction 0 is raised to 1 \(critical\.floor_fraction\)' -- \
	override critical --admit-fraction 0 --run-dir "$run"
expect 0 'back to the config' -- reset class:critical --run-dir "$run"
# The one interface the daemon manages, named: applied through the daemon.
out=$("$EDGESHED" mode enforce --iface "$SRV_IF" --run-dir "$run" 2>&1) || fail "mode enforce --iface $SRV_IF: $out"
grep -q "daemon's next tick" <<<"$out" || fail "mode --iface $SRV_IF did not go through the daemon: $out"
wait_for "mode enforce" mode_is enforce
"$EDGESHED" reset mode --run-dir "$run" >/dev/null
wait_for "mode back to observe" mode_is observe
pass "mode enforce --iface $SRV_IF went through the daemon and was reset"

kill -TERM "$DAEMON"
wait "$DAEMON" || fail "the daemon's exit status on SIGTERM: $?"
in_srv "$EDGESHED" detach --iface "$SRV_IF" >/dev/null
! attached || fail "detach left the data plane"
pass "$rows rows: each exit code and cause as expected; nothing attached or written by a refusal"
