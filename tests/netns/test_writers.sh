#!/usr/bin/env bash
# One writer at a time on an interface's maps (issue #38, point 6). Each
# command that writes them reads, changes a field and writes back; two such
# commands at once must not write back each other's stale fields. Two
# writers run in a loop, without a daemon:
#  - one adds source prefixes one by one (each counted in the config's
#    src4_prefixes, which the classifier reads before the trie);
#  - one flips the mode and the action, and reads back after each write
#    that what it wrote stands.
# In the end the count is the number of prefixes and the last mode and
# action stand. Then, with a daemon running: `policy`, which would publish
# into the slot the daemon publishes into, is refused, and a daemon that
# starts while a writer holds the lock waits for it instead of failing.
source "$(dirname "$0")/lib.sh"

ROUNDS=${WRITERS_ROUNDS:-60}
PORT=8080
lab_up
pin=/sys/fs/bpf/edgeshed/$SRV_IF
in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook xdp-generic --port $PORT --mode observe >/dev/null

config() { bpftool -j map dump pinned "$pin/es_config" | jq -r ".[0].formatted.value.$1"; }
[ "$(config src4_prefixes)" = 0 ] || fail "config not readable: $(bpftool -j map dump pinned "$pin/es_config")"

es() { in_srv "$EDGESHED" "$@" --iface "$SRV_IF" >/dev/null; }
work=$(mktemp -d)
LAB_DIRS+=("$work")
now_ns() { date +%s%N; }

# Every command that writes the maps takes the lock: with the pin directory
# locked (flock, as a writer takes it), each one ends only after the holder
# let go, and then succeeds. An order of events, not a timing: a command
# that skipped the lock ends before.
waits_for_lock() {
	flock "$pin" bash -c "sleep 0.3; date +%s%N >'$work/released'" &
	local holder=$! ended
	sleep 0.1
	es "$@" || fail "$*: failed after the lock was released"
	ended=$(now_ns)
	wait "$holder"
	[ "$ended" -gt "$(cat "$work/released")" ] || fail "$*: wrote while another writer held the lock"
}
waits_for_lock mode enforce
waits_for_lock action drop
waits_for_lock port add 9090 --class background
waits_for_lock port remove 9090
waits_for_lock prefix add 198.51.100.0/24 --class critical
waits_for_lock prefix remove 198.51.100.0/24
waits_for_lock policy --class normal --shed-fraction 0.5
waits_for_lock attach --hook xdp-generic --port $PORT --mode observe
pass "mode, action, port, prefix, policy and attach each wait for another writer's lock"

# Bounded: ROUNDS commands each, and each command fails rather than hang
# (the lock's wait is 2 s).
(
	for i in $(seq 1 "$ROUNDS"); do
		es prefix add "192.0.2.$i/32" --class critical || exit 1
	done
) >"$work/prefixes.log" 2>&1 &
prefixes=$!
LAB_PIDS+=("$prefixes")
(
	lost=0
	for i in $(seq 1 "$ROUNDS"); do
		if ((i % 2)); then mode=enforce action=drop; else mode=observe action=rst; fi
		es mode $mode || exit 1
		es action $action || exit 1
		# The mode's numbers: off 0, observe 1, enforce 2; action: drop 0, rst 1.
		want_mode=$([ $mode = enforce ] && echo 2 || echo 1)
		want_action=$([ $action = rst ] && echo 1 || echo 0)
		[ "$(config mode)" = "$want_mode" ] || lost=$((lost + 1))
		[ "$(config action)" = "$want_action" ] || lost=$((lost + 1))
	done
	echo "lost $lost"
) >"$work/flips.log" 2>&1 &
flips=$!
LAB_PIDS+=("$flips")
wait "$prefixes" || fail "the prefix writer failed: $(tail -n 3 "$work/prefixes.log")"
wait "$flips" || fail "the mode and action writer failed: $(tail -n 3 "$work/flips.log")"
lost=$(grep -o 'lost [0-9]*' "$work/flips.log" | cut -d' ' -f2)
count=$(config src4_prefixes)
trie=$(bpftool -j map dump pinned "$pin/es_src4" | jq length)
echo "two writers, $ROUNDS rounds each: src4_prefixes $count, trie $trie entries, mode and action writes lost $lost"
[ "$lost" = 0 ] || fail "$lost mode or action writes were undone by the other writer"
[ "$trie" = "$ROUNDS" ] || fail "the trie holds $trie prefixes, not $ROUNDS"
[ "$count" = "$ROUNDS" ] || fail "src4_prefixes is $count for $ROUNDS prefixes: a write-back lost some"
[ "$(config mode)" = 1 ] && [ "$(config action)" = 1 ] || fail "the last mode and action do not stand"
pass "two writers in a loop: no field lost (src4_prefixes $count, last mode and action stand)"

waits_for_lock detach
[ ! -e "$pin" ] || fail "detach left $pin"
pass "detach waits for another writer's lock too"
in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook xdp-generic --port $PORT --mode observe >/dev/null

# A daemon that starts while a writer holds the lock waits for it.
toml=$(daemon_config "$work" $PORT observe)
# flock on the pin directory, as a writer takes it, for 1 s.
flock "$pin" sleep 1 &
holder=$!
LAB_PIDS+=("$holder")
sleep 0.2
log=$work/daemon.log
lab_daemon "$toml" "$log"
wait "$holder"
status_ok() { "$EDGESHED" --run-dir "$work/run" status --iface "$SRV_IF" --json --interval 0 | jq -e '.daemon.level' >/dev/null; }
wait_for "the daemon, once the writer let go" status_ok
kill -0 "$DAEMON" || fail "the daemon did not wait for the writer: $(cat "$log")"
pass "a daemon started while a writer held the lock waited for it and runs"

out=$(in_srv "$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 1 2>&1) &&
	fail "policy under a running daemon: $out"
grep -q "a running daemon manages $SRV_IF" <<<"$out" && grep -q "override" <<<"$out" ||
	fail "policy's refusal: $out"
pass "policy refused under a running daemon: $out"
