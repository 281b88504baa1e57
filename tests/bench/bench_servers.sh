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
#   semaphore  the in-process comparator: the server's own --fail-fast (503
#              at once when every slot is busy); eager and threaded only;
#   static     the daemon with configs/static_cap.toml: a fixed in-flight cap
#              of W at every level and class, RST budget unlimited.
# Clients (loadgen, open loop, 5 s time-out): "conn", a new connection per
# request; "ka", keep-alive over a fixed pool of BENCH_SERVERS_POOL (50).
# Loads: FACTOR x the measured capacity for RUN_S seconds, or "burst":
# BENCH_SERVERS_BURST (4,000) connections at 20,000/s. Starts: "cold" (the
# daemon starts the moment the load does), "warm" (10 s before).
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
# restore until the admitted p99 stays under 1.25x the unloaded p99.
# Output: $BENCH_OUT/servers/table.txt, table.md, runs/, servers.png.
#
# The full matrix is long (420 runs of 10-25 s: about two hours).
# BENCH_SERVERS_QUICK=1: 20 ms, 1.6x and 5x, cold start, both clients, all
# four servers, no step (about 50 runs). Each
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
WARM_S=${BENCH_SERVERS_WARM_S:-10}
TIMEOUT_MS=5000
if [ "${BENCH_SERVERS_QUICK:-0}" = 1 ]; then
	d_ms="20" d_loads="1.6 5" d_starts="cold" d_step=0
else
	d_ms="20 200" d_loads="0.7 1.6 5 burst" d_starts="cold warm" d_step=1
fi
SERVERS=(${BENCH_SERVERS_SERVERS:-nginx eager threaded refserver})
MSS=(${BENCH_SERVERS_MS:-$d_ms})
LOADS=(${BENCH_SERVERS_LOADS:-$d_loads})
STARTS=(${BENCH_SERVERS_STARTS:-$d_starts})
CLIENTS=(${BENCH_SERVERS_CLIENTS:-conn ka})
SETUPS=(${BENCH_SERVERS_SETUPS:-none edgeshed semaphore static})
STEP=${BENCH_SERVERS_STEP:-$d_step}
out=$BENCH_OUT/servers
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
	*)
		rate=$(awk -v c="$cap" -v f="$ld" 'BEGIN { printf "%.0f", c * f }')
		args+=(--rate "$rate" --count $((rate * RUN_S)) --duration-s "$RUN_S")
		;;
	esac
	case $setup in
	edgeshed | static)
		local tmpl=port_only kv=()
		[ "$setup" = static ] && tmpl=static_cap kv=("CAP=$W")
		start_matrix_daemon "$tmpl" "$SVC_PORT" "${kv[@]}"
		start_state_sampler "$SC_WORK/states"
		[ "$start" = warm ] && sleep "$WARM_S"
		;;
	esac
	local c0 c1
	c0=$(server_cpu_s)
	load_bg case --port "$SVC_PORT" --timeout-ms "$TIMEOUT_MS" "${args[@]}"
	if [ "$ld" = step ]; then
		sleep "$STEP_S"
		capacity_step half
		sleep "$STEP_S"
		capacity_step full
	fi
	wait "$LOAD_PID" || fail "loadgen: exit $?"
	c1=$(server_cpu_s)
	stop_state_sampler
	echo "cpu $(awk -v a="$c0" -v b="$c1" -v d="$(jv case .duration_s)" 'BEGIN { printf "%.0f", (d > 0 ? (b - a) * 100 / d : 0) }')" \
		>"$out/runs/$id.info"
	cp "$SC_WORK/case.json" "$out/runs/$id.json"
	cp "$SC_WORK/case.csv" "$out/runs/$id.csv"
	[ -f "$SC_WORK/states" ] && cp "$SC_WORK/states" "$out/runs/$id.states"
	[ -n "$DAEMON_LOG" ] && cp "$DAEMON_LOG" "$out/runs/$id.daemon.log"
	true
}

# --- figures -----------------------------------------------------------------

# step_figures CSV UNLOADED_P99: "HALVED_P99 RECOVER_MS": the admitted p99 of
# requests that started while the capacity was halved; the ms from the
# restore to the first 100 ms mark after which the admitted p99 (requests
# started from there to the end) is under 1.25x UNLOADED_P99 ("never").
step_figures() {
	gawk -F, -v s="$STEP_S" -v u="$2" '
		function p99(a, n,   r) { asort(a); r = int(0.99 * n + 0.999999); if (r < 1) r = 1; return a[r] }
		NR > 1 && $3 == "ok" { t[++m] = $1; l[m] = $4 }
		END {
			k = 0; for (i = 1; i <= m; i++) if (t[i] >= s * 1000 && t[i] < 2 * s * 1000) h[++k] = l[i]
			half = k ? sprintf("%.1f", p99(h, k)) : "-"
			rec = "never"
			for (mark = 2 * s * 1000; mark < 3 * s * 1000; mark += 100) {
				delete v; k = 0
				for (i = 1; i <= m; i++) if (t[i] >= mark) v[++k] = l[i]
				if (k == 0) break
				if (p99(v, k) <= 1.25 * u) { rec = mark - 2 * s * 1000; break }
			}
			print half, rec
		}' "$1"
}

# state_figures STATES: "LIMIT_MIN/MEDIAN/MAX TOP_LEVEL" of a run's samples.
state_figures() {
	[ -s "$1" ] || { echo "- -"; return; }
	local lim top
	lim=$(awk '{ print $3 }' "$1" | sort -n | awk '{ v[NR] = $1 } END { printf "%s/%s/%s", v[1], v[int((NR + 1) / 2)], v[NR] }')
	top=$(awk 'BEGIN { r["normal"] = 0; r["elevated"] = 1; r["high"] = 2; r["critical"] = 3 }
		{ if (r[$2] >= best) { best = r[$2]; name = $2 } } END { print name }' "$1")
	echo "$lim $top"
}

# The row of a case: the columns of the table.
case_row() {
	local id=$1 server=$2 ms=$3 client=$4 ld=$5 start=$6 setup=$7 cap win_ms fig st cpu stepf="- -"
	cap=$(cap_of "$server" "$ms")
	case $ld in
	burst) win_ms=2000 ;;
	step) win_ms=$((3 * STEP_S * 1000)) ;;
	*) win_ms=$((RUN_S * 1000)) ;;
	esac
	read -r ok shed lost p50 p99 good shedp99 < <(csv_figures "$out/runs/$id.csv" 0 "$win_ms" \
		"$([ "$setup" = semaphore ] && echo 1 || echo 0)")
	pct=$(awk -v g="$good" -v c="$cap" 'BEGIN { printf "%.0f", g * 100 / c }')
	st=$(state_figures "$out/runs/$id.states")
	cpu=$(awk '$1 == "cpu" { print $2 }' "$out/runs/$id.info")
	[ "$ld" = step ] && stepf=$(step_figures "$out/runs/$id.csv" "$(cap_of "$server" "$ms" 6)")
	echo "$server $ms $client $ld $start $setup $ok $shed $lost $p50 $p99 $good $pct $shedp99 $st $cpu $stepf"
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
						# A start time means something only with a daemon.
						if [ "$start" = warm ] && [[ $setup == none || $setup == semaphore ]]; then continue; fi
						if [ "$setup" = semaphore ] && [[ $server != eager && $server != threaded ]]; then continue; fi
						cases+=("$server $ms $client $ld $start $setup")
					done
				done
			done
		done
	done
done
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
	awk '{ printf "ok %5s shed %5s lost %5s p50 %7s p99 %8s ms %7s/s %4s%% refusal p99 %6s ms limit %s cpu %s%%\n",
		$7, $8, $9, $10, $11, $12, $13, $14, $15, $17 }' <<<"$row"
done

# --- tables --------------------------------------------------------------------

header=(server "S ms" client load start setup ok shed lost "p50 ms" "p99 ms" "done/s" "% cap" "refusal p99 ms"
	"limit min/med/max" "top level" "cpu %" "halved p99 ms" "recover ms")
{
	echo "Server matrix: $W slots x S ms; capacity measured (1.5x nominal for 2 s, throughput between first and last answer)"
	echo "machine: $(machine_line); $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git -C "$BENCH_LIB_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "loads: FACTOR x capacity for ${RUN_S} s; burst: $BURST_N connections at 20,000/s; keep-alive pool $POOL; time-out ${TIMEOUT_MS} ms"
	echo
	printf '%-9s %4s %11s %8s %8s\n' server "S" capacity "cpu %" "idle p99"
	while read -r k m c cpu p50 p99; do printf '%-9s %4s %9s/s %8s %8s\n' "$k" "$m" "$c" "$cpu" "$p99"; done <"$out/capacity"
	echo
	printf '%-9s %4s %-4s %5s %-4s %-9s %6s %6s %5s %8s %8s %8s %5s %8s %14s %9s %5s %8s %8s\n' "${header[@]}"
	while read -r -a r; do
		printf '%-9s %4s %-4s %5s %-4s %-9s %6s %6s %5s %8s %8s %8s %5s %8s %14s %9s %5s %8s %8s\n' "${r[@]}"
	done <"$out/rows"
	echo
	echo "shed: refused by a RST, or answered 503 (semaphore); lost: time-outs, resets, errors; p50/p99: admitted"
	echo "requests; done/s: answers completed within the arrival window (2 s for a burst), per second, and % cap of"
	echo "the measured capacity; refusal p99: the client's time to a RST or 503; limit: the daemon's adaptive_limit"
	echo "over the run (state.json every 200 ms); cpu: the server's processes, % of one core; halved p99 and"
	echo "recover (step only): admitted p99 while the capacity was halved, and ms from the restore until the"
	echo "admitted p99 stays under 1.25x the unloaded p99 (never: not within the run)."
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
