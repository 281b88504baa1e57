#!/usr/bin/env bash
# Cost of refusing a connection, side by side in one run: edgeshed's RST
# (XDP, a static in-flight cap of 10), nginx limit_conn 10 returning 503,
# HAProxy maxconn 10 with a queue bounded at 10 (503 beyond it). nginx and
# HAProxy run in the server namespace, from configs in a temporary folder, in
# front of the same reference service (10 workers x 20 ms: 500 requests/s).
#
# Each run, in a lab of its own, offers two loads to the setup, a new
# connection per request, OVER_RATE/s (5x the capacity) for LOAD_S seconds:
#   over  to the service as it is: the admitted requests' latency, and the
#         client's time to refusal (connect to RST, or to a complete 503);
#   full  FULL_S seconds at the same rate, while 10 long /stream requests
#         hold every slot of the setup (cap, limit_conn, maxconn), so that
#         every new request is refused: CPU per refused connection = the server
#         side's CPU during this load, less its quiet rate (streams included:
#         the mean of the second before and the second after), over the
#         refusals.
# Server-side CPU is the server veth's NAPI thread plus the server namespace's
# processes (refserver, nginx, haproxy): see bench_lib.sh.
# Medians of REPEAT interleaved runs. Prints figures and asserts nothing.
source "$(dirname "$0")/bench_lib.sh"
need nginx haproxy ethtool jq gnuplot bpftool gawk

OVER_RATE=${OVER_RATE:-2500}
LOAD_S=${LOAD_S:-2}
FULL_S=${FULL_S:-3}
SETUPS=(${REFUSAL_SETUPS:-es_rst nginx haproxy})
out=$BENCH_OUT/refusal
rm -rf "$out"
mkdir -p "$out/runs"

label() {
	case $1 in
	es_rst) echo "edgeshed rst (XDP, cap 10)" ;;
	nginx) echo "nginx limit_conn 10 (503)" ;;
	haproxy) echo "HAProxy maxconn 10 + queue 10" ;;
	esac
}
port_of() { case $1 in es_rst) echo "$SVC_PORT" ;; nginx) echo 8081 ;; haproxy) echo 8082 ;; esac; }

# One load through the setup: "IDLE_DELTA | LOAD_DELTA" (cpu_delta lines) in
# $base.NAME.cpu, the requests in $base.NAME.csv.
one_load() {
	local name=$1 rate=$2 port=$3 base=$4 seconds=$5 m0 m1 m2 m3
	m0=$(cpu_mark)
	sleep 1
	m1=$(cpu_mark)
	"${BENCH_NICE[@]}" nsenter --net="/run/netns/$CLI_NS" "$LOADGEN" --target "$SRV_V4" --port "$port" \
		--rate "$rate" --duration-s "$seconds" --timeout-ms 3000 --quiet \
		--csv "$base.$name.csv" --json "$base.$name.json"
	m2=$(cpu_mark)
	sleep 1
	m3=$(cpu_mark)
	# The quiet rate is the mean of the seconds before and after the load.
	echo "$(cpu_delta "$m0" "$m1") | $(cpu_delta "$m1" "$m2") | $(cpu_delta "$m2" "$m3")" >"$base.$name.cpu"
}

one_run() {
	local s=$1 n=$2 base=$out/runs/$1.$2 dir port
	dir=$(mktemp -d /tmp/edgeshed-bench.XXXXXX)
	LAB_DIRS+=("$dir")
	client_xdp_pass
	lab_threaded_napi
	start_bench_refserver "$base.refserver.log" --port "$SVC_PORT" --workers 10 --service-ms 20 --duration-s 300
	port=$(port_of "$s")
	case $s in
	es_rst) edgeshed_static xdp rst "$SVC_PORT" --cap 10 ;;
	nginx) start_nginx "$dir" ;;
	haproxy) start_haproxy "$dir" ;;
	esac
	wait_for --within 5 --try "port $port to answer" client_connects "$port" || true
	renice_napi
	cpu_pids
	one_load over "$OVER_RATE" "$port" "$base" "$LOAD_S"
	hold_slots "$port" $((FULL_S + 8))
	sleep 0.5
	one_load full "$OVER_RATE" "$port" "$base" "$FULL_S"
}

# "OK REFUSED CPU_S" of one load: refused = RSTs and 5xx answers.
load_cpu() {
	local base=$1 idle load after
	IFS='|' read -r idle load after <"$base.cpu"
	awk -F, -v idle="$idle" -v ld="$load" -v after="$after" '
		NR > 1 { if ($3 == "ok") ok++; else if ($3 == "refused" || $7 == "http_5xx") ref++ }
		END {
			split(idle, i, " "); split(ld, l, " "); split(after, a, " ")
			bg = ((i[2] + i[3]) / i[1] + (a[2] + a[3]) / a[1]) / 2
			printf "%d %d %.4f\n", ok, ref, l[2] + l[3] - bg * l[1]
		}' "$base.csv"
}
# Time to refusal (ms) of the refused requests, or admitted latency.
load_pct() { # CSV WHICH(refused|ok) P
	gawk -F, -v which="$2" -v p="$3" '
		NR > 1 && ((which == "ok" && $3 == "ok") || (which == "refused" && ($3 == "refused" || $7 == "http_5xx"))) { v[++n] = $4 }
		END { if (n == 0) { print "-"; exit } asort(v); r = int(p * n / 100 + 0.999999); if (r < 1) r = 1; printf "%.3f\n", v[r] }' "$1"
}

# "CPU_US_PER_REFUSED REFUSED_PER_S REFUSAL_P50 REFUSAL_P99 OK_P99 OK_PER_S FULL_REFUSED_SHARE"
run_figures() {
	local base=$out/runs/$1.$2 o f
	o=$(load_cpu "$base.over")
	f=$(load_cpu "$base.full")
	awk -v o="$o" -v f="$f" -v s="$LOAD_S" -v r50="$(load_pct "$base.over.csv" refused 50)" \
		-v r99="$(load_pct "$base.over.csv" refused 99)" -v o99="$(load_pct "$base.over.csv" ok 99)" 'BEGIN {
		split(o, x, " "); split(f, y, " ")
		per_ref = y[2] > 0 ? y[3] / y[2] * 1e6 : -1
		printf "%.1f %.0f %s %s %s %.0f %.3f\n", per_ref, x[2] / s, r50, r99, o99, x[1] / s, (y[1] + y[2]) ? y[2] / (y[1] + y[2]) : 0
	}'
}

echo "== Cost of refusing a connection: $OVER_RATE/s for ${LOAD_S}s, then the same with every slot held; $REPEAT runs, interleaved"
for n in $(seq "$REPEAT"); do
	for s in "${SETUPS[@]}"; do
		printf '   run %d/%d: %-32s' "$n" "$REPEAT" "$(label "$s")"
		bench_lab_run one_run "$s" "$n" >"$out/runs/$s.$n.log" 2>&1 ||
			{ echo "FAILED"; cat "$out/runs/$s.$n.log" >&2; exit 1; }
		run_figures "$s" "$n" | awk '{ printf "%9.1f us cpu/refused %6d refused/s  refusal p99 %s ms\n", $1, $2, $4 }'
	done
done

for s in "${SETUPS[@]}"; do
	for n in $(seq "$REPEAT"); do run_figures "$s" "$n"; done >"$out/$s.figures"
	col() { awk -v c="$1" '{ print $c }' "$out/$s.figures" | median; }
	echo "$s $(col 1) $(col 2) $(col 3) $(col 4) $(col 5) $(col 6) $(col 7)"
done >"$out/medians"
ref() { awk -v s="$1" -v c="$2" '$1 == s { print $c }' "$out/medians"; }
es=$(ref es_rst 2)

{
	echo "Cost of refusing a connection: 10 workers x 20 ms (500/s), offered $OVER_RATE/s for ${LOAD_S}s, new connection each"
	echo "machine: $(machine_line); median of $REPEAT interleaved runs"
	echo
	printf "%-31s %11s %9s %10s %11s %11s %10s %10s %10s\n" "setup" "cpu us/ref" "x edgesh" "refused/s" \
		"refusal p50" "refusal p99" "x edgesh" "admit p99" "ok/s"
	r99_es=$(ref es_rst 5)
	while read -r s cpu rps r50 r99 o99 oks share; do
		printf "%-31s %11s %9s %10s %11s %11s %10s %10s %10s\n" "$(label "$s")" "$cpu" "$(ratio "$cpu" "$es")" \
			"$rps" "$r50" "$r99" "$(ratio "$r99" "$r99_es")" "$o99" "$oks"
	done <"$out/medians"
	echo
	echo "cpu us/ref: server-side CPU microseconds per refused connection (server veth's NAPI thread + server"
	echo "namespace processes), measured while 10 held requests fill every slot so that all are refused;"
	echo "refusal p50/p99 (ms): the client's connect to RST, or to a complete 503, under the plain overload;"
	echo "admit p99 (ms): the admitted requests' latency; ok/s: admitted and completed per second."
	ng=$(ref nginx 2)
	if [ -n "$ng" ] && [ -n "$es" ]; then
		r=$(ratio "$ng" "$es")
		met=$(awk -v r="$r" 'BEGIN { print (r != "-" && r >= 20) ? "met" : "NOT met" }')
		echo "target: edgeshed refuses >= 20x cheaper in CPU than nginx: $r x, $met"
	fi
	hp=$(ref haproxy 2)
	[ -n "$hp" ] && [ -n "$es" ] && echo "ratio: HAProxy / edgeshed = $(ratio "$hp" "$es") x"
	true
} | tee "$out/table.txt"

awk '{ print NR - 1, $2, $5 }' "$out/medians" >"$out/plot.dat"
labels=$(i=0; while read -r s _; do printf '"%s" %d,' "$(label "$s")" "$i"; i=$((i + 1)); done <"$out/medians")
gnuplot <<GP
set terminal pngcairo size 1100,600 font ",10" noenhanced
set output "$out/refusal.png"
set multiplot layout 1,2 title "Refusing a connection at 5x overload, median of $REPEAT runs ($(machine_line))"
set style fill solid 0.7
set boxwidth 0.6
set xtics (${labels%,}) rotate by -30
set bmargin 9
set grid ytics
set logscale y
set ylabel "server-side CPU per refused connection (us, log)"
plot "$out/plot.dat" using 1:2 with boxes notitle lc rgb "#c0504d", \
     "" using 1:2:(sprintf("%.1f", \$2)) with labels offset 0,0.7 notitle
set ylabel "time to refusal at the client, p99 (ms, log)"
plot "$out/plot.dat" using 1:3 with boxes notitle lc rgb "#4f81bd", \
     "" using 1:3:(sprintf("%.2f", \$3)) with labels offset 0,0.7 notitle
unset multiplot
GP
echo "plot: $out/refusal.png"
