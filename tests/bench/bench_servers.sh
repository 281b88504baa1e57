#!/usr/bin/env bash
# The server matrix: how well is a server protected when the queue forms in
# the process (it accepts at once) rather than in the kernel's accept queue?
#
# Servers (tests/netns/servers_lib.sh), each W slots x S ms:
#   nginx      reverse proxy in front of a refserver upstream on loopback;
#   eager      asyncio, accepts at once, W-slot semaphore inside;
#   threaded   thread per connection, W-slot semaphore inside;
#   refserver  lazy accept: the queue is the kernel's accept queue.
# Setups:
#   none       no shedding;
#   edgeshed   the daemon with configs/port_only.toml (interface, port,
#              enforce: nothing else);
#   gate       edgeshed, port_only.toml plus [limit] queue_gate = 2.0: the
#              data plane's queue gate at 2x the p99.9 learnt healthy;
#   refuse     edgeshed, port_only.toml plus keepalive = "refuse": new
#              requests on open connections over the cap get a RST at both
#              ends (keep-alive clients only; its shed column counts them);
#   semaphore  the in-process comparator: the server's own --fail-fast (503
#              at once when every slot is busy); eager and threaded only;
#   static     the daemon with configs/static_cap.toml: a fixed in-flight cap
#              of W at every level and class, RST budget and reflection
#              limit off. edgeshed keeps the default reflection limit (1,000
#              RSTs/s per /24 after a burst of 4,000, 8 more per connection
#              the network establishes), and the lab's client is one address:
#              beyond about 10x its sheds would go out as drops.
# Clients (loadgen, open loop, 5 s time-out): "conn", a new connection per
# request; "ka", keep-alive over a fixed pool of BENCH_SERVERS_POOL (50).
# Loads: FACTOR x the measured capacity for RUN_S seconds, or "burst":
# BENCH_SERVERS_BURST (4,000) connections at 20,000/s. Starts: "cold" (the
# daemon starts the moment the load does), "warm" (the runbook's rollout:
# observe mode at 0.5x for BENCH_SERVERS_WARM_S (60) seconds, then a restart
# in enforce mode, which starts from what the limit learnt; run_dir/state).
# The capacity step (BENCH_SERVERS_STEP=1, nginx/eager/threaded): 0.7x of the
# full capacity for 3 x STEP_S seconds; the capacity halves at STEP_S and
# comes back at 2 x STEP_S. eager/threaded: SIGUSR1/SIGUSR2 (the server holds
# half its slots); nginx: two upstream refservers of W/2, the second stopped
# and started again. refserver has none (it cannot change its workers live).
#
# Capacity is measured per server and service time first (1.5x nominal for
# 2 s, every request waited for: throughput between the first and the last
# answer), with the server's CPU, and the unloaded latency (0.2x for 2 s).
#
# Per case: ok, shed (RST or 503), lost (time-out, reset, error), admitted
# p50/p99, completed/s over the arrival window (2 s for a burst) and its % of
# capacity, the client's time to refusal p99, the daemon's adaptive_limit
# over the run (state.json, min/median/max) and highest level, the server's
# CPU; for the step, the admitted p99 while halved and the time from the
# restore until the admitted p99 stays under 1.25x the unloaded p99; the
# requests that waited for a SYN retransmission, with who dropped their SYN
# (edgeshed's rst_capped and rst_reflect_limited, the server's ListenDrops).
# Output: $BENCH_OUT/servers/table.txt, table.md, runs/, servers.png.
#
# A warm start is run for the setups whose daemon learns (edgeshed, gate,
# refuse; the static cap learns nothing), and
# 0.7x and 0.9x for none and edgeshed only (the target there: edgeshed sheds
# nothing).
# A run at S = 200 ms lasts RUN_S x 4 (the same number of service times would
# take 10x; the law needs its probes, each some service times long), and
# covers new connections from a cold start at 0.7x, 1.6x and 5x without,
# with edgeshed and with the static cap: it shows that nothing is tied to
# 20 ms (BENCH_SERVERS_SLOW_FULL=1: every dimension at 200 ms too, 3 hours).
#
# Then, unless BENCH_SERVERS_DRIFT_S=0: one run of DRIFT_S (300) seconds at
# 1.6x on the eager server, cold start: the adaptive limit's median per
# minute, and its drift from the second minute to the last. And unless
# BENCH_SERVERS_COST=0: the cost at BENCH_SERVERS_COST_RATE (10,000)
# requests/s on keep-alive connections to a refserver of 0 ms: the daemon's
# CPU and the kernel's, the time run in edgeshed's BPF programs
# (kernel.bpf_stats_enabled for the run).
#
# Last, the targets of issue #15, each case met or missed, with the figures
# that say why a miss is missed, and edgeshed against the semaphore and the
# static cap.
#
# The full matrix is long (about 190 runs and the drift: 70 minutes).
# BENCH_SERVERS_QUICK=1: 20 ms, 1.6x and 5x, cold start, both clients, all
# four servers, no step, no drift (about 50 runs, 15 minutes). Each
# dimension has its knob: BENCH_SERVERS_{SERVERS,MS,LOADS,STARTS,CLIENTS,
# SETUPS}, space-separated. Prints figures and asserts nothing.
source "$(dirname "$0")/bench_lib.sh"
need jq gawk python3 nginx
LAB_LIB=$BENCH_LIB_DIR/../netns/servers_lib.sh
source "$LAB_LIB"

W=${BENCH_SERVERS_W:-10}
POOL=${BENCH_SERVERS_POOL:-50}
BURST_N=${BENCH_SERVERS_BURST:-4000}
RUN_S=${BENCH_SERVERS_RUN_S:-4}
STEP_S=${BENCH_SERVERS_STEP_S:-4}
WARM_S=${BENCH_SERVERS_WARM_S:-60}
TIMEOUT_MS=5000
if [ "${BENCH_SERVERS_QUICK:-0}" = 1 ]; then
	d_ms="20" d_loads="1.6 5" d_starts="cold" d_step=0 d_drift=0
else
	d_ms="20 200" d_loads="0.7 0.9 1.6 5 burst" d_starts="cold warm" d_step=1 d_drift=300
fi
DRIFT_S=${BENCH_SERVERS_DRIFT_S:-$d_drift}
COST=${BENCH_SERVERS_COST:-1}
COST_RATE=${BENCH_SERVERS_COST_RATE:-10000}
SERVERS=(${BENCH_SERVERS_SERVERS:-nginx eager threaded refserver})
MSS=(${BENCH_SERVERS_MS:-$d_ms})
LOADS=(${BENCH_SERVERS_LOADS:-$d_loads})
STARTS=(${BENCH_SERVERS_STARTS:-$d_starts})
CLIENTS=(${BENCH_SERVERS_CLIENTS:-conn ka})
SETUPS=(${BENCH_SERVERS_SETUPS:-none edgeshed gate refuse semaphore static})
STEP=${BENCH_SERVERS_STEP:-$d_step}
# SV_POD=1 or cgroup: every server in a pod behind the node's interface, the
# ports naming its namespace or its cgroup (servers_lib.sh), into servers-pod-*.
out=$BENCH_OUT/servers${SV_POD:+-pod-$SV_POD}
# BENCH_SERVERS_REPORT_ONLY=1: no runs; the rows and tables again from the
# runs/ and capacity of the last run (after a change to the figures).
REPORT_ONLY=${BENCH_SERVERS_REPORT_ONLY:-0}
if [ "$REPORT_ONLY" = 1 ]; then
	[ -s "$out/capacity" ] || { echo "no $out/capacity: run the matrix first" >&2; exit 1; }
else
	rm -rf "$out"
	mkdir -p "$out/runs"
fi

# lab_run FUNC ARGS...: FUNC in a fresh lab (namespaces, work folder), in a
# subshell; everything goes on every exit path (scenario_lib's traps).
lab_run() {
	(
		LAB_ID=$BASHPID
		source "$LAB_LIB"
		scenario_up
		client_xdp_pass
		sv_in_pod_if_asked
		"$@"
	)
}

# --- capacity ----------------------------------------------------------------

# measure KIND MS: "KIND MS CAPACITY CPU% UNLOADED_P50 UNLOADED_P99".
measure() {
	local kind=$1 ms=$2 rate
	start_server "$kind" "$SVC_PORT" "$W" "$ms"
	measure_capacity cap "$SVC_PORT" "$W" "$ms" 2
	rate=$(awk -v c="$CAPACITY" 'BEGIN { printf "%.0f", 0.2 * c }')
	load idle --port "$SVC_PORT" --rate "$rate" --count $((rate * 2)) --duration-s 2 --timeout-ms "$TIMEOUT_MS"
	cp "$SC_WORK/cap.csv" "$out/runs/capacity.$kind.$ms.csv"
	echo "$kind $ms $CAPACITY $CAPACITY_CPU $(jv idle .total.ok_latency_ms.p50) $(jv idle .total.ok_latency_ms.p99)"
}
cap_of() { awk -v k="$1" -v m="$2" -v c="${3:-3}" '$1 == k && $2 == m { print $c }' "$out/capacity"; }
# run_s MS: the seconds of a FACTOR x capacity run at a service time of MS.
run_s() { if [ "$1" -ge 200 ]; then echo $((RUN_S * 4)); else echo "$RUN_S"; fi; }

echo "== Server matrix: $W slots x ${MSS[*]} ms; servers ${SERVERS[*]}; machine: $(machine_line)"
[ "$REPORT_ONLY" = 1 ] || : >"$out/capacity"
for ms in "${MSS[@]}"; do
	[ "$REPORT_ONLY" = 1 ] && break
	for kind in "${SERVERS[@]}"; do
		lab_run measure "$kind" "$ms" >"$out/runs/capacity.$kind.$ms.log" 2>&1 ||
			{ echo "capacity of $kind at $ms ms: FAILED" >&2; cat "$out/runs/capacity.$kind.$ms.log" >&2; exit 1; }
		line=$(grep -E "^$kind $ms " "$out/runs/capacity.$kind.$ms.log" | tail -n 1)
		echo "$line" >>"$out/capacity"
		read -r _ _ c cpu p50 p99 <<<"$line"
		printf '   capacity %-9s %3s ms: %6s/s (nominal %s/s), server CPU %3s%% of a core, unloaded p50 %s p99 %s ms\n' \
			"$kind" "$ms" "$c" $((W * 1000 / ms)) "$cpu" "$p50" "$p99"
	done
done

# --- one case ----------------------------------------------------------------

# listen_drops: the servers' namespace's TcpExt ListenDrops (SYNs and ACKs a
# listener dropped: accept queue full, and the like).
listen_drops() {
	# shellcheck disable=SC2016 # an awk program
	nsenter --net="/run/netns/$SV_NS" awk '$1 == "TcpExt:" { if (!h) { for (i = 2; i <= NF; i++) if ($i == "ListenDrops") c = i; h = 1; next }
		print $c; exit }' /proc/net/netstat
}

# one_case ID SERVER MS CLIENT LOAD START SETUP: in its own lab; leaves
# runs/ID.{json,csv,states,daemon.log,info}.
one_case() {
	local id=$1 server=$2 ms=$3 client=$4 ld=$5 start=$6 setup=$7 kind=$2 cap args=() extra=
	cap=$(cap_of "$server" "$ms")
	[ "$setup" = semaphore ] && kind=${server}_failfast
	[ "$ld" = step ] && [ "$server" = nginx ] && extra=split
	start_server "$kind" "$SVC_PORT" "$W" "$ms" $extra
	[ "$client" = ka ] && args+=(--keep-alive --max-connections "$POOL")
	local rate window_s
	case $ld in
	burst) args+=(--rate 20000 --count "$BURST_N" --duration-s 1) ;;
	step)
		rate=$(awk -v c="$cap" 'BEGIN { printf "%.0f", 0.7 * c }')
		window_s=$((3 * STEP_S))
		args+=(--rate "$rate" --count $((rate * window_s)) --duration-s "$window_s")
		;;
	drift)
		rate=$(awk -v c="$cap" 'BEGIN { printf "%.0f", 1.6 * c }')
		args+=(--rate "$rate" --count $((rate * DRIFT_S)) --duration-s "$DRIFT_S")
		;;
	*)
		local secs
		secs=$(run_s "$ms")
		rate=$(awk -v c="$cap" -v f="$ld" 'BEGIN { printf "%.0f", c * f }')
		args+=(--rate "$rate" --count $((rate * secs)) --duration-s "$secs")
		;;
	esac
	case $setup in
	edgeshed | static | refuse | gate)
		local tmpl=port_only kv=() cfg
		[ "$setup" = static ] && tmpl=static_cap kv=("CAP=$W")
		# Warm: the runbook's rollout, observe mode at 0.5x for WARM_S, then a
		# restart in enforce, from what the limit learnt.
		if [ "$start" = warm ]; then
			learn_observing "$SVC_PORT" "$(awk -v c="$cap" 'BEGIN { printf "%.0f", 0.5 * c }')" "$WARM_S"
			cp "$SC_WORK/run/state/learnt.json" "$out/runs/$id.learnt.json" 2>/dev/null || true
		fi
		cfg=$(matrix_config "$tmpl" "$SVC_PORT" "${kv[@]}")
		# refuse: port_only.toml and its keep-alive requests refused at the cap.
		[ "$setup" = refuse ] && echo 'keepalive = "refuse"' >>"$cfg"
		[ "$setup" = gate ] && printf '\n[limit]\nqueue_gate = 2.0\n' >>"$cfg"
		start_daemon_config "$cfg"
		start_state_sampler "$SC_WORK/states"
		;;
	esac
	local c0 c1 d0 d1
	c0=$(server_cpu_s)
	d0=$(listen_drops)
	load_bg case --port "$SVC_PORT" --timeout-ms "$TIMEOUT_MS" "${args[@]}"
	if [ "$ld" = step ]; then
		sleep "$STEP_S"
		capacity_step half
		sleep "$STEP_S"
		capacity_step full
	fi
	wait "$LOAD_PID" || fail "loadgen: exit $?"
	c1=$(server_cpu_s)
	d1=$(listen_drops)
	stop_state_sampler
	# The data plane's counters since the attach: sheds that went out as a drop
	# (RST budget, reflection limit) make the refused client retry after 1 s.
	if [ -n "${DAEMON:-}" ]; then
		es_status >"$out/runs/$id.status.json" 2>/dev/null || rm -f "$out/runs/$id.status.json"
	fi
	echo "cpu $(awk -v a="$c0" -v b="$c1" -v d="$(jv case .duration_s)" 'BEGIN { printf "%.0f", (d > 0 ? (b - a) * 100 / d : 0) }')" \
		>"$out/runs/$id.info"
	echo "listen_drops $((d1 - d0))" >>"$out/runs/$id.info"
	# The requests the server read and could not answer: the lab's Python
	# servers count them at their stop; the others say nothing ("-").
	stop_server
	echo "read_lost $(grep -oE '[0-9]+ read and lost$' "$SERVER_LOG" | cut -d' ' -f1 || true)" >>"$out/runs/$id.info"
	cp "$SC_WORK/case.json" "$out/runs/$id.json"
	cp "$SC_WORK/case.csv" "$out/runs/$id.csv"
	[ -f "$SC_WORK/states" ] && cp "$SC_WORK/states" "$out/runs/$id.states"
	[ -n "$DAEMON_LOG" ] && cp "$DAEMON_LOG" "$out/runs/$id.daemon.log"
	true
}

# --- figures -----------------------------------------------------------------

# step_figures CSV UNLOADED_P99: "HALVED_P99 SETTLE_MS RECOVER_MS": the
# admitted p99 of requests that started while the capacity was halved; the ms
# from the halving to the first 100 ms mark after which the admitted p99
# (requests started from there until the restore) is under 1.25x
# UNLOADED_P99; the same from the restore to the end ("never": not within).
step_figures() {
	gawk -F, -v s="$STEP_S" -v u="$2" '
		function p99(a, n,   r) { asort(a); r = int(0.99 * n + 0.999999); if (r < 1) r = 1; return a[r] }
		NR > 1 && $3 == "ok" { t[++m] = $1; l[m] = $4 }
		END {
			k = 0; for (i = 1; i <= m; i++) if (t[i] >= s * 1000 && t[i] < 2 * s * 1000) h[++k] = l[i]
			half = k ? sprintf("%.1f", p99(h, k)) : "-"
			print half, settle(s * 1000, 2 * s * 1000), settle(2 * s * 1000, 3 * s * 1000)
		}
		function settle(from, to,   mark, i, k, v) {
			for (mark = from; mark < to; mark += 100) {
				delete v; k = 0
				for (i = 1; i <= m; i++) if (t[i] >= mark && t[i] < to) v[++k] = l[i]
				if (k == 0) break
				if (p99(v, k) <= 1.25 * u) return mark - from
			}
			return "never"
		}' "$1"
}

# state_figures STATES: "LIMIT_MIN/MEDIAN/MAX TOP_LEVEL SERVER_P99" of a
# run's samples; SERVER_P99: the median of the kernel's response-time p99
# (1 s windows) from 2 s after the first sample on.
state_figures() {
	[ -s "$1" ] || { echo "- - -"; return; }
	local lim top srv
	lim=$(awk '{ print $3 }' "$1" | sort -n | awk '{ v[NR] = $1 } END { printf "%s/%s/%s", v[1], v[int((NR + 1) / 2)], v[NR] }')
	top=$(awk 'BEGIN { r["normal"] = 0; r["elevated"] = 1; r["high"] = 2; r["critical"] = 3 }
		{ if (r[$2] >= best) { best = r[$2]; name = $2 } } END { print name }' "$1")
	srv=$(awk 'NR == 1 { t0 = $1 } $1 >= t0 + 2000 && $5 != "-" && $5 != "" { print $5 }' "$1" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", v[int((NR + 1) / 2)]; else print "-" }')
	echo "$lim $top $srv"
}

# minute_medians STATES COLUMN FORMAT: the median of COLUMN in each whole
# minute of a run's samples ("-" in a minute without one), "/"-separated. A
# minute with fewer samples than half of 300 is the cut-off tail of the run.
minute_medians() {
	gawk -v c="$2" -v f="$3" 'NR == 1 { t0 = $1 } { m = int(($1 - t0) / 60000); k[m]++ } $c != "-" && $c != "" { v[m][++n[m]] = $c }
		END {
			for (i = 0; i in k; i++) {
				if (k[i] < 150) break
				p = "-"; if (i in n) { asort(v[i]); p = sprintf(f, v[i][int((n[i] + 1) / 2)]) }
				line = line (i ? "/" : "") p
			}
			print line
		}' "$1"
}

# drift_figures STATES: "MEDIANS DRIFT%": the adaptive limit's median in each
# whole minute of the run, and how far the last minute's is from the second's.
drift_figures() {
	minute_medians "$1" 3 %s | awk -F/ '{ if (NF < 3) { print $0, "-"; exit }
		d = $NF - $2; if (d < 0) d = -d; printf "%s %.0f\n", $0, d * 100 / $2 }'
}

# minute_p99 CSV: the admitted p99 (ms) of the requests started in each whole
# minute of a run, "/"-separated.
minute_p99() {
	gawk -F, 'NR > 1 && $3 == "ok" { m = int($1 / 60000); v[m][++n[m]] = $4; if (m > last) last = m }
		END {
			for (i = 0; i <= last; i++) {
				if (!(i in n)) continue
				asort(v[i]); r = int(0.99 * n[i] + 0.999999)
				line = line (line == "" ? "" : "/") sprintf("%.1f", v[i][r])
			}
			print line
		}' "$1"
}

# minute_done CSV: the answers completed per second in each whole minute,
# "/"-separated.
minute_done() {
	gawk -F, 'NR > 1 && $3 == "ok" { m = int($1 / 60000); n[m]++; if (m > last) last = m }
		END { for (i = 0; i <= last; i++) line = line (i ? "/" : "") sprintf("%.0f", n[i] / 60); print line }' "$1"
}

# limit_near_ms STATES: ms from the first sample until the adaptive limit is
# first at most 1.25 x W (the slots the law was never told of); "never".
limit_near_ms() {
	[ -s "$1" ] || { echo "-"; return; }
	awk -v w="$W" 'NR == 1 { t0 = $1 } $3 <= 1.25 * w { print $1 - t0; found = 1; exit } END { if (!found) print "never" }' "$1"
}

# before_near_pct CSV NEAR_MS: % of the admitted requests that started before
# NEAR_MS (limit_near_ms; all of them for "never", "-" without one).
before_near_pct() {
	[ "$2" = - ] && { echo -; return; }
	gawk -F, -v n="$2" 'NR > 1 && $3 == "ok" { t++; if (n == "never" || $1 < n + 0) b++ }
		END { printf "%.0f\n", t ? b * 100 / t : 0 }' "$1"
}

# retry_figures CSV: "RETRIED P99_FIRST": the requests whose first SYN went
# unanswered and that waited for its retransmission (1 s on Linux): admitted
# with a connect time of 1 s or more, or refused 1 s or more after their
# start; and the admitted p99 of the others ("-" without any).
retry_figures() {
	gawk -F, '
		NR > 1 && $3 == "ok" { if ($5 != "" && $5 + 0 >= 1000) r++; else v[++n] = $4 }
		NR > 1 && $3 == "refused" && $4 + 0 >= 1000 { r++ }
		END {
			p = "-"
			if (n) { asort(v); k = int(0.99 * n + 0.999999); if (k < 1) k = 1; p = sprintf("%.1f", v[k]) }
			print r + 0, p
		}' "$1"
}

# drop_figures STATUS_JSON: "DROPPED REFLECT": the sheds the data plane sent
# as a drop rather than a RST (RST budget or reflection limit spent), and of
# them those at the reflection limit; "- -" without the status (no daemon).
drop_figures() {
	[ -s "$1" ] || { echo "- -"; return; }
	jq -r '"\([.classes[].counters.rst_capped] | add // 0) \(.counters.rst_reflect_limited // 0)"' "$1"
}

# reclaimed_figure STATUS_JSON: the idle connections the data plane
# reclaimed over the case (keepalive = "reclaim" or "refuse"); "-" without
# the status (no daemon).
reclaimed_figure() {
	[ -s "$1" ] || { echo "-"; return; }
	jq -r '[.classes[].counters.reclaimed // 0] | add' "$1"
}

# The row of a case: the columns of the table.
case_row() {
	local id=$1 server=$2 ms=$3 client=$4 ld=$5 start=$6 setup=$7 cap win_ms st cpu stepf="- - -" settled
	cap=$(cap_of "$server" "$ms")
	case $ld in
	burst) win_ms=2000 ;;
	step) win_ms=$((3 * STEP_S * 1000)) ;;
	drift) win_ms=$((DRIFT_S * 1000)) ;;
	*) win_ms=$(($(run_s "$ms") * 1000)) ;;
	esac
	read -r ok shed lost p50 p99 good shedp99 < <(csv_figures "$out/runs/$id.csv" 0 "$win_ms" \
		"$([ "$setup" = semaphore ] && echo 1 || echo 0)" "$([ "$setup" = refuse ] && echo 1 || echo 0)")
	pct=$(awk -v g="$good" -v c="$cap" 'BEGIN { printf "%.0f", g * 100 / c }')
	settled=$(csv_p99_from "$out/runs/$id.csv" 2000)
	st=$(state_figures "$out/runs/$id.states")
	cpu=$(awk '$1 == "cpu" { print $2 }' "$out/runs/$id.info")
	[ "$ld" = step ] && stepf=$(step_figures "$out/runs/$id.csv" "$(cap_of "$server" "$ms" 6)")
	if [ "$ld" = drift ]; then
		echo "$(drift_figures "$out/runs/$id.states") $(minute_p99 "$out/runs/$id.csv")" \
			"$(minute_medians "$out/runs/$id.states" 5 %.1f) $(minute_done "$out/runs/$id.csv")" >"$out/drift"
	fi
	local conns near
	conns=$(jq '[.classes[].connect_ms.count // 0] | add' "$out/runs/$id.json")
	near=$(limit_near_ms "$out/runs/$id.states")
	local drops read_lost
	drops=$(awk '$1 == "listen_drops" { print $2 }' "$out/runs/$id.info")
	read_lost=$(awk '$1 == "read_lost" { print $2 }' "$out/runs/$id.info")
	echo "$server $ms $client $ld $start $setup $ok $shed $lost $p50 $p99 $settled $good $pct $shedp99 $st $cpu $stepf" \
		"$near $conns $(before_near_pct "$out/runs/$id.csv" "$near") $(retry_figures "$out/runs/$id.csv")" \
		"$(drop_figures "$out/runs/$id.status.json") ${drops:--} $(jq -r '.start_lag_ms.p99 // "-"' "$out/runs/$id.json")" \
		"$(reclaimed_figure "$out/runs/$id.status.json") ${read_lost:--} $(csv_onset "$out/runs/$id.csv" "$ms")"
}

# --- the matrix --------------------------------------------------------------

cases=()
for ms in "${MSS[@]}"; do
	for server in "${SERVERS[@]}"; do
		loads=("${LOADS[@]}")
		[ "$STEP" = 1 ] && has_capacity_step "$server" && loads+=(step)
		for ld in "${loads[@]}"; do
			for client in "${CLIENTS[@]}"; do
				for start in "${STARTS[@]}"; do
					for setup in "${SETUPS[@]}"; do
						# A start time means something only with a daemon that learns.
						if [ "$start" = warm ] && [[ $setup != edgeshed && $setup != gate && $setup != refuse ]]; then continue; fi
						if [[ $ld == 0.7 || $ld == 0.9 ]] && [[ $setup != none && $setup != edgeshed && $setup != gate && $setup != refuse ]]; then continue; fi
						# Requests on open connections: keep-alive pools only.
						if [ "$setup" = refuse ] && [ "$client" != ka ]; then continue; fi
						if [ "$ms" -ge 200 ] && [ "${BENCH_SERVERS_SLOW_FULL:-0}" != 1 ] &&
							[[ $client == ka || $start == warm || $ld == burst || $ld == step || $setup == semaphore ]]; then
							continue
						fi
						if [ "$setup" = semaphore ] && [[ $server != eager && $server != threaded ]]; then continue; fi
						cases+=("$server $ms $client $ld $start $setup")
					done
				done
			done
		done
	done
done
if [ "$DRIFT_S" -gt 0 ] && [[ " ${SERVERS[*]} " == *" eager "* && " ${MSS[*]} " == *" 20 "* ]]; then
	cases+=("eager 20 conn drift cold edgeshed")
fi
echo "== ${#cases[@]} cases; per case a fresh lab"
: >"$out/rows"
n=0
for c in "${cases[@]}"; do
	n=$((n + 1))
	read -r server ms client ld start setup <<<"$c"
	id="$server.$ms.$client.$ld.$start.$setup"
	printf '   %3d/%d %-9s %3s ms %-4s %5s %-4s %-9s ' "$n" "${#cases[@]}" "$server" "$ms" "$client" "$ld" "$start" "$setup"
	if [ "$REPORT_ONLY" = 1 ]; then
		[ -s "$out/runs/$id.csv" ] || { echo "no run"; continue; }
	elif ! lab_run one_case "$id" $c >"$out/runs/$id.log" 2>&1; then
		echo "FAILED (runs/$id.log)"
		tail -n 5 "$out/runs/$id.log" | sed 's/^/      /'
		continue
	fi
	row=$(case_row "$id" $c)
	echo "$row" >>"$out/rows"
	awk '{ printf "ok %5s shed %5s lost %5s p50 %7s p99 %8s ms (from 2 s %s) %7s/s %4s%% refusal p99 %6s ms limit %s server p99 %s cpu %s%% first shed %s ms over 1.5x %s%%\n",
		$7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $18, $19, $(NF - 1), $NF }' <<<"$row"
done

# --- cost at COST_RATE requests/s --------------------------------------------------

# cost_case: "cost OFFERED ACHIEVED DAEMON_CPU% BPF_CPU% BPF_RUNS_PER_S
# BPF_NS_PER_REQUEST" over 10 s of keep-alive requests to a refserver of 0 ms
# (128 slots), and per program "cost_prog NAME RUNS_PER_REQUEST NS_PER_RUN
# NS_PER_REQUEST". Then the same load with keepalive = "refuse" on the port
# ("cost_refuse_prog ...": its request filter runs on every frame), and with
# the daemon protecting another port ("cost_unprotected_prog ..."): the runs
# that leave at the first check.
# Then the port timed at its service's cgroup (the server in a cgroup of
# its own, the port named by it: "cost_cgroup_prog ..."; the tracepoint
# timers unlinked), and another port timed at that cgroup with this server
# outside it ("cost_cgroup_unprotected_prog ..."): what the host's other
# sockets pay then.
# In the lab both ends are on this host, so each request also runs the
# programs for the client's own socket (they leave at that check too).
cost_case() {
	start_server refserver "$SVC_PORT" 128 0
	start_matrix_daemon port_only "$SVC_PORT"
	sleep 2
	cost_measure cost
	stop_daemon
	# keepalive = "refuse": the request filter at TC on every frame too (the
	# limit open: nothing refused).
	local cfg
	cfg=$(matrix_config port_only "$SVC_PORT")
	echo 'keepalive = "refuse"' >>"$cfg"
	start_daemon_config "$cfg"
	sleep 2
	cost_measure cost_refuse
	stop_daemon
	start_matrix_daemon port_only $((SVC_PORT + 1))
	sleep 2
	cost_measure cost_unprotected
	# In a pod (SV_POD) the ports already name where the server runs.
	[ -z "${SV_POD:-}" ] || return 0
	stop_daemon
	stop_server
	sv_pod_cgroup_up
	start_server refserver "$SVC_PORT" 128 0
	SV_PORT_CGROUP=$SV_POD_CGROUP
	start_matrix_daemon port_only "$SVC_PORT"
	sleep 2
	cost_measure cost_cgroup
	stop_daemon
	stop_server
	SV_IN_CGROUP=()
	start_server refserver "$SVC_PORT" 128 0
	start_matrix_daemon port_only $((SVC_PORT + 1))
	sleep 2
	cost_measure cost_cgroup_unprotected
	SV_PORT_CGROUP=
}
# cost_measure TAG: one 10 s load, its lines prefixed TAG.
cost_measure() {
	local tag=$1 secs=10 d0 d1 k0 k1 done_ps
	# One line per program: "NAME RUN_TIME_NS RUN_CNT".
	bpf_by_prog() {
		bpftool -j prog show | jq -r '.[] | select(.name | startswith("edgeshed")) |
			"\(.name) \(.run_time_ns // 0) \(.run_cnt // 0)"'
	}
	bpf_totals() { awk '{ ns += $2; n += $3 } END { printf "%.0f %.0f\n", ns, n }' "$1"; }
	d0=$(pid_ns "$DAEMON")
	bpf_by_prog >"$SC_WORK/$tag.progs0"
	load "$tag" --port "$SVC_PORT" --keep-alive --max-connections 64 --rate "$COST_RATE" \
		--count $((COST_RATE * secs)) --duration-s "$secs" --timeout-ms "$TIMEOUT_MS"
	d1=$(pid_ns "$DAEMON")
	bpf_by_prog >"$SC_WORK/$tag.progs1"
	k0=$(bpf_totals "$SC_WORK/$tag.progs0")
	k1=$(bpf_totals "$SC_WORK/$tag.progs1")
	done_ps=$(jv "$tag" .total.completed_per_sec)
	awk -v tag="$tag" -v r="$COST_RATE" -v g="$done_ps" -v d0="$d0" -v d1="$d1" -v s="$(jv "$tag" .duration_s)" \
		-v k0="$k0" -v k1="$k1" 'BEGIN {
			split(k0, a, " "); split(k1, b, " ")
			ns = b[1] - a[1]; runs = b[2] - a[2]
			printf "%s %s %.0f %.1f %.2f %.0f %.0f\n", tag, r, g, (d1 - d0) / 1e7 / s, ns / 1e7 / s, runs / s,
				(g > 0 ? ns / (g * s) : 0)
		}'
	# Where the time goes: per program, runs per request and ns per run.
	awk -v tag="$tag" -v g="$done_ps" -v s="$(jv "$tag" .duration_s)" '
		NR == FNR { ns0[$1] = $2; n0[$1] = $3; next }
		{
			ns = $2 - ns0[$1]; n = $3 - n0[$1]
			if (n > 0 && g > 0)
				printf "%s_prog %s %.2f %.0f %.0f\n", tag, $1, n / (g * s), ns / n, ns / (g * s)
		}' "$SC_WORK/$tag.progs0" "$SC_WORK/$tag.progs1"
}
if [ "$COST" = 1 ] && [ "$REPORT_ONLY" != 1 ]; then
	echo "== cost: $COST_RATE requests/s, keep-alive, refserver of 0 ms"
	stats_was=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
	lab_run cost_case >"$out/runs/cost.log" 2>&1 || echo "   cost: FAILED (runs/cost.log)"
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
	grep '^cost ' "$out/runs/cost.log" | tail -n 1 >"$out/cost"
	grep '^cost_prog ' "$out/runs/cost.log" >"$out/cost_progs" || true
	grep '^cost_unprotected_prog ' "$out/runs/cost.log" >"$out/cost_unprotected_progs" || true
	grep '^cost_refuse_prog ' "$out/runs/cost.log" >"$out/cost_refuse_progs" || true
	for tag in cost_cgroup cost_cgroup_unprotected; do
		grep "^$tag " "$out/runs/cost.log" | tail -n 1 >"$out/$tag" || true
		grep "^${tag}_prog " "$out/runs/cost.log" >"$out/${tag}_progs" || true
	done
fi

# --- tables --------------------------------------------------------------------

commit=$(git -C "$BENCH_LIB_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)
measured="machine: $(machine_line); $(date -u '+%Y-%m-%d %H:%M UTC'); commit $commit"
# A report of earlier runs names the machine, date and commit they ran on.
if [ "$REPORT_ONLY" = 1 ] && grep -q '^machine: ' "$out/table.txt" 2>/dev/null; then
	measured="$(grep -m1 '^machine: ' "$out/table.txt" | sed 's/; report re-read at commit .*//'); report re-read at commit $commit"
fi
header=(server "S ms" client load start setup ok shed lost "p50 ms" "p99 ms" "p99 from 2 s" "done/s" "% cap"
	"refusal p99 ms" "limit min/med/max" "top level" "server p99 ms" "cpu %" "halved p99 ms" "settle ms" "recover ms"
	"limit near ms" connections "% before near" "SYN retried" "p99 first SYN" "sheds dropped" "at reflect limit"
	"listen drops" "client lag p99 ms" reclaimed "read and lost" "first shed ms" "% over 1.5x S")
fmt='%-9s %4s %-4s %5s %-4s %-9s %6s %6s %5s %8s %8s %8s %8s %5s %8s %14s %9s %8s %5s %8s %6s %6s %6s %6s %6s %6s %8s %6s %6s %6s %6s %6s %6s %6s %6s\n'
{
	echo "Server matrix: $W slots x S ms; capacity measured (1.5x nominal for 2 s, throughput between first and last answer)"
	echo "$measured"
	echo "loads: FACTOR x capacity for ${RUN_S} s; burst: $BURST_N connections at 20,000/s; keep-alive pool $POOL; time-out ${TIMEOUT_MS} ms"
	echo
	printf '%-9s %4s %11s %8s %8s\n' server "S" capacity "cpu %" "idle p99"
	while read -r k m c cpu p50 p99; do printf '%-9s %4s %9s/s %8s %8s\n' "$k" "$m" "$c" "$cpu" "$p99"; done <"$out/capacity"
	echo
	# shellcheck disable=SC2059 # one format for the header and the rows
	printf "$fmt" "${header[@]}"
	# shellcheck disable=SC2059
	while read -r -a r; do printf "$fmt" "${r[@]}"; done <"$out/rows"
	echo
	echo "shed: refused by a RST, or answered 503 (semaphore), or reset on an open connection (refuse); lost:"
	echo "time-outs, resets, errors; p50/p99: admitted"
	echo "requests at the client, over the run and from 2 s on; done/s: answers completed within the arrival window"
	echo "(2 s for a burst), per second, and % cap of the measured capacity; refusal p99: the client's time to a RST"
	echo "or 503; limit: the daemon's adaptive_limit over the run (state.json every 200 ms); server p99: the median"
	echo "of the kernel's response-time p99 (1 s windows, from 2 s on), what the server itself took; cpu: the"
	echo "server's processes, % of one core; step only: halved p99, the admitted p99 while the capacity was halved;"
	echo "settle, recover: ms from the halving (the restore) until the admitted p99 stays under 1.25x the unloaded"
	echo "p99 (never: not within that phase); limit near: ms from the daemon's start until its adaptive limit is first"
	echo "at most 1.25x the server's slots (which it was never told); connections: established by the client;"
	echo "% before near: of the admitted requests, those started before the limit was near (at the initial limit"
	echo "of a cold start, while the first probes search for the capacity); SYN retried: requests whose first SYN"
	echo "went unanswered, admitted with a connect of 1 s or more or refused after 1 s or more (Linux retransmits a"
	echo "SYN after 1 s); p99 first SYN: the admitted p99 of the others; sheds dropped: sheds sent as a drop rather"
	echo "than a RST (edgeshed's counters), at reflect limit: of them, over the RST limit per client prefix; listen"
	echo "drops: SYNs the server's kernel dropped (TcpExt ListenDrops: accept queue full); client lag: how late"
	echo "loadgen started its requests (p99), a measure of the client's own delays on this host; reclaimed: idle"
	echo "connections the data plane aborted (keepalive = \"refuse\"); read and lost: requests the server read and"
	echo "could not answer (the eager and threaded servers count them; - for the others); first shed: when the first"
	echo "refused request started, ms into the load (- for none); % over 1.5x S: of the admitted, those that took"
	echo "over 1.5x the service time."
} | tee "$out/table.txt"
{
	echo "| server | S ms | capacity/s | cpu % | idle p99 ms |"
	echo "|---|---|---|---|---|"
	while read -r k m c cpu p50 p99; do echo "| $k | $m | $c | $cpu | $p99 |"; done <"$out/capacity"
	echo
	(
		IFS='|'
		echo "|${header[*]}|"
	)
	echo "|$(printf -- '---|%.0s' "${header[@]}")"
	while read -r -a r; do (
		IFS='|'
		echo "|${r[*]}|"
	); done <"$out/rows"
} >"$out/table.md"

# --- targets -------------------------------------------------------------------

# reflect_limit: edgeshed's RST reflection limit in the runs, from a status
# the daemon of port_only.toml wrote ("-" before any).
reflect_limit() {
	local f=("$out"/runs/*.edgeshed.status.json)
	[ -s "${f[0]}" ] || { echo -; return; }
	jq -r '.rst_reflect | "\(.per_sec)/s per /\(.prefix_v4) after a burst of \(.burst)"' "${f[0]}"
}
# Issue #15's targets, for edgeshed (port_only.toml) from a cold start; a miss
# is listed with the figures that say why.
targets() {
	local drift="- -"
	[ -s "$out/drift" ] && drift=$(cat "$out/drift")
	gawk -v pool="$POOL" -v w="$W" -v drift="$drift" -v reflect="$(reflect_limit)" '
		FILENAME == ARGV[1] { u[$1 " " $2] = $6; next }
		# Requests that waited for a SYN retransmission, and who dropped the SYN:
		# edgeshed (a shed sent as a drop) or the server'"'"'s kernel.
		function retried(   why) {
			if (f[26] == "" || f[26] == 0) return ""
			why = sprintf("; %d requests waited 1 s for a SYN retransmission (admitted p99 without them %s ms):", f[26], f[27])
			if (f[28] != "-" && f[28] > 0)
				why = why sprintf(" edgeshed sent %d sheds as drops, %d at the RST reflection limit (%s; the lab'"'"'s client is one address)", f[28], f[29], reflect)
			if (f[30] != "-" && f[30] > 0)
				why = why sprintf("%s the server'"'"'s kernel dropped %d (ListenDrops)", (f[28] > 0 ? ";" : ""), f[30])
			if (f[28] == "-" && f[30] == "-")
				why = why " the run recorded neither edgeshed'"'"'s nor the server kernel'"'"'s drops"
			else if (!(f[28] > 0) && !(f[30] > 0))
				why = why " no drop counted by edgeshed or the server'"'"'s kernel"
			return why
		}
		{ key = $1 " " $2 " " $3 " " $4; row[key " " $6 " " $5] = $0 }
		# Why edgeshed (f) lost to a comparator (g) on the same case: the side
		# it lost on, and what held its p99 up (the search from the initial
		# limit, connections held open, the halving).
		function versus(name, p99_ok, done_ok,    why) {
			why = "edgeshed/" name ":"
			if (!p99_ok) {
				why = why sprintf(" p99 %.2fx", (g[11] > 0 ? f[11] / g[11] : 0))
				if (f[12] != "-")
					why = why sprintf(" (from 2 s on %s/%s ms)", f[12], g[12])
				if (f[4] == "step")
					why = why sprintf(", while halved %s/%s ms", f[20], g[20])
				else if (f[3] == "ka")
					why = why sprintf(", %s/%s connections admitted and held open", f[24], g[24])
				else if (f[23] == "never")
					why = why sprintf(", the limit never within 1.25x the slots in the run (min/med/max %s)", f[16])
				else
					why = why sprintf(", limit <= 1.25x the slots after %s ms (%s%% of the admitted requests started before)", f[23], f[25])
				if (name == "semaphore" && f[3] == "ka")
					why = why ", the semaphore refuses requests (503) on open connections"
				why = why retried()
			}
			if (!done_ok)
				why = why (p99_ok ? "" : ";") sprintf(" done %.0f%% of the %s'"'"'s (shed %s/%s, limit min/med/max %s)",
					(g[13] > 0 ? 100 * f[13] / g[13] : 0), name, f[8], g[8], f[16])
			return why
		}
		function line(name, c, value, ok, why) {
			total++; met += ok
			printf "%-28s %-26s %-18s %s\n", name, c, value, ok ? "met" : "MISSED: " why
		}
		END {
			n = asorti(row, keys)
			for (i = 1; i <= n; i++) {
				split(row[keys[i]], f, " ")
				if (f[6] != "edgeshed" || f[5] != "cold") continue
				c = f[1] " " f[2] "ms " f[3] " " f[4] (f[4] ~ /^[0-9.]+$/ ? "x" : "")
				un = u[f[1] " " f[2]]
				ka = f[3] == "ka" ? "; keep-alive: " f[24] " of the pool of " pool " connections admitted (" w " slots) carry every request to the end, and the server itself takes p99 " f[18] " ms" : ""
				if (f[4] == "1.6" || f[4] == "5") {
					r = (f[11] != "-" && un > 0) ? f[11] / un : 99
					line("p99 <= 1.25x unloaded", c, sprintf("%.2fx (%s ms)", r, f[11]), r <= 1.25,
						sprintf("from 2 s on %s ms (%.2fx); server p99 %s ms; limit %s, ", f[12], (f[12] != "-" ? f[12] / un : 0), f[18], f[16]) \
						(f[23] == "never" ? "never <= 1.25x the slots in the run" : sprintf("<= 1.25x the slots after %s ms (%s%% of the admitted requests started before)", f[23], f[25])) ka retried())
					static_done = ""
					if ((f[1] " " f[2] " " f[3] " " f[4] " static cold") in row) {
						split(row[f[1] " " f[2] " " f[3] " " f[4] " static cold"], g, " ")
						static_done = "; the static cap at the true capacity completed " g[14] "%"
					}
					line("done >= 95% of capacity", c, f[14] "%", f[14] >= 95,
						sprintf("limit min/med/max %s for %d slots; shed %d, lost %d; the server'"'"'s processes at %s%% of a core", f[16], w, f[8], f[9], f[19]) static_done)
					# The client times a refusal; on a small host it shares the
					# cores with the processes of the server.
					line("refusal p99 <= 1 ms", c, f[15] " ms", f[15] != "-" && f[15] <= 1,
						(f[15] == "-" ? "nothing was shed" : sprintf("lost %d; the client'"'"'s own lag p99 %s ms (requests started late); the server'"'"'s processes at %s%% of a core beside the client", f[9], f[31], f[19]) retried()))
				} else if (f[4] == "0.7") {
					line("0 shed at 0.7x", c, f[8] " shed", f[8] == 0, sprintf("limit min/med/max %s; top level %s", f[16], f[17]))
				} else if (f[4] == "step") {
					line("halved: p99 back <= 2 s", c, f[21] " ms", f[21] != "never" && f[21] <= 2000,
						sprintf("p99 while halved %s ms (unloaded %s); limit %s", f[20], un, f[16]) \
						(f[3] == "ka" ? "; keep-alive: " f[24] " of the pool of " pool " connections admitted (" w / 2 " slots while halved) stay open and carry every request, and the server itself takes p99 " f[18] " ms" : ""))
				} else if (f[4] == "drift") {
					split(drift, d, " ")
					# From the second minute to the last: the limit, what the
					# server itself took, what it completed.
					nm = split(d[1], lm, "/"); split(d[4], sm, "/"); split(d[5], dm, "/")
					why = "medians per minute " d[1]
					if (nm >= 3 && (nm in sm))
						why = why sprintf("; from the second minute to the last, the limit %s -> %s while the server'"'"'s own p99 went %s -> %s ms and its completions %s -> %s/s", lm[2], lm[nm], sm[2], sm[nm], dm[2], dm[nm])
					line("limit drift <= 10% / 5 min", c, d[2] "%", d[2] != "-" && d[2] <= 10, why)
				}
			}
			# edgeshed against the comparators, same case.
			for (i = 1; i <= n; i++) {
				split(row[keys[i]], f, " ")
				if (f[6] != "edgeshed" || f[5] != "cold") continue
				key = f[1] " " f[2] " " f[3] " " f[4]
				c = f[1] " " f[2] "ms " f[3] " " f[4] (f[4] ~ /^[0-9.]+$/ ? "x" : "")
				if ((key " semaphore cold") in row) {
					split(row[key " semaphore cold"], g, " ")
					p99_ok = f[11] + 0 < g[11] + 0
					done_ok = f[13] + 0 > g[13] + 0
					line("beats the semaphore", c, sprintf("p99 %s/%s done %s/%s", f[11], g[11], f[13], g[13]),
						p99_ok && done_ok, versus("semaphore", p99_ok, done_ok))
				}
				if ((key " static cold") in row) {
					split(row[key " static cold"], g, " ")
					p99_ok = f[11] + 0 <= 1.1 * g[11]
					done_ok = f[13] + 0 >= g[13] + 0
					line("matches static, more done", c, sprintf("p99 %s/%s done %s/%s", f[11], g[11], f[13], g[13]),
						p99_ok && done_ok, versus("static cap", p99_ok, done_ok))
				}
			}
			# Issue #36: never harm, cold and warm (0 shed at 0.7x and 0.9x);
			# the case of seed 000 (10 x 20 ms at 1.6x, new connections) on nginx
			# and the eager event loop: admitted p99 <= 1.5x unloaded cold,
			# <= 1.25x warm and within 10% of the semaphore; done >= 95%.
			for (i = 1; i <= n; i++) {
				split(row[keys[i]], f, " ")
				if (f[6] != "edgeshed") continue
				c = f[1] " " f[2] "ms " f[3] " " f[4] (f[4] ~ /^[0-9.]+$/ ? "x " : " ") f[5]
				if ((f[4] == "0.7" || f[4] == "0.9") && (f[5] == "warm" || f[4] == "0.9"))
					line("0 shed at " f[4] "x", c, f[8] " shed", f[8] == 0, sprintf("limit min/med/max %s; top level %s", f[16], f[17]))
				if (f[4] != "1.6" || f[3] != "conn" || f[2] != "20" || (f[1] != "nginx" && f[1] != "eager")) continue
				un = u[f[1] " " f[2]]
				r = (f[11] != "-" && un > 0) ? f[11] / un : 99
				bound = f[5] == "warm" ? 1.25 : 1.5
				line(sprintf("#36 p99 <= %.2fx unloaded", bound), c, sprintf("%.2fx (%s ms)", r, f[11]), r <= bound,
					sprintf("from 2 s on %s ms (%.2fx); limit %s, <= 1.25x the slots after %s ms (%s%% of the admitted requests started before)",
						f[12], (f[12] != "-" ? f[12] / un : 0), f[16], f[23], f[25]))
				line("#36 done >= 95% of capacity", c, f[14] "%", f[14] >= 95, sprintf("limit min/med/max %s; shed %d, lost %d", f[16], f[8], f[9]))
				key = f[1] " " f[2] " " f[3] " " f[4] " semaphore cold"
				if (f[5] == "warm" && (key in row)) {
					split(row[key], g, " ")
					line("#36 warm p99 within 10% of semaphore", c, sprintf("p99 %s/%s ms", f[11], g[11]), f[11] + 0 <= 1.1 * g[11],
						sprintf("%.2fx the semaphore'"'"'s", (g[11] > 0 ? f[11] / g[11] : 0)))
				}
			}
			# Issue #37: keepalive = "refuse" on the pool of 5x the slots.
			# Its shed column counts the requests reset on open connections;
			# lost is what was neither answered nor refused.
			for (i = 1; i <= n; i++) {
				split(row[keys[i]], f, " ")
				if (f[6] != "refuse") continue
				c = f[1] " " f[2] "ms " f[3] " " f[4] (f[4] ~ /^[0-9.]+$/ ? "x " : " ") f[5]
				un = u[f[1] " " f[2]]
				if (f[4] == "0.7" || f[4] == "0.9") {
					line("#37 0 refused, 0 reclaimed at " f[4] "x", c, f[8] " refused, " f[32] " reclaimed", f[8] == 0 && f[32] == 0,
						sprintf("limit min/med/max %s; top level %s", f[16], f[17]))
				} else if (f[4] == "1.6" || f[4] == "5") {
					r = (f[12] != "-" && un > 0) ? f[12] / un : 99
					line("#37 p99 from 2 s <= 1.25x", c, sprintf("%.2fx (%s ms)", r, f[12]), r <= 1.25,
						sprintf("over the run %s ms; server p99 %s ms; limit %s; %s connections", f[11], f[18], f[16], f[24]))
					line("#37 done >= 95% of capacity", c, f[14] "%", f[14] >= 95, sprintf("limit min/med/max %s; refused %d", f[16], f[8]))
					line("#37 refusal p99 <= 1 ms", c, f[15] " ms", f[15] != "-" && f[15] <= 1,
						(f[15] == "-" ? "nothing was refused" : sprintf("the client'"'"'s own lag p99 %s ms", f[31])))
					line("#37 0 lost", c, f[9] " lost", f[9] == 0, "time-outs or errors: neither answered nor refused")
				} else if (f[4] == "step") {
					line("#37 halved: p99 back <= 2 s", c, f[21] " ms", f[21] != "never" && f[21] <= 2000,
						sprintf("p99 while halved %s ms (unloaded %s); limit %s", f[20], un, f[16]))
				}
				if (f[33] != "-" && f[33] != "") {
					line("#37 0 read and then lost", c, f[33] " read and lost", f[33] == 0, "the server'"'"'s own count")
				}
			}
			printf "\ntargets met: %d of %d\n", met, total
		}' "$out/capacity" "$out/rows"
}
{
	if [ -s "$out/cost" ]; then
		echo
		read -r _ r g dcpu kcpu runs nsreq <"$out/cost"
		echo "Cost at $r requests/s offered ($g/s completed), keep-alive, refserver of 0 ms: the daemon $dcpu% of a core;"
		echo "edgeshed's BPF programs $kcpu% of a core ($runs runs/s, $nsreq ns per request; kernel.bpf_stats_enabled)."
		if [ -s "$out/cost_progs" ]; then
			echo "Per program (runs per request, ns per run, ns per request), the port protected:"
			sort -k5 -nr "$out/cost_progs" | awk '{ printf "  %-28s %6s %6s %6s\n", $2, $3, $4, $5 }'
		fi
		if [ -s "$out/cost_refuse_progs" ]; then
			echo "The same load, the port protected with keepalive = \"refuse\" (its request filter on every frame):"
			sort -k5 -nr "$out/cost_refuse_progs" | awk '{ printf "  %-28s %6s %6s %6s\n", $2, $3, $4, $5 }'
		fi
		if [ -s "$out/cost_unprotected_progs" ]; then
			echo "The same load, the port not protected (every run leaves at the first check):"
			sort -k5 -nr "$out/cost_unprotected_progs" | awk '{ printf "  %-28s %6s %6s %6s\n", $2, $3, $4, $5 }'
		fi
		if [ -s "$out/cost_cgroup_progs" ]; then
			read -r _ _ g _ kcpu _ nsreq <"$out/cost_cgroup"
			echo "The same load, the port timed at its server's cgroup (cgroup_skb; the tracepoint timers unlinked):"
			echo "  $nsreq ns per request ($g/s completed, BPF $kcpu% of a core)"
			sort -k5 -nr "$out/cost_cgroup_progs" | awk '{ printf "  %-28s %6s %6s %6s\n", $2, $3, $4, $5 }'
		fi
		if [ -s "$out/cost_cgroup_unprotected_progs" ]; then
			read -r _ _ g _ kcpu _ nsreq <"$out/cost_cgroup_unprotected"
			echo "The same load, another port timed at that cgroup, this server outside it (what the host's other sockets pay):"
			echo "  $nsreq ns per request ($g/s completed, BPF $kcpu% of a core)"
			sort -k5 -nr "$out/cost_cgroup_unprotected_progs" | awk '{ printf "  %-28s %6s %6s %6s\n", $2, $3, $4, $5 }'
		fi
	fi
	if [ -s "$out/drift" ]; then
		read -r med pct p99s srvs dones <"$out/drift"
		echo "Drift over ${DRIFT_S} s at 1.6x (eager, new connections): the adaptive limit's median per minute $med;"
		echo "the last minute's is $pct% from the second's. Admitted p99 per minute: $p99s ms; the server's own"
		echo "p99 (kernel, median of 1 s windows): ${srvs:--} ms; completed: ${dones:--}/s."
	fi
	echo
	echo "Targets (edgeshed with port_only.toml; issue #15's from a cold start, then issue #36's; a miss says why):"
	targets
} | tee -a "$out/table.txt"
echo "tables: $out/table.txt, $out/table.md"

# --- plot: admitted p99 per case (log), one panel per client ---------------------
if command -v gnuplot >/dev/null && [ -s "$out/rows" ]; then
	for client in "${CLIENTS[@]}"; do
		awk -v c="$client" '$3 == c && $11 != "-" { printf "\"%s %s %sx %s %s\" %s\n", $1, $2, $4, $5, $6, $11 }' \
			"$out/rows" >"$out/p99.$client.dat"
	done
	{
		echo 'set terminal pngcairo size 1400,900 font ",9" noenhanced'
		echo "set output \"$out/servers.png\""
		echo "set multiplot layout ${#CLIENTS[@]},1 title \"Server matrix: admitted p99 per case (log scale; 40 ms = 2x a 20 ms service)\""
		echo 'set style fill solid 0.6; set boxwidth 0.7; set logscale y; set grid y; set xtics rotate by -60 font ",7"'
		for client in "${CLIENTS[@]}"; do
			echo "set title \"client: $client\"; set ylabel \"admitted p99 (ms)\""
			echo "plot \"$out/p99.$client.dat\" using 0:2:xtic(1) with boxes notitle, 40 with lines dt 2 title \"40 ms\""
		done
		echo 'unset multiplot'
	} | gnuplot && echo "plot: $out/servers.png"
fi
