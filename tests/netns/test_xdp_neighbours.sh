#!/usr/bin/env bash
# edgeshed beside xdp-filter (xdp-tools) on the same veth, at xdp and
# xdp-generic: both act, in the stated order (edgeshed first, then what it
# passes goes on to xdp-filter), a re-attach replaces edgeshed's program in
# place, and `edgeshed detach` gives the hook back to the same xdp-filter
# program, still filtering.
#
# Which way is covered: edgeshed chains the program it finds behind its own
# (a tail call on XDP_PASS), the one way attach shares the hook. Where the
# kernel refuses freplace (EPERM, as on the machine this test was written
# on), that program is xdp-filter alone; where it takes libxdp's dispatcher,
# it is the dispatcher.
source "$(dirname "$0")/lib.sh"
# Once, under a loaded machine, the test stopped between the two hooks with
# no message: say where a command failed.
trap 'echo "test_xdp_neighbours: exit $? at line $LINENO" >&2' ERR

PORT=8080 # edgeshed's protected port
DENY=9191 # xdp-filter's denied port, protected by edgeshed too
OPEN=9090 # neither's
command -v xdp-filter >/dev/null || fail "xdp-filter missing: run scripts/deps.sh"
lab_up
serve $PORT
serve $DENY
serve $OPEN
client_xdp_pass # native XDP_TX (edgeshed's RST) on veth needs the peer's XDP

# xdp-filter's maps in a bpffs folder of this lab's, not the host's shared
# /sys/fs/bpf/xdp-filter: labs running at once do not see each other's.
export LIBXDP_BPFFS=/sys/fs/bpf/es-xdpf-$LAB_ID
mkdir -p "$LIBXDP_BPFFS"
LAB_DIRS+=("$LIBXDP_BPFFS")
LAB_HOOKS+=("in_srv xdp-filter unload $SRV_IF >/dev/null 2>&1")

# The id of the XDP program on the server's veth, empty for none.
xdp_prog_id() { in_srv ip -j link show "$SRV_IF" | jq -r '.[0].xdp.prog.id // empty'; }
# JSON, not `| head`: under pipefail, head's early exit is bpftool's SIGPIPE.
xdp_prog_name() { bpftool -j prog show id "$1" | jq -r '.name'; }

for hook in xdp xdp-generic; do
	case $hook in
	xdp) filter_mode=native ;;
	*) filter_mode=skb ;;
	esac
	in_srv xdp-filter load --mode $filter_mode "$SRV_IF"
	in_srv xdp-filter port $DENY
	filter_id=$(xdp_prog_id)
	[ -n "$filter_id" ] || fail "$hook: xdp-filter loaded, no XDP program on $SRV_IF"
	filter_name=$(xdp_prog_name "$filter_id")
	pass "$hook: xdp-filter on $SRV_IF: program id $filter_id ($filter_name)"
	# Precondition: xdp-filter alone drops the denied port, passes the rest.
	expect_connect timeout $SRV_V4 $DENY
	expect_connect ok $SRV_V4 $PORT

	out=$(in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook $hook --port $PORT,$DENY \
		--mode enforce --action rst --heartbeat-timeout-ms 0)
	echo "$out"
	grep -q "hands each frame it passes to the program that was there before, id $filter_id" \
		<<<"$out" || fail "$hook: attach does not say how it shares the hook: $out"
	pass "$hook: edgeshed ($(xdp_prog_name "$(xdp_prog_id)")) attached beside xdp-filter," \
		"chaining its program $filter_id by a tail call"

	# Both act. Admitting, edgeshed passes the denied port's SYN on to
	# xdp-filter, which drops it: edgeshed runs first.
	expect_connect ok $SRV_V4 $PORT
	expect_connect timeout $SRV_V4 $DENY
	expect_connect ok $SRV_V4 $OPEN
	# Shedding all, edgeshed refuses both its ports before xdp-filter sees
	# them: the denied port's SYN gets edgeshed's RST, not xdp-filter's drop.
	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 1 >/dev/null
	expect_connect refused $SRV_V4 $PORT
	expect_connect refused $SRV_V4 $DENY
	expect_connect ok $SRV_V4 $OPEN
	pass "$hook: order observed: edgeshed, then xdp-filter"

	# A re-attach replaces edgeshed's program in place; the neighbour stays
	# behind it.
	in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook $hook --mode enforce --action rst \
		--heartbeat-timeout-ms 0 >/dev/null
	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 0 >/dev/null
	expect_connect ok $SRV_V4 $PORT
	expect_connect timeout $SRV_V4 $DENY
	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 1 >/dev/null
	expect_connect refused $SRV_V4 $PORT
	# The counters are the pinned maps': the replace kept them.
	sent=$("$EDGESHED" status --iface "$SRV_IF" --json | jq '.classes.normal.counters.rst_sent')
	[ "${sent:-0}" -ge 3 ] || fail "$hook: rst_sent $sent after three refusals"
	pass "$hook: re-attach replaced edgeshed's program beside xdp-filter, rst_sent=$sent"

	# A daemon adopts the chained data plane, and so does one restarted
	# after a SIGKILL: the neighbour stays behind edgeshed throughout.
	dir=$(mktemp -d)
	LAB_DIRS+=("$dir")
	cfg=$(daemon_config --hook $hook "$dir" $PORT enforce)
	log=$dir/daemon.log
	chained_line="hands each frame it passes to the program that was there before, id $filter_id"
	for start in 1 2; do
		lab_daemon "$cfg" "$log"
		wait_for --alive "$DAEMON" "daemon start $start adopts the chained data plane" \
			bash -c "[ \$(grep -c 'adopted the data plane on $SRV_IF' '$log') -ge $start ] &&
				[ \$(grep -c '$chained_line' '$log') -ge $start ]"
		kill -KILL "$DAEMON"
		{ wait "$DAEMON"; } 2>/dev/null || true
	done
	[ "$(xdp_prog_id)" != "$filter_id" ] || fail "$hook: the daemon gave the hook away"
	expect_connect timeout $SRV_V4 $DENY # failed open: on to xdp-filter
	pass "$hook: two daemons adopted the chained data plane: $(grep -m1 "$chained_line" "$log")"

	in_srv "$EDGESHED" detach --iface "$SRV_IF"
	[ "$(xdp_prog_id)" = "$filter_id" ] ||
		fail "$hook: after detach the hook holds '$(xdp_prog_id)', not xdp-filter's $filter_id"
	[ ! -e "/sys/fs/bpf/edgeshed/$SRV_IF" ] || fail "$hook: pins left after detach"
	expect_connect timeout $SRV_V4 $DENY
	expect_connect ok $SRV_V4 $PORT
	in_srv xdp-filter status | grep -q "$SRV_IF" || fail "$hook: xdp-filter status lost $SRV_IF"
	pass "$hook: detached; xdp-filter's program $filter_id is back on the hook and filtering"

	in_srv xdp-filter unload "$SRV_IF"
	[ -z "$(xdp_prog_id)" ] || fail "$hook: xdp-filter unload left program $(xdp_prog_id)"
	expect_connect ok $SRV_V4 $DENY
	pass "$hook: xdp-filter unloaded, nothing left on $SRV_IF"
done
