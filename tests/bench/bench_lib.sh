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

# --- profiles --------------------------------------------------------------

# Shares of a profile's samples (weighted by period): "OWN FIRST_TOUCH".
# Own: the filter's code, edgeshed's program (its JIT image) or nftables'
# chain (nft_*, nf_hook*; nf_reject*, nf_send_reset* for a reject; conntrack
# and nf_conncount for a ct count). First touch: the program's entry (its first
# ENTRY_BYTES of machine code, which load the frame's first cache line, a
# miss on a frame the CPU has not seen; nftables pays it in eth_type_trans),
# counted with the shared path, not as the program's own.
ENTRY_BYTES=128
own_share() {
	local starts
	starts=$(perf report -i "$1" --header-only 2>/dev/null |
		awk '(/bpf_prog_info/ || /sub_prog [0-9]+:/) && / bpf_prog_.*_edgeshed_/ { print $4, $6 }')
	# Addresses by their low 32 bits: an awk number holds 53.
	perf script -i "$1" -F period,ip,sym -G 2>/dev/null | awk -v starts="$starts" -v entry="$ENTRY_BYTES" '
		function low32(hex) { sub(/^0x/, "", hex); return strtonum("0x" substr(hex, length(hex) - 7)) }
		BEGIN { n = split(starts, a, "\n"); for (i = 1; i <= n; i++) { split(a[i], f, " "); at[f[1]] = low32(f[2]) } }
		{
			w = $1; sym = $3; total += w
			if (sym in at) {
				if ((low32($2) - at[sym] + 4294967296) % 4294967296 < entry) first += w; else own += w
			}
			else if (sym ~ /^(nft_|__nft_|nf_hook|nf_reject|nf_send_reset|_*nf_conntrack|_*nf_ct_|_*nf_conncount)/) own += w
		}
		END { printf "%.4f %.4f\n", (total > 0 ? own / total : 0), (total > 0 ? first / total : 0) }'
}

# profile_median FILE COLUMN: the median of a column of a profile's per-run
# rows ("-" without rows).
profile_median() {
	[ -s "$1" ] || { echo -; return; }
	awk -v c="$2" '{ print $c }' "$1" | median
}

# --- the lab's pieces ------------------------------------------------------

# mac_of NS IFACE: the interface's MAC address.
mac_of() { nsenter --net="/run/netns/$1" ip -o link show "$2" | grep -o 'link/ether [^ ]*' | cut -d' ' -f2; }

# start_bench_refserver ARGS...: refserver in the server namespace; waits for
# port 80 to answer. Output in $1.log's folder.
start_bench_refserver() {
	local log=$1
	shift
	"${BENCH_NICE[@]}" nsenter --net="/run/netns/$SRV_NS" "$REFSERVER" --metrics-port 0 "$@" >"$log" 2>&1 &
	LAB_PIDS+=($!)
	local port
	port=$(option_of --port "$@")
	wait_for --within 5 --try "the refserver" client_connects "${port:-80}" && return 0
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

# --- real servers in front of refserver on $SVC_PORT ------------------------
#
# nginx on port 8081 (limit_conn 10, 503 beyond) and HAProxy on 8082 (maxconn
# 10 and a queue bounded at 10, 503 beyond), from configs written to DIR.
# bench-refusal and bench-saturation refuse through them.

start_nginx() {
	local dir=$1
	mkdir -p "$dir/nginx"
	cat >"$dir/nginx/nginx.conf" <<EOF
# The bench's nginx: limit_conn in front of refserver. Not a system service.
user root;
worker_processes auto;
daemon off;
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/error.log warn;
events { worker_connections 8192; }
http {
	access_log off;
	client_body_temp_path $dir/nginx/body;
	proxy_temp_path $dir/nginx/proxy;
	fastcgi_temp_path $dir/nginx/fastcgi;
	uwsgi_temp_path $dir/nginx/uwsgi;
	scgi_temp_path $dir/nginx/scgi;
	limit_conn_zone \$server_name zone=svc:1m;
	limit_conn_status 503;
	limit_conn_log_level info;
	server {
		listen $SRV_V4:8081 backlog=4096;
		server_name lab;
		location / {
			limit_conn svc 10;
			proxy_pass http://127.0.0.1:$SVC_PORT;
		}
	}
}
EOF
	"${BENCH_NICE[@]}" nsenter --net="/run/netns/$SRV_NS" nginx -p "$dir/nginx" -e "$dir/nginx/error.log" \
		-c "$dir/nginx/nginx.conf" >"$dir/nginx/stdout.log" 2>&1 &
	LAB_PIDS+=($!)
}

start_haproxy() {
	local dir=$1
	mkdir -p "$dir/haproxy"
	cat >"$dir/haproxy/haproxy.cfg" <<EOF
# The bench's HAProxy: maxconn with a bounded queue in front of refserver.
global
	maxconn 4096
defaults
	mode http
	timeout connect 1s
	timeout client 5s
	timeout server 5s
	timeout queue 1s
frontend fe
	bind $SRV_V4:8082
	# The bounded queue: with 10 requests waiting for a slot, a new one gets
	# a 503 at once. (A server's maxqueue alone would send it on to the
	# backend's own queue, which has no bound but timeout queue.)
	http-request return status 503 content-type text/plain string "busy" if { queue(be) ge 10 }
	default_backend be
backend be
	server ref 127.0.0.1:$SVC_PORT maxconn 10
EOF
	"${BENCH_NICE[@]}" nsenter --net="/run/netns/$SRV_NS" haproxy -db -f "$dir/haproxy/haproxy.cfg" \
		>"$dir/haproxy/stdout.log" 2>&1 &
	LAB_PIDS+=($!)
}

# hold_slots PORT SECONDS: 10 long GET /stream from the client namespace,
# read to /dev/null; each reader stops by itself after SECONDS.
hold_slots() {
	local port=$1 seconds=$2 i
	for i in $(seq 10); do
		nsenter --net="/run/netns/$CLI_NS" timeout "$seconds" bash -c '
			exec 3<>"/dev/tcp/$1/$2" || exit 1
			printf "GET /stream HTTP/1.1\r\nHost: lab\r\n\r\n" >&3
			cat <&3 >/dev/null' hold "$SRV_V4" "$port" &
		LAB_PIDS+=($!)
	done
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
