#!/usr/bin/env bash
# Plots the demo's two runs from their per-request CSVs: admitted latency
# over time, and the rate of refused connections.
set -euo pipefail
out=$1
command -v gnuplot >/dev/null || { echo "gnuplot missing: run scripts/deps.sh" >&2; exit 1; }

# Refusals per 100 ms bin, as a rate per second.
for run in without with; do
	awk -F, 'NR > 1 && $3 == "refused" { n[int($1 / 100)]++ }
		END { for (b in n) print b / 10, n[b] * 10 }' "$out/$run.csv" | sort -n >"$out/$run.shed.dat"
	awk -F, 'NR > 1 && $3 == "ok" { print $1 / 1000, $4 }' "$out/$run.csv" >"$out/$run.ok.dat"
done

gnuplot <<GP
set terminal pngcairo size 1100,700 font ",10"
set output "$out/demo.png"
set key bottom right
set multiplot layout 2,1 title "10 workers x 20 ms, offered 1.6x capacity: without and with edgeshed"
set xlabel "time since the start of the run (s)"
set ylabel "admitted request latency (ms)"
set logscale y
set grid
plot "$out/without.ok.dat" using 1:2 with points pt 7 ps 0.3 title "no edgeshed", \
     "$out/with.ok.dat" using 1:2 with points pt 7 ps 0.3 title "edgeshed"
unset logscale y
set ylabel "connections refused per second"
set yrange [0:*]
plot "$out/with.shed.dat" using 1:2 with steps lw 2 title "edgeshed: shed (RST)", \
     0 with lines dt 2 title "no edgeshed: refuses nothing, queues"
unset multiplot
GP
