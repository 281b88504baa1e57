#!/usr/bin/env bash
# Controller overhead: CPU the daemon spends at its tick with every signal
# source this build has (in-flight from the data plane, PSI for cpu, memory
# and io, an injected file), attached to a veth in a lab namespace.
# Prints figures; asserts nothing.
source "$(dirname "$0")/../netns/lib.sh"
SECONDS_TO_RUN=${SECONDS_TO_RUN:-30}

lab_up
work=$(mktemp -d)
LAB_DIRS+=("$work") # lab_cleanup keeps the exit status; a trap of our own would not
# The run directory where a host keeps it: /run is a tmpfs under systemd, and
# a disk filesystem would add its own cost of the state file's rename.
run_dir=$(mktemp -d /dev/shm/edgeshed-bench.XXXXXX)
LAB_DIRS+=("$run_dir")
echo 0.5 >"$work/injected"

# CPU time of all of a process's threads, ns: schedstat counts in ns where
# /proc/PID/stat's utime and stime count in clock ticks (10 ms).
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat | awk '{ ns += $1 } END { printf "%d\n", ns }'
}

run_one() {
	local tick=$1 cfg=$work/bench.toml pid t0 t1 c0 c1 rss
	cat >"$cfg" <<TOML
[daemon]
tick = "$tick"
run_dir = "$run_dir/run"
[dataplane]
mode = "enforce"
[[interface]]
name = "$SRV_IF"
hook = "xdp-generic"
[[port]]
port = 80
class = "normal"
[[signal]]
name = "established"
kind = "inflight"
target = 100.0
[[signal]]
name = "cpu"
kind = "psi"
resource = "cpu"
target = 50.0
[[signal]]
name = "memory"
kind = "psi"
resource = "memory"
target = 20.0
hard_safety = true
[[signal]]
name = "io"
kind = "psi"
resource = "io"
target = 50.0
[[signal]]
name = "accept_queue"
kind = "accept_queue"
target = 0.02
[[signal]]
name = "syn_rate"
kind = "dataplane"
counter = "syn"
target = 10000.0
[[signal]]
name = "listen_drops"
kind = "netstat"
target = 10.0
[[signal]]
name = "injected"
kind = "file"
path = "$work/injected"
target = 1.0
TOML
	nsenter --net="/run/netns/$SRV_NS" "$EDGESHED" run --config "$cfg" >"$work/log" 2>&1 &
	pid=$!
	LAB_PIDS+=("$pid")
	sleep 2 # start-up (attach, first ticks) is not steady state
	c0=$(cpu_ns "$pid")
	t0=$(date +%s.%N)
	sleep "$SECONDS_TO_RUN"
	c1=$(cpu_ns "$pid")
	t1=$(date +%s.%N)
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
	kill -TERM "$pid"
	wait "$pid" || true
	awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v tick="$tick" -v rss="$rss" '
	BEGIN {
		wall = t1 - t0; cpu = (c1 - c0) / 1e9
		ms = tick; sub(/ms$/, "", ms)
		ticks = wall * 1000 / ms
		printf "%-8s %8.1f s %10.3f s %12.3f %12.1f %10.2f%% %8.1f\n", tick, wall, cpu, cpu * 1000 / wall,
		       cpu * 1e6 / ticks, 100 * cpu / wall, rss / 1024
	}'
}

echo "edgeshed controller overhead: 8 signals (inflight, accept_queue, dataplane, netstat, psi cpu/memory/io, file), 1 interface"
echo "run directory on $(stat -f -c %T "$run_dir")"
printf "%-8s %10s %12s %12s %12s %11s %8s\n" tick wall "cpu" "cpu ms/s" "cpu us/tick" "% of core" "RSS MiB"
row=$(run_one 100ms)
echo "$row"
run_one 10ms
echo "(CPU: the run time of the daemon's threads in /proc/PID/task/*/schedstat, in ns; ${SECONDS_TO_RUN}s of steady state each; RSS: VmRSS at the end)"
pct=$(awk '{ v = $(NF - 1); sub(/%$/, "", v); print v }' <<<"$row")
echo "target: the daemon at most 0.5% of a core at the default tick (100ms): ${pct}% of a core, $(awk -v p="$pct" 'BEGIN { print (p <= 0.5) ? "met" : "NOT met" }')"
