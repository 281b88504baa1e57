# The server matrix of the lab, on top of scenario_lib.sh: servers that accept
# at once and queue inside the process (nginx in front of a slow upstream, an
# asyncio server, a thread-per-connection server) next to the lazy-accept
# refserver. Each has W slots x S ms (capacity W/S per second), answers
# HTTP/1.1 GET with "ok\n" and honours keep-alive and Connection: close.
#   source servers_lib.sh; scenario_up; start_server eager 80 10 20; ...
# Servers run in the server namespace, from configs and arguments written
# into the scenario's work folder, and go with the lab on every exit path.
source "$(dirname "${BASH_SOURCE[0]}")/scenario_lib.sh"

SV_TOOLS="$(cd "$(dirname "${BASH_SOURCE[0]}")/../tools" && pwd)"
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
PYTHON=${PYTHON:-python3}
SERVER_KINDS=(nginx eager eager_failfast threaded threaded_failfast refserver)
# The last server started: its kind, port, log, and the pids that a capacity
# step signals or restarts (the Python server; nginx's second upstream).
SERVER_KIND=
SERVER_PORT=
SERVER_LOG=
SERVER_PID=
SERVER_PIDS=() # every process of the last server (CPU accounting)
SV_UPSTREAM2=() # nginx split upstream: "PORT WORKERS SERVICE_MS" of the second half
SERVER_LIFE_S=${SERVER_LIFE_S:-600}
SV_ALL_PIDS=() # every server process of the lab, stopped with a bounded wait
SV_PY_ARGS=() # more arguments of the Python servers started next (e.g. --idle-timeout-s 60)

SV_NS=$SRV_NS  # where the servers run: the server namespace, or a pod's (sv_in_pod)
SV_PORT_NETNS= # set by sv_in_pod: the namespace matrix_config's ports name
SV_PORT_CGROUP= # set by sv_in_pod cgroup: the cgroup they name instead
SV_IN_CGROUP=() # the prefix that starts a server in the pod's cgroup

# The service in a pod: the server namespace is then the node (edgeshed on
# its interface, as on a node's NIC), and the pod's namespace sits behind a
# routed veth as CNIs build them (SV_POD_V4; the node's side
# SV_NODE_POD_V4). The client reaches the pod through the node.
SV_POD_NS="es-pod-$LAB_ID"
SV_POD_IF="es-p$LAB_ID" # the pod's veth, the node's side
SV_NODE_POD_V4=192.0.2.1
SV_POD_V4=192.0.2.2
LAB_HOOKS+=('sv_pod_down')

# sv_pod_route: the node forwards, the client routes the pod network through
# it; once per lab, before the first sv_pod_up.
sv_pod_route() {
	in_srv sysctl -qw net.ipv4.ip_forward=1
	in_cli ip route add "${SV_POD_V4%.*}.0/24" via "$SRV_V4"
}
# sv_pod_up: the pod's namespace, its veth and its routes (a new namespace
# each time: a pod recreated).
sv_pod_up() {
	ip netns add "$SV_POD_NS"
	ip netns exec "$SV_POD_NS" ip link set lo up
	in_srv ip link add "$SV_POD_IF" type veth peer name eth0 netns "$SV_POD_NS"
	in_srv ip addr add "$SV_NODE_POD_V4/24" dev "$SV_POD_IF"
	in_srv ip link set "$SV_POD_IF" up
	ip netns exec "$SV_POD_NS" ip addr add "$SV_POD_V4/24" dev eth0
	ip netns exec "$SV_POD_NS" ip link set eth0 up
	ip netns exec "$SV_POD_NS" ip route add default via "$SV_NODE_POD_V4"
}
# sv_pod_down: the pod's processes killed and its namespace deleted (its
# veth goes with it).
sv_pod_down() {
	ip netns pids "$SV_POD_NS" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$SV_POD_NS" 2>/dev/null
	true
}
# The pod's cgroup, as the kubelet makes them: the pod's folder (which the
# port names), its container's below it (which holds the processes).
SV_POD_CGROUP="$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' \
	/proc/self/mountinfo)/es-pod-$LAB_ID"
LAB_HOOKS+=('sv_pod_cgroup_down')
sv_pod_cgroup_up() {
	[ "$SV_POD_CGROUP" != "/es-pod-$LAB_ID" ] || fail "no cgroup v2 mount for the pod's cgroup"
	mkdir -p "$SV_POD_CGROUP/ctr"
	# Joins the container's cgroup, then runs the server.
	SV_IN_CGROUP=(sh -c 'echo $$ >"$0" && exec "$@"' "$SV_POD_CGROUP/ctr/cgroup.procs")
}
# sv_pod_cgroup_down: its folders, once the pod's processes are gone.
sv_pod_cgroup_down() {
	[ -d "$SV_POD_CGROUP" ] || return 0
	local pid
	for pid in $(cat "$SV_POD_CGROUP/ctr/cgroup.procs" 2>/dev/null); do kill "$pid" 2>/dev/null; done
	wait_for --within 5 --try "the pod's cgroup to empty" \
		test -z "$(cat "$SV_POD_CGROUP/ctr/cgroup.procs" 2>/dev/null)" || true
	rmdir "$SV_POD_CGROUP/ctr" "$SV_POD_CGROUP" 2>/dev/null
	true
}
# sv_in_pod [cgroup]: from now on the servers run in a pod, SRV_V4 is the
# pod's address (loads, probes, holders and crowds go to it through the
# node), and every [[port]] of matrix_config names the pod's namespace;
# with cgroup, the servers run in the pod's cgroup and the ports name that
# (their requests then timed there, not at the tracepoints).
sv_in_pod() {
	sv_pod_route
	sv_pod_up
	SV_NS=$SV_POD_NS
	SRV_V4=$SV_POD_V4
	if [ "${1:-}" = cgroup ]; then
		sv_pod_cgroup_up
		SV_PORT_CGROUP=$SV_POD_CGROUP
	else
		SV_PORT_NETNS=/run/netns/$SV_POD_NS
	fi
}

# sv_in_pod_if_asked: a test's servers in a pod where SV_POD asks it: 1,
# the ports naming the pod's namespace; cgroup, its cgroup.
sv_in_pod_if_asked() {
	case "${SV_POD:-}" in
	"") ;;
	1) sv_in_pod ;;
	cgroup) sv_in_pod cgroup ;;
	*) fail "SV_POD=$SV_POD: want 1 or cgroup" ;;
	esac
	[ -z "${SV_POD:-}" ] || echo "the servers in a pod: $SV_POD_NS at $SRV_V4, the ports naming it by: $(sv_port_where)"
}
# sv_port_where: the [[port]] key that names where the servers run; none
# in the server namespace (the interface's).
sv_port_where() {
	if [ -n "$SV_PORT_NETNS" ]; then
		echo "netns = \"$SV_PORT_NETNS\""
	elif [ -n "$SV_PORT_CGROUP" ]; then
		echo "cgroup = \"$SV_PORT_CGROUP\""
	fi
}

# kernel_p50 PORT: the response p50 (ms) the kernel measured on PORT over the
# daemon's window (its state file), 0 if none: whether requests were timed.
kernel_p50() {
	jq -r --arg p "$1" '.latency[$p].response.p50_ms // 0 | . * 10 | round / 10' "$SC_STATE"
}

# sv_bg LOG CMD...: CMD in the servers' namespace at the lab's priority, in the
# background; its pid (nice and nsenter exec) in SV_BG, SERVER_PIDS and SV_ALL_PIDS.
sv_bg() {
	local log=$1
	shift
	"${SC_NICE[@]}" "${SV_IN_CGROUP[@]}" nsenter --net="/run/netns/$SV_NS" "$@" >>"$log" 2>&1 &
	SV_BG=$!
	SV_ALL_PIDS+=("$SV_BG")
	SERVER_PIDS+=("$SV_BG")
}

# sv_stop_pids PID...: SIGTERM, up to 5 s for them to go, then SIGKILL; a
# server stuck in its shutdown must not hold the lab's cleanup (lib.sh's
# waits have no bound).
sv_stop_pids() {
	local pid
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	wait_for --within 5 --try "the servers to stop" none_alive "$@" || true
	for pid in "$@"; do
		if kill -0 "$pid" 2>/dev/null; then
			echo "server pid $pid ignored SIGTERM for 5 s: SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null
		fi
		wait "$pid" 2>/dev/null
	done
	true
}
none_alive() {
	local pid
	for pid in "$@"; do ! kill -0 "$pid" 2>/dev/null || return 1; done
}
# First of the lab's cleanup (its hooks run before it kills LAB_PIDS).
LAB_HOOKS+=('sv_stop_pids "${SV_ALL_PIDS[@]}"')

# wait_listening ADDR PORT PID LOG: polls a connect from inside the servers'
# namespace (loopback upstreams) for up to 10 s; fails with the log if the
# process exits or never listens.
wait_listening() {
	local addr=$1 port=$2 pid=$3 log=$4
	wait_for --within 10 --alive "$pid" "server on $addr:$port to answer" \
		nsenter --net="/run/netns/$SV_NS" "$TCP_TOOL" connect "$addr" "$port" 200
}

# answers PORT: one GET from the client namespace gets "ok".
answers() {
	in_cli "$LOADGEN" --target "$SRV_V4" --port "$1" --rate 10 --count 1 --timeout-ms 2000 --quiet \
		--json "$SC_WORK/probe.$1.json" >/dev/null 2>&1 &&
		[ "$(jq -r .total.ok "$SC_WORK/probe.$1.json")" = 1 ]
}

# crowd_bg NAME ARGS...: tests/tools/crowd_client.py (long polls and
# server-push streams, bounded by itself) from the client namespace to
# $SRV_V4 in the background: its JSON in $SC_WORK/NAME.crowd, its "opened"
# line in NAME.crowd.err. CROWD_PID is its pid.
crowd_bg() {
	local name=$1
	shift
	"${SC_NICE[@]}" nsenter --net="/run/netns/$CLI_NS" "$PYTHON" "$SV_TOOLS/crowd_client.py" --target "$SRV_V4" \
		"$@" >"$SC_WORK/$name.crowd" 2>"$SC_WORK/$name.crowd.err" &
	CROWD_PID=$!
	LAB_PIDS+=("$CROWD_PID")
}

# nginx_conf DIR PORT UPSTREAM_PORTS...: a reverse proxy on PORT (all
# addresses) in front of refservers on 127.0.0.1:UPSTREAM_PORTS, with every
# path (pid, temp folders, logs) in DIR; least_conn. A new upstream
# connection per request (nginx's default): with upstream keep-alive, the
# lazy-accept refserver served half its capacity (its idle keep-alive
# connections wait behind new accepts).
nginx_conf() {
	local dir=$1 port=$2 p
	shift 2
	mkdir -p "$dir"/{client_body,proxy,fastcgi,uwsgi,scgi}
	{
		cat <<-EOF
			worker_processes 1;
			pid $dir/nginx.pid;
			error_log $dir/error.log warn;
			events { worker_connections 32768; multi_accept on; }
			http {
			    access_log off;
			    client_body_temp_path $dir/client_body;
			    proxy_temp_path $dir/proxy;
			    fastcgi_temp_path $dir/fastcgi;
			    uwsgi_temp_path $dir/uwsgi;
			    scgi_temp_path $dir/scgi;
			    keepalive_timeout 10s;
			    keepalive_requests 100000;
			    upstream slow {
			        least_conn;
		EOF
		# fail_timeout 1s: a stopped half of a split upstream comes back within
		# a second of its restart.
		for p in "$@"; do echo "        server 127.0.0.1:$p max_fails=1 fail_timeout=1s;"; done
		cat <<-EOF
			    }
			    server {
			        listen $port backlog=4096 reuseport;
			        location / {
			            proxy_pass http://slow;
			            proxy_http_version 1.1;
			            proxy_connect_timeout 5s;
			            proxy_read_timeout 30s;
			        }
			    }
			}
		EOF
	} >"$dir/nginx.conf"
}

# start_server KIND PORT WORKERS SERVICE_MS [split]: a server of the matrix on
# SRV:PORT in the server namespace; returns once a GET from the client
# namespace gets its "ok". KIND:
#   nginx           nginx on PORT, reverse proxy to refserver (WORKERS x
#                   SERVICE_MS) on 127.0.0.1:PORT+1000; with "split", two
#                   refservers of WORKERS/2 (PORT+1000, PORT+1001), so that a
#                   capacity step can stop one of them;
#   eager           tests/tools/eager_server.py (asyncio, accepts at once);
#   eager_failfast  the same with --fail-fast (503 when all slots are busy);
#   threaded        tests/tools/threaded_server.py (thread per connection);
#   threaded_failfast the same with --fail-fast;
#   refserver       the lazy-accept reference server.
start_server() {
	local kind=$1 port=$2 workers=$3 ms=$4 extra=${5:-} log
	log=$SC_WORK/server.$kind.$port.log
	SERVER_KIND=$kind SERVER_PORT=$port SERVER_LOG=$log SERVER_PIDS=() SV_UPSTREAM2=()
	case $kind in
	nginx)
		local up=$((port + 1000)) dir=$SC_WORK/nginx.$port
		if [ "$extra" = split ]; then
			[ $((workers % 2)) = 0 ] || fail "nginx split needs an even number of workers, not $workers"
			sv_bg "$SC_WORK/upstream.$up.log" "$REFSERVER" --port "$up" --workers $((workers / 2)) \
				--service-ms "$ms" --metrics-port 0 --duration-s "$SERVER_LIFE_S"
			wait_listening 127.0.0.1 "$up" "$SV_BG" "$SC_WORK/upstream.$up.log"
			SV_UPSTREAM2=("$((up + 1)) $((workers / 2)) $ms")
			sv_bg "$SC_WORK/upstream.$((up + 1)).log" "$REFSERVER" --port $((up + 1)) \
				--workers $((workers / 2)) --service-ms "$ms" --metrics-port 0 --duration-s "$SERVER_LIFE_S"
			SERVER_PID=$SV_BG
			wait_listening 127.0.0.1 $((up + 1)) "$SV_BG" "$SC_WORK/upstream.$((up + 1)).log"
			nginx_conf "$dir" "$port" "$up" $((up + 1))
		else
			sv_bg "$SC_WORK/upstream.$up.log" "$REFSERVER" --port "$up" --workers "$workers" \
				--service-ms "$ms" --metrics-port 0 --duration-s "$SERVER_LIFE_S"
			wait_listening 127.0.0.1 "$up" "$SV_BG" "$SC_WORK/upstream.$up.log"
			nginx_conf "$dir" "$port" "$up"
		fi
		"$NGINX" -t -c "$dir/nginx.conf" -p "$dir" -g 'daemon off;' >"$log" 2>&1 ||
			fail "nginx -t: $(cat "$log")"
		# The master in the foreground, under timeout(1): nginx has no
		# lifetime of its own. SIGTERM to timeout reaches the master (fast
		# shutdown), which takes its worker with it.
		sv_bg "$log" timeout --kill-after=5 "$SERVER_LIFE_S" "$NGINX" -c "$dir/nginx.conf" -p "$dir" -g 'daemon off;'
		;;
	eager | eager_failfast | threaded | threaded_failfast)
		local script=$SV_TOOLS/${kind%_failfast}_server.py ff=()
		[[ $kind == *_failfast ]] && ff=(--fail-fast)
		sv_bg "$log" "$PYTHON" "$script" --port "$port" --workers "$workers" --service-ms "$ms" \
			--duration-s "$SERVER_LIFE_S" "${ff[@]}" "${SV_PY_ARGS[@]}"
		SERVER_PID=$SV_BG
		;;
	refserver)
		sv_bg "$log" "$REFSERVER" --port "$port" --workers "$workers" --service-ms "$ms" --metrics-port 0 \
			--duration-s "$SERVER_LIFE_S"
		SERVER_PID=$SV_BG
		;;
	*) fail "start_server: unknown kind '$kind' (one of ${SERVER_KINDS[*]})" ;;
	esac
	local pid=$SV_BG
	wait_listening "$SRV_V4" "$port" "$pid" "$log"
	wait_for --within 5 --alive "$pid" "$kind on $SRV_V4:$port to answer GET / with 200" answers "$port"
}

# read_and_lost LOG: the requests a stopped eager server read and could not
# answer (its last line, shown on stderr).
read_and_lost() {
	local line
	line=$(grep -E "read and lost$" "$1") || fail "no counts in $1: $(tail -n 3 "$1")"
	echo "$line" >&2
	grep -oE '[0-9]+ read and lost$' <<<"$line" | cut -d' ' -f1
}

# stop_server: the last server's processes, SIGTERM, waited for.
stop_server() {
	sv_stop_pids "${SERVER_PIDS[@]}"
	SERVER_PIDS=()
}

# capacity_step half|full: halves the last server's capacity, or gives it
# back. eager/threaded: SIGUSR1/SIGUSR2 (the server holds half its slots);
# nginx started with "split": stops the second upstream refserver, or starts
# it again. The lazy-accept refserver has no step (it cannot change its
# workers while it runs, and a restart would drop its accept queue).
capacity_step() {
	case "$SERVER_KIND:$1" in
	eager*:half | threaded*:half) kill -USR1 "$SERVER_PID" ;;
	eager*:full | threaded*:full) kill -USR2 "$SERVER_PID" ;;
	nginx:half)
		[ ${#SV_UPSTREAM2[@]} = 1 ] || fail "capacity_step: nginx was not started with 'split'"
		sv_stop_pids "$SERVER_PID"
		;;
	nginx:full)
		local up w ms
		read -r up w ms <<<"${SV_UPSTREAM2[0]}"
		sv_bg "$SC_WORK/upstream.$up.log" "$REFSERVER" --port "$up" --workers "$w" --service-ms "$ms" \
			--metrics-port 0 --duration-s "$SERVER_LIFE_S"
		SERVER_PID=$SV_BG
		;;
	*) fail "capacity_step: no step for $SERVER_KIND ($1)" ;;
	esac
}

# Whether a capacity step is possible with KIND.
has_capacity_step() { [[ $1 == nginx || $1 == eager* || $1 == threaded* ]]; }

# server_cpu_s: CPU seconds (user + system) of the last server's processes
# so far, nginx's master and worker included. /proc/PID/stat, not the threads'
# schedstat: a thread-per-connection server's threads are gone by then, and
# their time is kept only in the process's total.
server_cpu_s() {
	local pid child
	# Children and grandchildren: timeout(1), nginx's master, its worker.
	for pid in "${SERVER_PIDS[@]}"; do
		echo "$pid"
		for child in $(pgrep -P "$pid" 2>/dev/null); do
			echo "$child"
			pgrep -P "$child" 2>/dev/null || true
		done
	done | while read -r pid; do cat /proc/"$pid"/stat 2>/dev/null; done |
		awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); s += $12 + $13 } END { printf "%.2f\n", s / hz }'
}

# matrix_config TEMPLATE PORT [KEY=VALUE...]: render_config with the
# template's "port = 80" changed to PORT (the benchmark's port is not 80; see
# bench_lib.sh's SVC_PORT), and after sv_in_pod every [[port]] in the pod's
# namespace; prints the file's path.
matrix_config() {
	local name=$1 port=$2 cfg
	shift 2
	cfg=$(render_config "$name" "$@")
	if [ "$port" != 80 ]; then
		sed -i "s/^port = 80\$/port = $port/" "$cfg"
		grep -q "^port = $port\$" "$cfg" || fail "no port $port in $cfg"
	fi
	local where
	where=$(sv_port_where)
	if [ -n "$where" ]; then
		sed -i "/^\[\[port\]\]\$/a $where" "$cfg"
		grep -qxF "$where" "$cfg" || fail "no port's $where in $cfg"
	fi
	echo "$cfg"
}
# start_matrix_daemon TEMPLATE PORT [KEY=VALUE...]: start_daemon with
# matrix_config's file.
start_matrix_daemon() {
	local cfg
	cfg=$(matrix_config "$@")
	start_daemon_config "$cfg"
}
# config_mode FILE MODE: a rendered config's data plane mode set to MODE.
config_mode() {
	sed -i "s/^mode = \".*\"\$/mode = \"$2\"/" "$1"
	grep -q "^mode = \"$2\"\$" "$1" || fail "no mode $2 in $1"
}
# learn_observing PORT RATE SECONDS: the runbook's first step, observe mode
# (port_only.toml otherwise), under RATE/s (Poisson, a new connection per
# request) for SECONDS, then a clean stop, which keeps what the limit learnt
# in run_dir/state for the next start. The load's figures: learn.json/.csv.
learn_observing() {
	local port=$1 rate=$2 secs=$3 cfg
	cfg=$(matrix_config port_only "$port")
	config_mode "$cfg" observe
	start_daemon_config "$cfg"
	load learn --port "$port" --rate "$rate" --poisson --duration-s "$secs" \
		--count $((rate * secs)) --timeout-ms 5000
	stop_daemon
}

# csv_figures CSV FROM_MS TO_MS [5XX_IS_SHED [RESET_IS_SHED]]: one line "OK
# SHED LOST P50 P99 GOODPUT SHED_P99" over loadgen's per-request CSV. SHED:
# refused by a RST, or, with 5XX_IS_SHED=1, answered 5xx (the in-process
# semaphore's 503), or, with RESET_IS_SHED=1, reset on an open connection
# (keepalive = "refuse"); LOST: timeouts, resets and other errors (a 5xx
# otherwise: nginx's 502/504 when its upstream's queue overflows); P50/P99:
# latency (ms) of the ok requests; GOODPUT: ok
# responses that completed within [FROM_MS, TO_MS] (ms since loadgen's
# start), per second; SHED_P99: the client's time to refusal, p99 (ms).
# Nearest rank, as loadgen computes it; "-" for no sample.
csv_figures() {
	gawk -F, -v from="$2" -v to="$3" -v s5="${4:-0}" -v rs="${5:-0}" '
		function rank(a, n, p,   r) { r = int(p * n / 100 + 0.999999); if (r < 1) r = 1; return a[r] }
		NR == 1 { next }
		$3 == "ok" { ok[++nok] = $4; end = $1 + $4; if (end >= from && end <= to) good++; next }
		$3 == "refused" || (s5 && $3 == "error" && $7 == "http_5xx") || (rs && $3 == "reset") { shed[++nshed] = $4; next }
		{ lost++ }
		END {
			asort(ok); asort(shed)
			printf "%d %d %d %s %s %.1f %s\n", nok, nshed, lost,
				nok ? sprintf("%.1f", rank(ok, nok, 50)) : "-", nok ? sprintf("%.1f", rank(ok, nok, 99)) : "-",
				(to > from) ? good * 1000 / (to - from) : 0, nshed ? sprintf("%.2f", rank(shed, nshed, 99)) : "-"
		}' "$1"
}

# csv_onset CSV SERVICE_MS: "FIRST_SHED_MS OVER_PCT": when the first refused
# request started (ms since loadgen's start; "-": none), and the share of the
# admitted (ok) that took over 1.5x SERVICE_MS, in percent.
csv_onset() {
	gawk -F, -v s="$2" '
		NR == 1 { next }
		$3 == "ok" { n++; if ($4 > 1.5 * s) over++; next }
		$3 == "refused" && (first == "" || $1 < first) { first = $1 }
		END { printf "%s %.1f\n", first == "" ? "-" : sprintf("%.0f", first), n ? over * 100 / n : 0 }' "$1"
}

# csv_p99_from CSV FROM_MS: admitted p99 (ms, nearest rank) of the ok
# requests started at FROM_MS (since loadgen's start) or later; "-" for none.
csv_p99_from() {
	gawk -F, -v from="$2" '
		NR > 1 && $3 == "ok" && $1 >= from { ok[++n] = $4 }
		END { if (!n) { print "-"; exit } asort(ok); r = int(0.99 * n + 0.999999); if (r < 1) r = 1; printf "%.1f\n", ok[r] }' "$1"
}

# csv_throughput CSV: ok responses per second between the first and the last
# ok completion: the server's throughput while it had work queued.
csv_throughput() {
	gawk -F, 'NR > 1 && $3 == "ok" { e = $1 + $4; n++; if (min == "" || e < min) min = e; if (e > max) max = e }
		END { if (n < 2 || max <= min) print 0; else printf "%.1f\n", (n - 1) * 1000 / (max - min) }' "$1"
}

# measure_capacity NAME PORT WORKERS SERVICE_MS [SECONDS]: the running
# server's capacity, measured: 1.5x its nominal W/S for SECONDS (default 2),
# every request waited for (30 s time-out), the throughput between the first
# and the last answer. Sets CAPACITY (req/s) and CAPACITY_CPU (the server's
# CPU over the run, % of one core); the figures in $SC_WORK/NAME.json/.csv.
measure_capacity() {
	local name=$1 port=$2 w=$3 ms=$4 secs=${5:-2} rate c0 c1 d
	rate=$(awk -v w="$w" -v s="$ms" 'BEGIN { printf "%.0f", 1.5 * w * 1000 / s }')
	c0=$(server_cpu_s)
	load "$name" --port "$port" --rate "$rate" --duration-s "$secs" \
		--count "$(awk -v r="$rate" -v s="$secs" 'BEGIN { printf "%.0f", r * s }')" --timeout-ms 30000
	c1=$(server_cpu_s)
	d=$(jv "$name" .duration_s)
	CAPACITY=$(csv_throughput "$SC_WORK/$name.csv")
	CAPACITY_CPU=$(awk -v a="$c0" -v b="$c1" -v d="$d" 'BEGIN { printf "%.0f", (d > 0 ? (b - a) * 100 / d : 0) }')
	awk -v c="$CAPACITY" 'BEGIN { exit !(c > 0) }' || fail "$name: no throughput measured ($(figures "$name"))"
}

# start_state_sampler OUT: every 200 ms, "EPOCH_MS LEVEL ADAPTIVE_LIMIT
# NORMAL_CAP RESPONSE_P99_MS" from the current daemon's state file (one line
# per sample; the last: the kernel's response-time p99 over its 1 s window,
# all ports, "-" before any); STATE_SAMPLER is its pid.
start_state_sampler() {
	: >"$1"
	start_sampler STATE_SAMPLER sample_state "$DAEMON" "$1"
}
sample_state() {
	jq -r --argjson p "$1" --arg t "$(now_ms)" \
		'select(.pid == $p) | "\($t) \(.level) \(.adaptive_limit) \(.classes.normal.inflight_cap // "none") \(.latency.all.response.p99_ms // "-")"' \
		"$SC_STATE" 2>/dev/null >>"$2"
}
stop_state_sampler() { stop_sampler STATE_SAMPLER; }

# claim WHAT OK?: an edgeshed claim, recorded in CLAIMS_FAILED when OK is not
# 1; the test lists them all and fails at its end. is, le and ge give the OK.
CLAIMS_FAILED=()
claim() {
	if [ "$2" = 1 ]; then
		pass "$1"
	else
		echo "CLAIM NOT MET: $1" >&2
		CLAIMS_FAILED+=("$1")
	fi
}
is() { [ "$1" = "$2" ] && echo 1 || echo 0; }
le() { awk -v v="$1" -v l="$2" 'BEGIN { print (v ~ /^[0-9.]+$/ && v + 0 <= l + 0) ? 1 : 0 }'; }
ge() { awk -v v="$1" -v l="$2" 'BEGIN { print (v ~ /^[0-9.]+$/ && v + 0 >= l + 0) ? 1 : 0 }'; }
