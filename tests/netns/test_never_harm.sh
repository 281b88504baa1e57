#!/usr/bin/env bash
# Never refuse a healthy service. edgeshed with only the port named
# (configs/port_only.toml, enforce), each case from a cold start of the
# daemon (started 1 s before the clients), real TCP between the lab's two
# namespaces. A service below its capacity must get every connection:
#
# Idle crowd. The eager (asyncio) server of the matrix, 10 slots x 20 ms,
# idle time-out raised to 120 s so that it keeps connections that send
# nothing (refserver cannot be used: it accepts only into a free worker,
# which then waits 5 s for a request and closes, so 2,000 idle
# connections would hold its 10 workers for 1,000 s). `tcp_tool hold`
# opens 2,000 connections from the client namespace and holds them idle
# (no request) for the whole case; once every attempt has ended, the load
# at 0.7x the measured capacity for 4 s, a new connection per request;
# then the holder looks at each idle connection.
# Precondition, without edgeshed: the same crowd is established in full,
# the load gets no refusal and loses nothing, every idle connection is
# still open at the end (the harness itself harms nothing).
# Claims with edgeshed: 0 idle connections refused (2,000 established);
# 0 of the load's requests refused or lost; every established idle
# connection still open at the end (none reset or closed). The daemon and
# the holder's connects each go through the data plane (its SYN count).
#
# Busy but healthy. refserver, W workers x S ms, a new connection per request
# at 0.9x its nominal capacity (Poisson arrivals), for BUSY_S seconds: the
# daemon starts 1 s before the load (a cold start) and is restarted halfway
# (a new daemon with the clients connected: ~0.9 W requests in service at
# its first tick). Three shapes: 100 x 200 ms (~90 in service), 200 x 1 s
# (~180 in service), each above any fixed initial limit, and the slow one,
# 50 x 2 s (~45 in service, two responses a tick).
# Precondition, without edgeshed: nothing refused or lost, admitted p99
# <= 1.5x S.
# Claims with edgeshed: 0 refused, 0 lost, admitted p99 <= 1.5x S, and the
# data plane decided on every new connection after the first daemon's start.
# At 94b4e21^ (the adaptive limit capped at 20 from its first tick) the
# 100 x 200 ms service at 0.7x had 2,134 of 2,800 requests refused.
#
# Long polls and server push. The eager server again (10 slots x 20 ms,
# idle time-out 120 s), port 80. tests/tools/crowd_client.py opens, over
# ~1 s, 200 long polls that the server holds 30 s each (GET /poll, no slot
# held: 200 requests in service for 30 s) and 100 streams that the server
# writes a line to every 100 ms (GET /stream: in service only until the
# headers); once all are open, short requests at 0.9x the measured capacity
# (Poisson arrivals, a new connection each) for 8 s under them; the client
# reads the streams until the polls are answered (~32 s).
# Precondition, without edgeshed: every poll answered 200, every stream
# still receiving at the end (a line within its last second), the load
# gets no refusal and loses nothing.
# Claims with edgeshed (cold start: the daemon 1 s before the crowd): 0 of
# the load's requests refused or lost; 0 polls failed (refused, reset,
# timed out, other: all answered 200); 0 streams ended early (closed,
# reset) and all still receiving; the data plane decided on every SYN. The
# adaptive limit seen over the run and the requests in service the data
# plane counted halfway through the load are printed; when anything was shed,
# the daemon's state samples up to the limit's first binding.
# At e877ce7 this case failed in 9 of 11 runs: the open start ended while
# the crowd was still opening (+0.9 to +1.3 s after its start, before the
# load; response p99 then 7-22 ms, the streams' headers), the limit at its
# initial 20 with 103-200 polls in service, so every short request (~3,300)
# and the crowd's later connects (0-97 polls, 0-49 streams) were refused.
# In a run that passed the limit stayed open (1000) throughout: 208 in
# service halfway, admitted p99 51 ms (48.8 without edgeshed).
#
# With in-flight counted as established connections (the data plane before
# the requests-in-service change), the idle crowd filled the initial cap of
# 20: 1,980 of its 2,000 connections and every request of the load were
# refused at d8635cc. The claims are all checked and listed before the test
# fails; the preconditions fail it at once.
#
# NEVER_HARM_IN_POD=1: the same with the service in a pod's namespace behind
# the node's interface, the port naming it (servers_lib.sh's sv_in_pod; `make
# bench-never-harm-pods`); =cgroup: the servers in the pod's cgroup, and the
# port naming that, so its requests are timed at the cgroup. NEVER_HARM_CASES: the cases run, of "idle
# busy.100x200ms busy.200x1s busy.50x2s shapes" (all by default).
source "$(dirname "$0")/servers_lib.sh"

PORT=80
# The issue asks for 10,000 idle connections: `make test` holds 2,000 (the
# case's minute stays short); NEVER_HARM_IDLE_N=10000 runs the full crowd.
IDLE_N=${NEVER_HARM_IDLE_N:-2000}
HOLD_MAX_S=40     # the holder's own bound; SIGUSR1 ends it once the load is done
IDLE_LOAD_S=4
BUSY_S=10
SHAPE_POLLS=200
SHAPE_POLL_S=30
SHAPE_STREAMS=100
SHAPE_STREAM_MS=100
SHAPE_LOAD_S=8
SHAPE_READ_S=$((SHAPE_POLL_S + 2)) # the streams outlast the polls

with_edgeshed() {
	start_matrix_daemon port_only "$PORT"
	sleep 1
	check_eq "data plane mode" "$(es_status | jq -r .mode)" enforce
}
without_edgeshed() {
	stop_daemon
	# on_exit is fail_open by default: the program stays, admitting all.
	in_srv "$EDGESHED" detach --iface "$SRV_IF" >/dev/null 2>&1 || true
}
# dp_counts: "SYNS SHED RST" of class normal so far (test_servers.sh's).
dp_counts() {
	es_status | jq -r '.classes.normal.counters |
		"\(.admitted + .shed_cap + .shed_fraction + .shed_rate + .fail_open + .pass_mode_off) \(.shed_cap + .shed_fraction + .shed_rate) \(.rst_sent)"'
}
dp_state() {
	echo "daemon level $(daemon_level), adaptive_limit $(jq -r .adaptive_limit "$SC_STATE" 2>/dev/null)," \
		"normal cap $(jq -r '.classes.normal.inflight_cap // "none"' "$SC_STATE" 2>/dev/null)"
}
# Established connections to the service's port, seen from the server.
srv_established() { ss -N "$SV_NS" -Htn state established "( sport = :$PORT )" | wc -l; }

# load_figures NAME: FIG_OK FIG_SHED FIG_LOST FIG_P50 FIG_P99 from the CSV.
load_figures() {
	local name=$1
	read -r FIG_OK FIG_SHED FIG_LOST FIG_P50 FIG_P99 _ _ < <(csv_figures "$SC_WORK/$name.csv" 0 1)
	FIG_OFFERED=$(jv "$name" .total.offered)
	echo "$name: offered $FIG_OFFERED: ok $FIG_OK, refused $FIG_SHED, lost $FIG_LOST (timeouts, resets," \
		"errors), admitted p50 $FIG_P50 p99 $FIG_P99 ms"
}

# idle_crowd NAME RATE: the holder's 2,000 idle connections, the load at
# RATE for IDLE_LOAD_S under them, the holder's last look. Sets HOLD_EST,
# HOLD_REF (refused + reset + timed out + error), HOLD_OPEN, HOLD_GONE
# (closed + reset during the hold), SRV_EST (server side, before the load)
# and the load's FIG_*.
idle_crowd() {
	local name=$1 rate=$2 out=$SC_WORK/$1.hold holder n ref rst to err ms held closed reset rc=0
	"${SC_NICE[@]}" nsenter --net="/run/netns/$CLI_NS" "$TCP_TOOL" hold "$SRV_V4" "$PORT" "$IDLE_N" \
		"$HOLD_MAX_S" 2000 >"$out" 2>"$out.err" &
	holder=$!
	LAB_PIDS+=("$holder")
	wait_for --within 25 "the holder's $IDLE_N connects to end" grep -q '^opened ' "$out"
	read -r _ n _ HOLD_EST _ ref _ rst _ to _ err _ ms < <(grep '^opened ' "$out")
	HOLD_REF=$((ref + rst + to + err))
	sleep 0.2 # the server's accepts catch up
	SRV_EST=$(srv_established)
	echo "$name: idle crowd: $n connects in $ms ms: established $HOLD_EST, refused $ref, reset $rst," \
		"timeout $to, error $err; server side: $SRV_EST established on :$PORT"
	load "$name" --port "$PORT" --rate "$rate" --duration-s "$IDLE_LOAD_S" \
		--count $((rate * IDLE_LOAD_S)) --timeout-ms 5000
	# Precondition of "still open at the end": the hold outlasted the load.
	kill -0 "$holder" 2>/dev/null || fail "$name: the holder ended before the load did: $(cat "$out" "$out.err")"
	kill -USR1 "$holder"
	wait "$holder" || rc=$?
	[ "$rc" = 0 ] || fail "$name: tcp_tool hold exit $rc: $(cat "$out" "$out.err")"
	grep -q '^held ' "$out" || fail "$name: no 'held' line from the holder: $(cat "$out" "$out.err")"
	read -r _ held _ HOLD_OPEN _ closed _ reset < <(grep '^held ' "$out")
	HOLD_GONE=$((closed + reset))
	echo "$name: after $held s of hold: $HOLD_OPEN of $HOLD_EST idle connections still open," \
		"$closed closed by the server side, $reset reset"
	load_figures "$name"
}

# start_eager NAME FACTOR: the eager server of cases 1 and 3 (10 slots x
# 20 ms, idle time-out 120 s) on PORT, its capacity measured (NAME.json);
# RATE: FACTOR x that capacity.
start_eager() {
	SV_PY_ARGS=(--idle-timeout-s 120)
	start_server eager "$PORT" 10 20
	SV_PY_ARGS=()
	measure_capacity "$1" "$PORT" 10 20 2
	echo "eager: measured capacity $CAPACITY/s (nominal 500/s)"
	check_ge "eager: measured capacity (req/s)" "$CAPACITY" 100
	RATE=$(awk -v c="$CAPACITY" -v f="$2" 'BEGIN { printf "%.0f", f * c }')
}

CASES=${NEVER_HARM_CASES:-idle busy.100x200ms busy.200x1s busy.50x2s shapes}
for c in $CASES; do
	[[ " idle busy.100x200ms busy.200x1s busy.50x2s shapes " == *" $c "* ]] || fail "NEVER_HARM_CASES: no case $c"
done
scenario_up
client_xdp_pass
if [ -n "${NEVER_HARM_IN_POD:-}" ]; then
	sv_in_pod "${NEVER_HARM_IN_POD#1}"
	echo "the service in a pod: $SV_POD_NS at $SRV_V4, behind the node's $SRV_IF${SV_PORT_CGROUP:+, the port named by its cgroup $SV_PORT_CGROUP}"
fi
# The eager server holds 2,000 idle connections and the load's: descriptors
# (the holder raises its own limit).
ulimit -Sn "$(ulimit -Hn)"
# The limit is per process: the server holds the crowd and the load, the
# holder the crowd.
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((IDLE_N + 1000)) ] ||
	fail "descriptor limit $(ulimit -n) is too low for $IDLE_N idle connections and the load"

case_idle() {
	echo "== 1. idle crowd: $IDLE_N idle connections, eager server 10 slots x 20 ms at 0.7x"
	start_eager cap.eager 0.7

	idle_crowd idle.without "$RATE"
	check_eq "without edgeshed: idle connections established" "$HOLD_EST" "$IDLE_N"
	check_ge "without edgeshed: established on the server side" "$SRV_EST" "$IDLE_N"
	check_eq "without edgeshed: load refused" "$FIG_SHED" 0
	check_eq "without edgeshed: load lost" "$FIG_LOST" 0
	check_eq "without edgeshed: idle connections still open" "$HOLD_OPEN" "$IDLE_N"
	pass "without edgeshed (precondition): $IDLE_N idle connections held open through $RATE/s, nothing refused or lost, admitted p99 $FIG_P99 ms"
	sleep 1 # the crowd's connections close

	with_edgeshed
	read -r syn0 shed0 rst0 < <(dp_counts)
	idle_crowd idle.with "$RATE"
	read -r syn1 shed1 rst1 < <(dp_counts)
	echo "idle.with: data plane: $((syn1 - syn0)) SYNs, $((shed1 - shed0)) shed, $((rst1 - rst0)) RST sent; $(dp_state)"
	check_ge "idle.with: SYNs the data plane decided on" $((syn1 - syn0)) $((IDLE_N + FIG_OFFERED))
	claim "idle crowd with edgeshed: $HOLD_REF of $IDLE_N idle connections refused (reset, timed out), want 0" \
		"$(is "$HOLD_REF" 0)"
	claim "idle crowd with edgeshed, $HOLD_EST idle connections established: $FIG_SHED of $FIG_OFFERED requests at $RATE/s (0.7x) refused, want 0" \
		"$(is "$FIG_SHED" 0)"
	claim "idle crowd with edgeshed: $FIG_LOST of $FIG_OFFERED requests lost (timeouts, resets, errors), want 0" \
		"$(is "$FIG_LOST" 0)"
	claim "idle crowd with edgeshed, $HOLD_EST idle connections established (want $IDLE_N): $HOLD_OPEN still open at the end, $HOLD_GONE closed or reset, want none" \
		"$([ "$HOLD_GONE" = 0 ] && [ "$HOLD_OPEN" = "$HOLD_EST" ] && echo 1 || echo 0)"
	without_edgeshed
	stop_server
}

# busy NAME WORKERS MS: the busy-but-healthy case on refserver (see the top).
busy() {
	local name=$1 w=$2 ms=$3 rate p99_max syn0 shed0 rst0 syn1 shed1 rst1
	rate=$(awk -v w="$w" -v ms="$ms" 'BEGIN { printf "%.0f", 0.9 * w * 1000 / ms }')
	p99_max=$((ms * 3 / 2))
	echo "== $name: refserver $w workers x $ms ms at $rate/s (0.9x)"
	start_server refserver "$PORT" "$w" "$ms"
	load "$name.without" --port "$PORT" --rate "$rate" --poisson --duration-s 4 \
		--count $((rate * 4)) --timeout-ms 10000
	load_figures "$name.without"
	check_eq "$name without edgeshed: refused" "$FIG_SHED" 0
	check_eq "$name without edgeshed: lost" "$FIG_LOST" 0
	check_le "$name without edgeshed: admitted p99 (ms)" "$FIG_P99" "$p99_max"
	pass "$name without edgeshed (precondition): nothing refused or lost, admitted p99 $FIG_P99 ms"
	sleep 1

	with_edgeshed
	read -r syn0 shed0 rst0 < <(dp_counts)
	load_bg "$name.with" --port "$PORT" --rate "$rate" --poisson --duration-s "$BUSY_S" \
		--count $((rate * BUSY_S)) --timeout-ms 10000
	sleep $((BUSY_S / 2))
	# A restart: the new daemon's first tick sees the service at work.
	stop_daemon
	with_edgeshed
	echo "$name.with: restarted at $((BUSY_S / 2)) s; $(dp_state)"
	wait "$LOAD_PID" || fail "loadgen $name.with: exit $?"
	read -r syn1 shed1 rst1 < <(dp_counts)
	load_figures "$name.with"
	echo "$name.with: data plane: $((syn1 - syn0)) SYNs, $((shed1 - shed0)) shed, $((rst1 - rst0)) RST sent; $(dp_state)"
	check_ge "$name.with: SYNs the data plane decided on" $((syn1 - syn0)) "$FIG_OFFERED"
	# The requests were timed, or refusing none would prove nothing.
	check_ge "$name.with: the kernel's response p50 (ms), the service's time $ms ms" \
		"$(kernel_p50 "$PORT")" $((ms * 8 / 10))
	claim "$name with edgeshed (cold start, then a restart under load): $FIG_SHED of $FIG_OFFERED requests at $rate/s (0.9x) refused, want 0" \
		"$(is "$FIG_SHED" 0)"
	claim "$name with edgeshed: $FIG_LOST of $FIG_OFFERED requests lost (timeouts, resets, errors), want 0" \
		"$(is "$FIG_LOST" 0)"
	claim "$name with edgeshed: admitted p99 $FIG_P99 ms <= $p99_max ms ($FIG_OK admitted)" \
		"$(le "$FIG_P99" "$p99_max")"
	without_edgeshed
	stop_server
}


# shapes NAME RATE: the long-lived shapes on the eager server (see the top):
# the crowd's polls and streams, then the load at RATE under them, then the
# crowd's figures once its polls are answered. Sets the load's FIG_*,
# CROWD_POLLS_OK, CROWD_POLLS_FAILED, CROWD_ALIVE, CROWD_ENDED, CROWD_LINE,
# SHAPE_T0 and SHAPE_LOAD_T0 (the crowd's and the load's start, epoch ms),
# SHAPE_MID (the daemon's state and the data plane's requests in service
# halfway through the load; "no daemon" without edgeshed).
shapes() {
	local name=$1 rate=$2 out=$SC_WORK/$1.crowd rc=0
	SHAPE_T0=$(now_ms)
	crowd_bg "$name" --port "$PORT" --polls "$SHAPE_POLLS" --poll-ms $((SHAPE_POLL_S * 1000)) \
		--streams "$SHAPE_STREAMS" --stream-ms "$SHAPE_STREAM_MS" --duration-s "$SHAPE_READ_S"
	wait_for --within 10 "the crowd's $((SHAPE_POLLS + SHAPE_STREAMS)) connects to end" \
		grep -q '^crowd_client: opened ' "$out.err"
	echo "$name: $(grep '^crowd_client: opened ' "$out.err")"
	SHAPE_LOAD_T0=$(now_ms)
	load_bg "$name" --port "$PORT" --rate "$rate" --poisson --duration-s "$SHAPE_LOAD_S" \
		--count $((rate * SHAPE_LOAD_S)) --timeout-ms 10000
	sleep $((SHAPE_LOAD_S / 2))
	SHAPE_MID="no daemon"
	if [ -n "$DAEMON" ] && kill -0 "$DAEMON" 2>/dev/null; then
		SHAPE_MID="$(dp_state); data plane: $(es_status | jq -r '.classes.normal |
			"\(.inflight) requests in service, \(.connections) connections"')"
	fi
	wait "$LOAD_PID" || fail "loadgen $name: exit $?"
	load_figures "$name"
	wait "$CROWD_PID" || rc=$?
	[ "$rc" = 0 ] || fail "$name: crowd_client exit $rc: $(cat "$out" "$out.err")"
	jq -e .polls "$out" >/dev/null 2>&1 || fail "$name: no figures from crowd_client: $(cat "$out" "$out.err")"
	read -r CROWD_POLLS_OK CROWD_POLLS_FAILED CROWD_ALIVE CROWD_ENDED < <(jq -r '
		"\(.polls.ok) \(.polls.failed | add) \(.streams.alive_at_end) \(.streams.ended_early | add)"' "$out")
	CROWD_LINE=$(jq -r '.polls as $p | .streams as $s |
		"polls: \($p.ok) of \($p.count) answered 200 in \($p.latency_ms.min)-\($p.latency_ms.max) ms," +
		" failed \($p.failed | tostring); streams: \($s.opened) of \($s.count) opened (not" +
		" \($s.not_opened | tostring)), \($s.alive_at_end) alive at the end, \($s.stalled) stalled," +
		" ended early \($s.ended_early | tostring), \($s.lines) lines, longest gap \($s.max_gap_ms) ms;" +
		" \(.elapsed_s) s"' "$out")
	echo "$name: $CROWD_LINE"
}

case_shapes() {
	echo "== 3. long polls and server push: $SHAPE_POLLS polls held $SHAPE_POLL_S s, $SHAPE_STREAMS streams, eager server 10 slots x 20 ms at 0.9x"
	start_eager cap.shapes 0.9

	shapes shapes.without "$RATE"
	check_eq "without edgeshed: load refused" "$FIG_SHED" 0
	check_eq "without edgeshed: load lost" "$FIG_LOST" 0
	check_eq "without edgeshed: polls answered 200" "$CROWD_POLLS_OK" "$SHAPE_POLLS"
	check_eq "without edgeshed: streams alive at the end" "$CROWD_ALIVE" "$SHAPE_STREAMS"
	pass "without edgeshed (precondition): $SHAPE_POLLS long polls answered, $SHAPE_STREAMS streams alive through $RATE/s (0.9x), nothing refused or lost, admitted p99 $FIG_P99 ms"
	sleep 1

	with_edgeshed
	start_state_sampler "$SC_WORK/shapes.states"
	read -r syn0 shed0 rst0 < <(dp_counts)
	shapes shapes.with "$RATE"
	read -r syn1 shed1 rst1 < <(dp_counts)
	stop_state_sampler
	echo "shapes.with: halfway through the load: $SHAPE_MID"
	echo "shapes.with: data plane: $((syn1 - syn0)) SYNs, $((shed1 - shed0)) shed, $((rst1 - rst0)) RST sent; $(dp_state);" \
		"adaptive limit over the run $(awk '{ print $3 }' "$SC_WORK/shapes.states" | sort -n | uniq -c |
			awk '{ printf "%s%s (%d samples)", n++ ? ", " : "", $2, $1 }')"
	check_ge "shapes.with: SYNs the data plane decided on" $((syn1 - syn0)) $((SHAPE_POLLS + SHAPE_STREAMS + FIG_OFFERED))
	claim "long polls and server push with edgeshed (cold start): $FIG_SHED of $FIG_OFFERED short requests at $RATE/s (0.9x) refused, want 0" \
		"$(is "$FIG_SHED" 0)"
	claim "long polls and server push with edgeshed: $FIG_LOST of $FIG_OFFERED short requests lost (timeouts, resets, errors), want 0" \
		"$(is "$FIG_LOST" 0)"
	claim "long polls and server push with edgeshed: $CROWD_POLLS_FAILED of $SHAPE_POLLS long polls failed ($CROWD_POLLS_OK answered 200), want 0" \
		"$([ "$CROWD_POLLS_FAILED" = 0 ] && [ "$CROWD_POLLS_OK" = "$SHAPE_POLLS" ] && echo 1 || echo 0)"
	claim "long polls and server push with edgeshed: $CROWD_ENDED of $SHAPE_STREAMS streams ended early, $CROWD_ALIVE still receiving at the end, want 0 and $SHAPE_STREAMS" \
		"$([ "$CROWD_ENDED" = 0 ] && [ "$CROWD_ALIVE" = "$SHAPE_STREAMS" ] && echo 1 || echo 0)"
	if [ "$((shed1 - shed0))" != 0 ]; then
		# What the daemon saw when its limit first left the open start.
		echo "shapes.with: the crowd began at +0 ms, the load at +$((SHAPE_LOAD_T0 - SHAPE_T0)) ms; the state" \
			"samples (ms since the crowd's start, level, adaptive limit, normal cap, response p99 ms) until the limit bound:" \
			"$(awk -v t0="$SHAPE_T0" '{ printf "%s+%d %s %s %s %s", n++ ? "; " : "", $1 - t0, $2, $3, $4, $5 == "-" ? "-" : sprintf("%.1f", $5) } NR == 1 { open = $3 } $3 != open && ++bound == 3 { exit }' \
				"$SC_WORK/shapes.states")" >&2
		echo "shapes.with: the state file at the end: $(jq -c '{level, adaptive_limit, pressure,
			latency: .latency["80"].response, normal: .classes.normal}' "$SC_STATE")" >&2
		echo "shapes.with: es_status, class normal: $(es_status | jq -c .classes.normal)" >&2
	fi
	without_edgeshed
	stop_server
}

for c in $CASES; do
	case $c in
	idle) case_idle ;;
	busy.100x200ms) busy "$c" 100 200 ;;
	busy.200x1s) busy "$c" 200 1000 ;;
	busy.50x2s) busy "$c" 50 2000 ;;
	shapes) case_shapes ;;
	esac
done

if [ ${#CLAIMS_FAILED[@]} -gt 0 ]; then
	echo "--- edgeshed refused or harmed a healthy service (${#CLAIMS_FAILED[@]} claims not met); the preconditions held:" >&2
	printf '  %s\n' "${CLAIMS_FAILED[@]}" >&2
	fail "edgeshed with port_only.toml harms a healthy service (${#CLAIMS_FAILED[@]} claims not met)"
fi
pass "edgeshed with port_only.toml refuses nothing of a healthy service${NEVER_HARM_IN_POD:+ in a pod}: $CASES"
