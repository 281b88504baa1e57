#!/usr/bin/env bash
# End-to-end overload, the classic case, side by side in one run: a service
# of 10 workers x 20 ms (capacity 500/s) offered 1.6x and 5x its capacity,
# with no shedding, with a static in-flight threshold (edgeshed's data plane
# alone, cap 10, RST), and with edgeshed adaptive (the daemon with the demo's
# configuration: only the port named, the capacity limit on the response time
# the data plane measures, RST). Both edgeshed setups
# have the same RST budget, 10,000,000 per CPU and second, so that every shed
# SYN gets its RST.
#
# Each run, in a lab of its own: ONSET_S at 0.4x (steady state), then
# OVER_S at the overload, a new connection per request (loadgen, open loop,
# 5 s timeout). From the per-request CSV, over the overload phase:
#   goodput           requests answered 200 within the overload window, per
#                     second of it;
#   admitted p50/p99  latency of the admitted requests that started in it;
#   first shed        from the overload's onset to the first RST a client saw;
#   p99 settled       from the onset to the first 100 ms mark after which the
#                     admitted requests' p99 (all that start from there to the
#                     end of the overload) is under 2x the service time, 40 ms:
#                     0 if it never went over, "never" if it never comes back.
# Medians of REPEAT interleaved runs. Prints figures and asserts nothing.
source "$(dirname "$0")/bench_lib.sh"
need jq gnuplot gawk

ROOT=$(cd "$BENCH_LIB_DIR/../.." && pwd)
ONSET_S=${ONSET_S:-1}
OVER_S=${OVER_S:-3}
FACTORS=(${OVERLOAD_FACTORS:-1.6 5})
SETUPS=(${OVERLOAD_SETUPS:-none static adaptive})
out=$BENCH_OUT/overload
rm -rf "$out"
mkdir -p "$out/runs"

colour() { case $1 in none) echo "#9467bd" ;; static) echo "#2ca02c" ;; adaptive) echo "#1f77b4" ;; esac; }
label() {
	case $1 in
	none) echo "no shedding" ;;
	static) echo "static in-flight cap 10" ;;
	adaptive) echo "edgeshed adaptive" ;;
	esac
}

one_run() {
	local s=$1 f=$2 n=$3 base=$out/runs/$1.$2.$3 daemon
	start_bench_refserver "$base.refserver.log" --port "$SVC_PORT" --workers 10 --service-ms 20 --duration-s 300
	case $s in
	none) ;;
	static) edgeshed_static xdp-generic rst "$SVC_PORT" --cap 10 ;;
	adaptive)
		# The demo's configuration, with the static setup's RST limits: the
		# refusal rate at 5x, from the lab's one client address, is above the
		# reflection limit of one network (1,000 a second), and a shed SYN
		# over it is dropped, to be retried a second later.
		sed -e "s|@IFACE@|$SRV_IF|" -e "s|@SERVER@|$SRV_V4|" -e "s|^port = 80$|port = $SVC_PORT|" \
			-e 's|^action = "rst"$|action = "rst"\nrst_per_sec_per_cpu = 10000000\nrst_reflect_per_sec = 0|' \
			-e "s|^\\[daemon\\]\$|[daemon]\\nrun_dir = \"$base.run\"|" \
			"$ROOT/scripts/demo.toml" >"$base.toml"
		grep -q '^rst_per_sec_per_cpu = 10000000$' "$base.toml" || { echo "no RST budget in $base.toml" >&2; return 1; }
		grep -q "^port = $SVC_PORT$" "$base.toml" || { echo "no port $SVC_PORT in $base.toml" >&2; return 1; }
		grep -q "^run_dir = \"$base.run\"$" "$base.toml" || { echo "no run_dir in $base.toml" >&2; return 1; }
		"${BENCH_NICE[@]}" nsenter --net="/run/netns/$SRV_NS" "$EDGESHED" run --config "$base.toml" \
			>"$base.daemon.log" 2>&1 &
		daemon=$!
		LAB_PIDS+=("$daemon")
		wait_for --within 10 --try "the daemon" grep -q "running:" "$base.daemon.log" ||
			{ echo "the daemon did not start" >&2; return 1; }
		sleep 2 # the daemon sees the idle service first, as in the demo
		;;
	esac
	"${BENCH_NICE[@]}" nsenter --net="/run/netns/$CLI_NS" "$LOADGEN" --target "$SRV_V4" --port "$SVC_PORT" \
		--ramp "0.4x:${ONSET_S}s,${f}x:${OVER_S}s" --capacity 500 --timeout-ms 5000 --quiet \
		--csv "$base.csv" --json "$base.json"
	if [ -n "${daemon:-}" ]; then
		kill -TERM "$daemon"
		wait "$daemon" || true
	fi
}

# "GOODPUT P50 P99 FIRST_SHED_MS SETTLED_MS" over the overload phase (phase 1).
run_figures() {
	gawk -F, -v over_s="$OVER_S" '
		function pct(arr, k, p,   r) { r = int(p * k / 100 + 0.999999); if (r < 1) r = 1; return arr[r] }
		NR == 1 { next }
		$6 == 1 { if (onset == "" || $1 < onset) onset = $1; rows[++m] = $0 }
		END {
			for (i = 1; i <= m; i++) {
				split(rows[i], c, ",")
				t[i] = c[1] - onset; out[i] = c[3]; lat[i] = c[4]
				if (out[i] == "ok") {
					ok[++nok] = lat[i]
					if (t[i] + lat[i] <= over_s * 1000) good++
				}
				if (out[i] == "refused" && (shed == "" || t[i] + lat[i] < shed)) shed = t[i] + lat[i]
			}
			asort(ok)
			# The earliest 100 ms mark from which the rest of the overload has
			# its admitted p99 under 40 ms.
			settled = "never"
			for (mark = 0; mark < over_s * 1000; mark += 100) {
				delete v; k = 0
				for (i = 1; i <= m; i++) if (out[i] == "ok" && t[i] >= mark) v[++k] = lat[i]
				if (k == 0) break
				asort(v)
				if (pct(v, k, 99) <= 40) { settled = mark; break }
			}
			printf "%.0f %s %s %s %s\n", good / over_s, nok ? sprintf("%.1f", pct(ok, nok, 50)) : "-",
				nok ? sprintf("%.1f", pct(ok, nok, 99)) : "-", shed == "" ? "none" : sprintf("%.0f", shed), settled
		}' "$out/runs/$1.$2.$3.csv"
}

echo "== End-to-end overload: 10 workers x 20 ms, ${ONSET_S}s at 0.4x then ${OVER_S}s at ${FACTORS[*]}x, $REPEAT runs, interleaved"
for n in $(seq "$REPEAT"); do
	for f in "${FACTORS[@]}"; do
		for s in "${SETUPS[@]}"; do
			printf '   run %d/%d: %4sx %-26s' "$n" "$REPEAT" "$f" "$(label "$s")"
			bench_lab_run one_run "$s" "$f" "$n" >"$out/runs/$s.$f.$n.log" 2>&1 ||
				{ echo "FAILED"; cat "$out/runs/$s.$f.$n.log" >&2; exit 1; }
			run_figures "$s" "$f" "$n" | awk '{ printf "goodput %4d/s  p99 %8s ms  first shed %5s ms  p99 settled %5s ms\n", $1, $3, $4, $5 }'
		done
	done
done

# Medians; "none"/"never" stay words when every run says so.
med_col() { # FILE COL
	local vals
	vals=$(awk -v c="$2" '$c ~ /^[0-9.]+$/ { print $c }' "$1")
	if [ -z "$vals" ]; then awk -v c="$2" 'NR == 1 { print $c }' "$1"; else median <<<"$vals"; fi
}
for f in "${FACTORS[@]}"; do
	for s in "${SETUPS[@]}"; do
		for n in $(seq "$REPEAT"); do run_figures "$s" "$f" "$n"; done >"$out/$s.$f.figures"
		echo "$f $s $(med_col "$out/$s.$f.figures" 1) $(med_col "$out/$s.$f.figures" 2) $(med_col "$out/$s.$f.figures" 3) $(med_col "$out/$s.$f.figures" 4) $(med_col "$out/$s.$f.figures" 5)"
	done
done >"$out/medians"

{
	echo "End-to-end overload: 10 workers x 20 ms (capacity 500/s); ${ONSET_S}s at 0.4x, then ${OVER_S}s at the overload"
	echo "machine: $(machine_line); median of $REPEAT interleaved runs"
	echo
	printf "%-7s %-26s %8s %9s %10s %10s %11s %12s %12s\n" "offered" "setup" "goodput" "x none" \
		"admit p50" "admit p99" "p99 x none" "first shed" "p99 settled"
	while read -r f s gp p50 p99 shed settled; do
		base_gp=$(awk -v f="$f" '$1 == f && $2 == "none" { print $3 }' "$out/medians")
		base_p99=$(awk -v f="$f" '$1 == f && $2 == "none" { print $5 }' "$out/medians")
		printf "%-7s %-26s %8s %9s %10s %10s %11s %12s %12s\n" "${f}x" "$(label "$s")" "$gp/s" \
			"$(ratio "$gp" "$base_gp")" "$p50" "$p99" "$(ratio "$p99" "$base_p99")" "$shed" "$settled"
	done <"$out/medians"
	echo
	echo "goodput: requests answered 200 within the overload window, per second of it; admit p50/p99 (ms):"
	echo "the admitted requests that started in it; first shed: ms from the overload's onset to the first RST a"
	echo "client saw; p99 settled: ms from the onset to the first 100 ms mark after which the admitted p99 of the"
	echo "rest of the overload is under 40 ms (2x the service time); 0: it never went over."
	for f in "${FACTORS[@]}"; do
		read -r shed settled < <(awk -v f="$f" '$1 == f && $2 == "adaptive" { print $6, $7 }' "$out/medians")
		[ -n "${shed:-}" ] || continue
		worst=$(awk -v a="$shed" -v b="$settled" 'BEGIN {
			if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/) print "-"; else print (a > b ? a : b) }')
		met=$(awk -v w="$worst" 'BEGIN { print (w != "-" && w < 300) ? "met" : "NOT met" }')
		echo "target: edgeshed adaptive reacts within 300 ms at ${f}x: first shed $shed ms, p99 settled $settled ms: $met"
	done
} | tee "$out/table.txt"

# Plot: admitted latency over time, one panel per overload, run 1 of each setup.
plots=""
for f in "${FACTORS[@]}"; do
	for s in "${SETUPS[@]}"; do
		awk -F, 'NR > 1 && $3 == "ok" { print $1 / 1000, $4 }' "$out/runs/$s.$f.1.csv" >"$out/$s.$f.ok.dat"
		awk -F, 'NR > 1 && $3 == "refused" { n[int($1 / 100)]++ } END { for (b in n) print b / 10, n[b] * 10 }' \
			"$out/runs/$s.$f.1.csv" | sort -n >"$out/$s.$f.shed.dat"
	done
done
{
	echo 'set terminal pngcairo size 1200,900 font ",10" noenhanced'
	echo "set output \"$out/overload.png\""
	echo "set multiplot layout 2,${#FACTORS[@]} title \"10 workers x 20 ms: admitted latency and shed rate over time (run 1; onset at ${ONSET_S} s)\""
	echo 'set grid'
	for f in "${FACTORS[@]}"; do
		echo "set title \"offered ${f}x capacity\""
		echo 'set xlabel "time since the start of the run (s)"'
		echo 'set ylabel "admitted latency (ms, log)"; set logscale y; set key top left opaque; set xrange [0:*]'
		echo "set arrow from $ONSET_S, graph 0 to $ONSET_S, graph 1 nohead dt 2"
		line="plot"
		for s in "${SETUPS[@]}"; do line="$line \"$out/$s.$f.ok.dat\" using 1:2 with points pt 7 ps 0.25 lc rgb \"$(colour "$s")\" title \"$(label "$s")\","; done
		echo "${line%,}"
		echo 'unset arrow'
	done
	for f in "${FACTORS[@]}"; do
		echo "set title \"offered ${f}x: connections refused per second\""
		echo 'unset logscale y; set ylabel "refused per second"; set yrange [0:*]; set xrange [0:*]; set key top left opaque'
		line="plot"
		for s in static adaptive; do
			[[ " ${SETUPS[*]} " == *" $s "* ]] && line="$line \"$out/$s.$f.shed.dat\" using 1:2 with steps lw 2 lc rgb \"$(colour "$s")\" title \"$(label "$s")\","
		done
		echo "${line%,}"
		echo 'set autoscale y'
	done
	echo 'unset multiplot'
} | gnuplot
echo "plot: $out/overload.png"
