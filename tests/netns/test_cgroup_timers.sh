#!/usr/bin/env bash
# Requests timed at the service's cgroup (cgroup_skb programs), not at the
# tracepoints that every socket of the host passes: test_pods.sh's pod
# (refserver 10 x 20 ms behind the node's interface, 800/s, about 1.6x),
# its server in the pod's cgroup (the pod's folder with the container's
# below it, as the kubelet makes them), the port named by the pod's folder.
#
# Claims: the cgroup's two links are pinned, the tracepoint timers are not
#   linked (no other TCP port is protected), and the log says so; at 1.6x some
#   refused, admitted p99 from 3 s on <= 100 ms (test_pods.sh's bound with
#   the tracepoints), the kernel's response p50 at least the service's
#   20 ms, about 10 requests in service while 10 slots are busy; once the
#   load ends nothing stays in service. A reload naming the port by its
#   namespace instead links the tracepoints and unlinks the cgroup's, and
#   its requests are still counted; named by its listener (as
#   deploy/kubernetes/pods names it), it is timed at the cgroup of the
#   process holding the listening socket (the container's), the tracepoints
#   unlinked again; the cgroup made anew under its name (a service
#   restarted) is linked in its place; `edgeshed detach` leaves no link
#   pinned.
source "$(dirname "$0")/servers_lib.sh"

PORT=18081
RATE=800

scenario_up
client_xdp_pass
sv_in_pod cgroup
start_server refserver "$PORT" 10 20
PINS=/sys/fs/bpf/edgeshed/$SRV_IF
CGROUP_ID=$(stat -c %i "$SV_POD_CGROUP")

# offer NAME SECONDS: RATE/s at the pod; FIG_* over the run, FIG_P99_SETTLED
# over the requests from 3 s on.
offer() {
	local name=$1 secs=$2
	load "$name" --port "$PORT" --rate "$RATE" --count $((RATE * secs)) --duration-s "$secs" \
		--timeout-ms 5000
	read -r FIG_OK FIG_SHED FIG_LOST FIG_P50 FIG_P99 _ _ < <(csv_figures "$SC_WORK/$name.csv" 0 $((secs * 1000)))
	FIG_P99_SETTLED=$(csv_p99_from "$SC_WORK/$name.csv" 3000)
	echo "$name: $RATE/s for $secs s: ok $FIG_OK, refused $FIG_SHED, lost $FIG_LOST, admitted p50 $FIG_P50" \
		"p99 $FIG_P99 ms, from 3 s on $FIG_P99_SETTLED ms"
}
in_service() { es_status | jq '.classes.normal.inflight'; }
idle() { [ "$(in_service)" = 0 ]; }
pinned() { [ -e "$PINS/$1" ]; }
# tp_linked NAME: how many links of the host run edgeshed's program NAME (a
# link unpinned but held open would still run it).
tp_linked() {
	local ids
	ids=$(bpftool -j prog show name "$1" | jq -r 'if type == "array" then .[].id else .id end' | paste -sd,)
	[ -n "$ids" ] || { echo 0; return; }
	bpftool -j link show | jq --argjson ids "[$ids]" '[.[] | select(.prog_id as $p | $ids | index($p))] | length'
}
timers_at_cgroup() {
	pinned "cgroup_${CGROUP_ID}_in" && pinned "cgroup_${CGROUP_ID}_out" &&
		! pinned request_link && ! pinned response_link &&
		[ "$(tp_linked edgeshed_request)" = 0 ] && [ "$(tp_linked edgeshed_response)" = 0 ]
}
timers_at_tracepoints() {
	pinned request_link && pinned response_link && [ -z "$(ls "$PINS" | grep '^cgroup_')" ] &&
		[ "$(tp_linked edgeshed_request)" = 1 ] && [ "$(tp_linked edgeshed_response)" = 1 ]
}

cfg=$(matrix_config port_only "$PORT")
start_daemon_config "$cfg"
wait_for --within 5 "the cgroup's links pinned, the tracepoints' not" timers_at_cgroup
grep -q "unlinked from the tracepoints" "$DAEMON_LOG" || fail "the log does not say the tracepoints were unlinked"
pass "the port timed at the pod's cgroup ($SV_POD_CGROUP, id $CGROUP_ID): its two links pinned, no tracepoint timer"

offer cgroup 6
timed=$(kernel_p50 "$PORT")
claim "timed at the cgroup, 1.6x: $FIG_SHED refused, want some" "$(ge "$FIG_SHED" 1)"
claim "timed at the cgroup, 1.6x: admitted p99 from 3 s on $FIG_P99_SETTLED ms, want <= 100" \
	"$(le "$FIG_P99_SETTLED" 100)"
claim "timed at the cgroup: the kernel's response p50 $timed ms, want >= 16 (the service's 20 ms)" \
	"$(ge "$timed" 16)"
wait_for --within 10 "nothing in service once the load ends" idle
pass "nothing left in service after the load"
# Requests in service are counted as they are: with 10 slots busy under
# the overload, about 10 (a request lost by the timers would lower it).
load_bg busy --port "$PORT" --rate "$RATE" --count $((RATE * 3)) --duration-s 3 --timeout-ms 5000
sleep 2
busy=$(in_service)
wait "$LOAD_PID" || fail "loadgen busy: exit $?"
claim "timed at the cgroup, 1.6x: $busy requests in service 2 s into the load, want >= 8 (10 slots busy)" \
	"$(ge "$busy" 8)"
wait_for --within 10 "nothing in service once the load ends" idle

# The same port named by the pod's namespace: the tracepoints time it.
sed -i "s|^cgroup = .*|netns = \"/run/netns/$SV_POD_NS\"|" "$cfg"
kill -HUP "$DAEMON"
wait_for --within 5 "the tracepoints linked, the cgroup's links gone" timers_at_tracepoints
pass "reloaded with the port named by its namespace: timed at the tracepoints, the cgroup's links unpinned"
offer tracepoints 4
claim "timed at the tracepoints after the reload, 1.6x: $FIG_SHED refused, want some" "$(ge "$FIG_SHED" 1)"
wait_for --within 10 "nothing in service once the load ends" idle

# Named by its listener: timed at the cgroup of the process that holds it.
pod_id=$CGROUP_ID
CGROUP_ID=$(stat -c %i "$SV_POD_CGROUP/ctr")
sed -i 's|^netns = .*|netns = "listener"|' "$cfg"
kill -HUP "$DAEMON"
wait_for --within 5 "the container's cgroup's links pinned, the tracepoints' gone" timers_at_cgroup
pass "reloaded with the port named by its listener: timed at the listener's cgroup ($SV_POD_CGROUP/ctr), no tracepoint timer"
offer listener 4
claim "timed at the listener's cgroup, 1.6x: $FIG_SHED refused, want some" "$(ge "$FIG_SHED" 1)"
wait_for --within 10 "nothing in service once the load ends" idle
CGROUP_ID=$pod_id

# Back to the cgroup, then detach: no link left pinned.
sed -i "s|^netns = .*|cgroup = \"$SV_POD_CGROUP\"|" "$cfg"
kill -HUP "$DAEMON"
wait_for --within 5 "the cgroup's links pinned again" timers_at_cgroup

# The service restarted in a cgroup made anew under the same name, as
# systemd restarts a unit: the daemon links the new one, unpins the old.
old_id=$CGROUP_ID
stop_server
sv_pod_cgroup_down
sv_pod_cgroup_up
start_server refserver "$PORT" 10 20
CGROUP_ID=$(stat -c %i "$SV_POD_CGROUP")
[ "$CGROUP_ID" != "$old_id" ] || fail "the cgroup made anew kept its id $old_id"
wait_for --within 5 "the new cgroup's links pinned" timers_at_cgroup
pinned "cgroup_${old_id}_in" && fail "the old cgroup's links are still pinned"
offer relinked 4
claim "the cgroup made anew, 1.6x: $FIG_SHED refused, want some" "$(ge "$FIG_SHED" 1)"
pass "the cgroup made anew under its name (id $old_id, then $CGROUP_ID) is linked in its place"
stop_daemon
in_srv "$EDGESHED" detach --iface "$SRV_IF" >/dev/null || fail "detach failed"
[ ! -e "$PINS" ] || fail "detach left $(ls "$PINS")"
pass "detach removed the cgroup's links with the rest"
stop_server

if [ ${#CLAIMS_FAILED[@]} -gt 0 ]; then
	printf '  %s\n' "${CLAIMS_FAILED[@]}" >&2
	fail "requests timed at the service's cgroup: ${#CLAIMS_FAILED[@]} claims not met"
fi
pass "requests timed at the service's cgroup protect as the tracepoints do, which are then unlinked"
