# Shared by the lab benchmarks (bench_synflood.sh, bench_refusal.sh,
# bench_overload.sh), on top of the netns lab of tests/netns/lib.sh:
# CPU accounting, medians, the results folder and its tables.
#
# Each run gets a lab of its own: `bench_lab_run FUNC ARGS...` calls FUNC in a
# subshell that builds a fresh pair of namespaces (no conntrack entries, SYN
# queue or counters left by the run before) and tears it down on every exit
# path, through lib.sh's EXIT trap.
#
# Benchmarks print figures and assert nothing: the machine is shared.
set -euo pipefail

: "${EDGESHED:?path of the edgeshed binary}"
: "${TCP_TOOL:?path of tcp_tool}"
: "${REFSERVER:?path of the refserver binary}"
: "${LOADGEN:?path of the loadgen binary}"
: "${BPF_OUT:?folder of the BPF objects (baseline.bpf.o)}"
: "${BENCH_OUT:?results folder}"

BENCH_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPEAT=${REPEAT:-3}
HZ_TICKS=$(getconf CLK_TCK)
mkdir -p "$BENCH_OUT"

# The lab's processes run at a raised priority, like the scenarios': the host
# is shared, and a compiler on the same two cores must not pass for a slow
# service. A command word, so that `$BENCH_NICE cmd &` is cmd's own pid.
BENCH_NICE=(nice -n "${BENCH_NICE_LEVEL:--10}")

# The service's port in the benchmarks that cap in-flight connections. Not
# 80: edgeshed's tracker counts established connections by port in every
# network namespace of the host, so another lab's port-80 traffic (a test
# running next to the benchmark) would count against this lab's cap.
SVC_PORT=${SVC_PORT:-18080}

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# bench_lab_run FUNC ARGS...: FUNC in a fresh lab, in a subshell. Returns
# FUNC's status; the lab is gone afterwards.
bench_lab_run() {
	(
		LAB_ID=$BASHPID
		source "$BENCH_LIB_DIR/../netns/lib.sh"
		lab_up
		"$@"
	)
}

# --- CPU accounting --------------------------------------------------------
#
# A veth delivers a packet in the sender's context: without care, the
# server's whole receive path (XDP, TC, netfilter, TCP) would run in softirq
# on the sending CPU, inside the sender's own system call, and be charged to
# the client. So each lab turns on NAPI on both ends (GRO on, TSO off, so that
# every skb takes the NAPI ring) and makes it threaded: each veth's receive
# path then runs in a kernel thread of its own, "napi/IFACE-N". The server's
# side of a packet is its NAPI thread (from the ring to XDP or the socket,
# and the replies up to the client's ring) plus the processes in the server
# namespace (refserver, nginx, haproxy, the daemon). The client's NAPI thread
# and the generators are the client's, and are not counted. Task time is the
# scheduler's own clock (/proc/PID/task/TID/schedstat, nanoseconds), not the
# tick-sampled utime+stime.
threaded_napi() {
	local ns=$1 dev=$2
	nsenter --net="/run/netns/$ns" ethtool -K "$dev" gro on tso off >/dev/null
	# sysfs shows the namespace of whoever mounted it: ip netns exec mounts one.
	ip netns exec "$ns" sh -c "echo 1 >/sys/class/net/$dev/threaded"
}
lab_threaded_napi() {
	threaded_napi "$SRV_NS" "$SRV_IF"
	threaded_napi "$CLI_NS" "$CLI_IF"
}
# CPU time (ns, the scheduler's sum_exec_runtime) of every thread of the
# given pids, in one awk.
pid_ns() {
	[ $# -gt 0 ] || { echo 0; return; }
	local pid
	for pid in "$@"; do echo /proc/"$pid"/task/*/schedstat; done | xargs cat 2>/dev/null |
		awk '{ s += $1 } END { printf "%.0f\n", s }'
}
napi_pids() { ps -e -o pid=,comm= | awk -v p="napi/$1-" 'index($2, p) == 1 { print $1 }'; }
# The NAPI threads get the lab processes' priority. Called after attaching:
# an XDP attach may restart a veth's NAPI.
renice_napi() {
	local pid
	for pid in $(napi_pids "$SRV_IF") $(napi_pids "$CLI_IF"); do
		renice -n "${BENCH_NICE_LEVEL:--10}" -p "$pid" >/dev/null
	done
}
# cpu_pids: looks up the threads and processes that cpu_mark reads, once all
# of them run (a process started later is not counted).
cpu_pids() {
	CPU_SRV_NAPI=($(napi_pids "$SRV_IF"))
	CPU_CLI_NAPI=($(napi_pids "$CLI_IF"))
	CPU_SRV_PROCS=($(ip netns pids "$SRV_NS"))
}
# cpu_mark: "EPOCH_NS SERVER_NAPI_NS SERVER_PROCESSES_NS CLIENT_NAPI_NS
# HOST_SOFTIRQ_TICKS" (the last in USER_HZ ticks, from /proc/stat).
cpu_mark() {
	echo "$(date +%s%N) $(pid_ns "${CPU_SRV_NAPI[@]}") $(pid_ns "${CPU_SRV_PROCS[@]}") $(pid_ns "${CPU_CLI_NAPI[@]}") $(awk '/^cpu / { print $8; exit }' /proc/stat)"
}
# cpu_delta MARK0 MARK1: "WALL_S SERVER_NAPI_S SERVER_PROC_S CLIENT_NAPI_S HOST_SOFTIRQ_S".
cpu_delta() {
	awk -v hz="$HZ_TICKS" -v a="$1" -v b="$2" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "%.6f %.6f %.6f %.6f %.4f\n", (y[1] - x[1]) / 1e9, (y[2] - x[2]) / 1e9,
			(y[3] - x[3]) / 1e9, (y[4] - x[4]) / 1e9, (y[5] - x[5]) / hz
	}'
}

# --- statistics ------------------------------------------------------------

# median: of the numbers on stdin, one a line ("-" when there are none).
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# csv_latency CSV FROM_MS TO_MS: "COUNT_OK P50 P99 NOT_OK" of loadgen's
# requests that started in [FROM_MS, TO_MS] (ms since loadgen's start).
# Nearest rank, as loadgen computes it. gawk for asort (deps.sh installs it).
csv_latency() {
	gawk -F, -v from="$2" -v to="$3" '
		NR > 1 && $1 >= from && $1 <= to {
			if ($3 == "ok") v[++n] = $4; else bad++
		}
		function rank(p,   r) { r = int(p * n / 100 + 0.999999); if (r < 1) r = 1; return v[r] }
		END {
			if (n == 0) { printf "0 - - %d\n", bad; exit }
			asort(v)
			printf "%d %.2f %.2f %d\n", n, rank(50), rank(99), bad + 0
		}' "$1"
}

# ratio A B: A / B with two decimals, "-" if either is missing or B is 0.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "-" || b == "-" || a == "" || b == "" || b + 0 == 0) print "-"
		else printf "%.2f\n", a / b }'
}

# --- the lab's pieces ------------------------------------------------------

# start_bench_refserver ARGS...: refserver in the server namespace; waits for
# port 80 to answer. Output in $1.log's folder.
start_bench_refserver() {
	local log=$1
	shift
	"${BENCH_NICE[@]}" nsenter --net="/run/netns/$SRV_NS" "$REFSERVER" --metrics-port 0 "$@" >"$log" 2>&1 &
	LAB_PIDS+=($!)
	local port
	port=$(awk '{ for (i = 1; i < NF; i++) if ($i == "--port") { print $(i + 1); exit } }' <<<"$*")
	for _ in $(seq 50); do
		in_cli "$TCP_TOOL" connect "$SRV_V4" "${port:-80}" 200 >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "refserver does not answer: $(cat "$log")" >&2
	return 1
}

# edgeshed_static HOOK ACTION PORT POLICY-ARGS...: the data plane without the
# daemon (--heartbeat-timeout-ms 0 keeps the static policy), enforcing.
# The reflection limit is off, so that RSTs measure their own cost, unless
# ES_RST_REFLECT=default leaves it at its defaults.
edgeshed_static() {
	local hook=$1 action=$2 port=$3 reflect=(--rst-reflect-per-sec 0)
	shift 3
	[ "${ES_RST_REFLECT:-off}" = default ] && reflect=()
	in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook "$hook" --port "$port" --mode enforce \
		--action "$action" --heartbeat-timeout-ms 0 --rst-per-sec 10000000 "${reflect[@]}" >/dev/null
	in_srv "$EDGESHED" policy --iface "$SRV_IF" --class normal "$@" >/dev/null
}
# A counter of the data plane's status (e.g. shed_fraction, shed_cap, syn).
edgeshed_counter() {
	"$EDGESHED" status --iface "$SRV_IF" --json 2>/dev/null |
		jq -r --arg k "$1" '[.. | objects | select(has($k)) | .[$k] | numbers] | add // 0' 2>/dev/null || echo 0
}

# --- output ----------------------------------------------------------------

# The machine, one line, for each table's header.
machine_line() {
	echo "$(uname -r), $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) cores"
}

need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || { echo "$c missing: run scripts/deps.sh" >&2; exit 1; }
	done
}
