#!/usr/bin/env bash
# edgeshed's demo: the classic overload case, first without and then with
# edgeshed. A service of 10 workers at 20 ms (500 requests/s) is offered
# 1.6x its capacity by a real client through a veth pair, each request on
# a new connection. Prints both runs side by side, writes a plot, cleans up.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
out=${DEMO_OUT:-$build/demo}
RATE=${RATE:-800}
COUNT=${COUNT:-2000}
export EDGESHED=$build/edgeshed TCP_TOOL=$build/tcp_tool
source "$root/tests/netns/lib.sh"

mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.csv "$out"/*.log "$out"/*.png
lab_up

nsenter --net="/run/netns/$SRV_NS" "$build/refserver" --port 80 --workers 10 --service-ms 20 \
	--metrics-port 9100 --duration-s 300 >"$out/refserver.log" 2>&1 &
LAB_PIDS+=($!)
for _ in $(seq 50); do
	in_cli "$TCP_TOOL" connect "$SRV_V4" 80 200 >/dev/null 2>&1 && break
	sleep 0.1
done

offer() {
	in_cli "$build/loadgen" --target "$SRV_V4" --port 80 --rate "$RATE" --count "$COUNT" \
		--timeout-ms 5000 --json "$out/$1.json" --csv "$out/$1.csv" --quiet
}

echo "== 1/2: $COUNT requests at $RATE/s, no edgeshed"
offer without
sleep 3 # let the queue the overload built drain

echo "== 2/2: the same, with edgeshed (a config naming only the port; action rst)"
# Its run directory (lock, state file) in the demo's folder, gone with the
# lab: the host's /run/edgeshed belongs to a daemon of the host's own.
sed -e "s|@IFACE@|$SRV_IF|" -e "s|@SERVER@|$SRV_V4|" -e "s|^\[daemon\]\$|[daemon]\nrun_dir = \"$out/run\"|" \
	"$root/scripts/demo.toml" >"$out/edgeshed.toml"
grep -q "^run_dir = \"$out/run\"" "$out/edgeshed.toml" || { echo "demo: no run_dir in the config" >&2; exit 1; }
LAB_DIRS+=("$out/run")
nsenter --net="/run/netns/$SRV_NS" "$EDGESHED" run --config "$out/edgeshed.toml" \
	>"$out/edgeshed.log" 2>&1 &
daemon=$!
LAB_PIDS+=("$daemon")
for _ in $(seq 50); do grep -q "running:" "$out/edgeshed.log" && break; sleep 0.1; done
sleep 1 # running, and never told the service's capacity
offer with
kill -TERM "$daemon"
wait "$daemon" || true

row() { # label jq-expression format
	printf "%-34s %14s %14s\n" "$1" "$(jq -r "$2" "$out/without.json")" "$(jq -r "$2" "$out/with.json")"
}
echo
echo "The classic overload case: 10 workers x 20 ms (capacity 500/s), $COUNT requests at $RATE/s"
printf "%-34s %14s %14s\n" "" "no edgeshed" "edgeshed"
row "offered" '.total.offered'
row "admitted and completed (ok)" '.total.ok'
row "shed (refused by RST)" '.total.refused'
row "timed out (5 s)" '.total.timeout'
row "completed/s" '.total.completed_per_sec | floor'
row "admitted latency p50 (ms)" '.total.ok_latency_ms.p50 | . * 10 | floor / 10'
row "admitted latency p99 (ms)" '.total.ok_latency_ms.p99 | . * 10 | floor / 10'
row "time to refusal p99 (ms)" '.total.refused_ms.p99 // "-" | if type == "number" then . * 100 | floor / 100 else . end'

bash "$root/scripts/plot_demo.sh" "$out" && echo && echo "plot: $out/demo.png"
