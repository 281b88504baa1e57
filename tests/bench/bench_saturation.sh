#!/usr/bin/env bash
# Refusals per server core at saturation, side by side in one run: how many
# new connections a second one core of the server can turn away, through
# edgeshed's RST (native XDP, TC), nftables `reject with tcp reset` (over a
# ct count; over a limit rate), nginx limit_conn (503) and HAProxy maxconn
# (503). The claim it settles: shedding at the edge costs the server a small
# fraction of what refusing in the application does.
#
# Pinning: the server side (the server veth's NAPI thread and every process
# of the server namespace) runs on CPU SERVER_CPU (1), the client side (its
# NAPI thread, the generators) on CLIENT_CPU (0). Each setup refuses every
# new connection: 10 long /stream requests hold its 10 slots (the in-flight
# cap, ct count, limit_conn, maxconn), or its rate is 1/s (limit rate).
#
# Two drivers:
#   conn   loadgen, real connections, each a request (a refusal is a RST or
#          a 503), at each of RATES for LOAD_S s, then at LG_MAX_RATE: the
#          most the client's core offers;
#   syn    the kernel setups only: tests/bench/synflood.cpp, SYNs from
#          sources spoofed in 203.0.113.0/24 (AF_PACKET skbs: an XDP_TX RST
#          must not be rewritten in a page the generator recycles), at each
#          of RATES for LOAD_S s, then SAT_COUNT as fast as the server takes
#          them. The server routes the RSTs back to the client namespace,
#          where an XDP program counts and drops them.
# Per load: refusals a second (loadgen's RSTs and 503s; the RSTs counted at
# the client), the server core's busy share (the server side's CPU over the
# wall time), server CPU us per refusal (less its quiet rate, the second
# before the load), and refusals per server core: refusals a second over the
# busy share, which at saturation is what the core does at 100%.
# SATURATION_PROFILE=1 (the default): perf samples the server's NAPI thread
# during each flood at the most, and a table splits the kernel setups' CPU
# per refusal into the filter's own code and the path every setup pays
# (AF_PACKET's skb, the veth, and for XDP the copy of the skb into a page
# with headroom, which a NIC's driver would not make).
# Medians of REPEAT interleaved runs. Prints figures and asserts nothing.
source "$(dirname "$0")/bench_lib.sh"
need nginx haproxy nft ethtool jq bpftool gawk gnuplot taskset
: "${SYNFLOOD:?path of the synflood generator}"

RATES=(${SATURATION_RATES:-5000 20000})
LOAD_S=${LOAD_S:-2}
LG_MAX_RATE=${LG_MAX_RATE:-60000}
SAT_COUNT=${SAT_COUNT:-1500000}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
PROFILE=${SATURATION_PROFILE:-1}
[ "$PROFILE" = 1 ] && need perf
SETUPS=(${SATURATION_SETUPS:-es_xdp es_tc nft_ct nft_limit nginx haproxy})
# loadgen keeps a descriptor per connection in flight.
ulimit -n "$(ulimit -Hn)"
out=$BENCH_OUT/saturation
rm -rf "$out"
mkdir -p "$out/runs"

label() {
	case $1 in
	es_xdp) echo "edgeshed RST, native XDP" ;;
	es_tc) echo "edgeshed RST, TC" ;;
	nft_ct) echo "nftables reject, ct count" ;;
	nft_limit) echo "nftables reject, limit rate" ;;
	nginx) echo "nginx limit_conn (503)" ;;
	haproxy) echo "HAProxy maxconn (503)" ;;
	esac
}
port_of() { case $1 in nginx) echo 8081 ;; haproxy) echo 8082 ;; *) echo "$SVC_PORT" ;; esac; }
kernel_setup() { [[ $1 == es_* || $1 == nft_* ]]; }

apply_setup() {
	local s=$1 dir=$2 syn='tcp flags & (fin | syn | rst | ack) == syn'
	case $s in
	es_xdp) edgeshed_static xdp rst "$SVC_PORT" --cap 10 ;;
	es_tc) edgeshed_static tc rst "$SVC_PORT" --cap 10 ;;
	# ct count needs conntrack: every SYN gets an entry before the rule runs.
	nft_ct)
		in_srv nft -f - <<EOF
table inet es_bench {
	chain in {
		type filter hook input priority filter; policy accept;
		tcp dport $SVC_PORT $syn ct count over 10 counter reject with tcp reset
	}
}
EOF
		;;
	# Before conntrack (priority raw), where a stateless rule costs least.
	nft_limit)
		in_srv nft -f - <<EOF
table inet es_bench {
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		tcp dport $SVC_PORT $syn limit rate over 1/second burst 1 packets counter reject with tcp reset
	}
}
EOF
		;;
	nginx) start_nginx "$dir" ;;
	haproxy) start_haproxy "$dir" ;;
	esac
}

# The server side on SERVER_CPU, the client's NAPI thread on CLIENT_CPU.
pin_sides() {
	local pid
	for pid in $(napi_pids "$SRV_IF") $(ip netns pids "$SRV_NS"); do
		taskset -a -p -c "$SERVER_CPU" "$pid" >/dev/null
	done
	for pid in $(napi_pids "$CLI_IF"); do taskset -p -c "$CLIENT_CPU" "$pid" >/dev/null; done
}

# The client veth's XDP sink (tests/bench/rst_sink.bpf.c): it drops the
# answers to the spoofed sources and counts the RSTs among them. Native XDP
# on the client's veth is also what lets the server's XDP_TX reach it.
client_rst_sink() {
	local pin=/sys/fs/bpf/es-bench-sink-$LAB_ID
	LAB_PINS+=("$pin")
	LAB_DIRS+=("$pin-maps")
	bpftool prog load "$BPF_OUT/rst_sink.bpf.o" "$pin" type xdp pinmaps "$pin-maps"
	in_cli bpftool net attach xdpdrv pinned "$pin" dev "$CLI_IF"
	SINK_MAP=$pin-maps/sink_rsts
}
rsts_seen() { bpftool -j map dump pinned "$SINK_MAP" | jq '[.[0].formatted.values[].value] | add'; }

# measure NAME CMD...: CMD from the client namespace on CLIENT_CPU, with the
# server's CPU and the RSTs counted around it. Writes $base.NAME.cpu:
# "QUIET_DELTA | LOAD_DELTA | RSTS".
measure() {
	local name=$1 m0 m1 m2 r0 r1
	shift
	m0=$(cpu_mark)
	sleep 1
	m1=$(cpu_mark)
	r0=$(rsts_seen)
	"${BENCH_NICE[@]}" nsenter --net="/run/netns/$CLI_NS" taskset -c "$CLIENT_CPU" "$@"
	m2=$(cpu_mark)
	r1=$(rsts_seen)
	echo "$(cpu_delta "$m0" "$m1") | $(cpu_delta "$m1" "$m2") | $((r1 - r0))" >"$base.$name.cpu"
}

one_run() {
	local s=$1 n=$2 dir port mac rate base=$out/runs/$1.$2
	dir=$(mktemp -d /tmp/edgeshed-bench.XXXXXX)
	LAB_DIRS+=("$dir")
	client_rst_sink
	lab_threaded_napi
	# loadgen's connections at 20,000/s outrun the default port range.
	in_cli sysctl -qw net.ipv4.ip_local_port_range="1024 65000" net.ipv4.tcp_tw_reuse=1
	in_srv ip route add 203.0.113.0/24 via "$CLI_V4"
	start_bench_refserver "$base.refserver.log" --port "$SVC_PORT" --workers 10 --service-ms 20 --duration-s 600
	apply_setup "$s" "$dir"
	port=$(port_of "$s")
	wait_for --within 5 --try "port $port to answer" client_connects "$port" || true
	hold_slots "$port" 300
	sleep 1
	renice_napi
	pin_sides
	cpu_pids
	local lg=("$LOADGEN" --target "$SRV_V4" --port "$port" --timeout-ms 3000 --quiet)
	for rate in "${RATES[@]}"; do
		measure "conn.$rate" "${lg[@]}" --rate "$rate" --duration-s "$LOAD_S" --count $((rate * LOAD_S)) \
			--csv "$base.conn.$rate.csv"
	done
	measure conn.max "${lg[@]}" --rate "$LG_MAX_RATE" --duration-s "$LOAD_S" \
		--count $((LG_MAX_RATE * LOAD_S)) --csv "$base.conn.max.csv"
	kernel_setup "$s" || return 0
	mac=$(mac_of "$SRV_NS" "$SRV_IF")
	local flood=("$SYNFLOOD" --iface "$CLI_IF" --dst-mac "$mac" --dst "$SRV_V4" --port "$SVC_PORT" --timeout-s 60)
	for rate in "${RATES[@]}"; do
		measure "syn.$rate" "${flood[@]}" --rate "$rate" --count $((rate * LOAD_S)) >"$base.syn.$rate.gen"
	done
	local prof=
	if [ "$PROFILE" = 1 ]; then
		perf record -F 4999 -g -t "$(IFS=,; echo "${CPU_SRV_NAPI[*]}")" -o "$base.syn.max.perf" \
			-- sleep 150 >/dev/null 2>&1 &
		prof=$!
		LAB_PIDS+=("$prof")
	fi
	measure syn.max "${flood[@]}" --count "$SAT_COUNT" >"$base.syn.max.gen"
	[ -z "$prof" ] || { kill -INT "$prof"; wait "$prof" || true; }
}

# Figures of one load: "REFUSED_PER_S BUSY US_PER_REFUSAL PER_CORE". The
# rate is over the arrivals' window (loadgen's first to last refused start;
# the generator's own time): a 503 that waited in a queue still counts in the
# second it was asked for. The CPU is over the whole load, drain included.
load_figures() {
	local base=$out/runs/$1.$2 load=$3 quiet ld rsts refused window
	[ -f "$base.$load.cpu" ] || { echo "- - - -"; return; }
	IFS='|' read -r quiet ld rsts <"$base.$load.cpu"
	if [[ $load == conn.* ]]; then
		read -r refused window < <(gawk -F, 'NR > 1 && ($3 == "refused" || $7 == "http_5xx") {
			n++; if (first == "" || $1 < first) first = $1; if ($1 > last) last = $1 }
			END { printf "%d %.4f\n", n, (n > 1 ? (last - first) / 1000 : 1) }' "$base.$load.csv")
	else
		refused=$rsts
		window=$(awk '{ print $4 }' "$base.$load.gen")
	fi
	awk -v q="$quiet" -v l="$ld" -v r="$refused" -v w="$window" 'BEGIN {
		split(q, a, " "); split(l, b, " ")
		cpu = b[2] + b[3]
		bg = (a[2] + a[3]) / a[1]
		us = r > 0 ? (cpu - bg * b[1]) * 1e6 / r : -1
		printf "%.0f %.3f %.2f %.0f\n", r / w, cpu / b[1], us, (cpu > 0 ? r / cpu : 0)
	}'
}

# Per kernel setup and run, from the flood's profile: "NS_PER_REFUSAL
# OWN_SHARE FIRST_TOUCH" in profile.SETUP, and the top symbols in
# runs/SETUP.N.syn.max.top.
profile_runs() {
	local s n f ns
	for s in "${SETUPS[@]}"; do
		kernel_setup "$s" || continue
		for n in $(seq "$REPEAT"); do
			f=$out/runs/$s.$n.syn.max.perf
			[ -f "$f" ] || continue
			ns=$(load_figures "$s" "$n" syn.max | awk '{ print $3 * 1000 }')
			echo "$ns $(own_share "$f")"
			# Its first lines: head closes the pipe on perf, hence the || true.
			perf report -i "$f" --no-children --sort sym --stdio -g none 2>/dev/null | grep -v '^#' | grep . |
				head -25 >"${f%.perf}.top" || true
		done >"$out/profile.$s"
	done
}
# setup_median SETUP COLUMN: of the setup's profile rows.
setup_median() { profile_median "$out/profile.$1" "$2"; }

# Per kernel setup, median over its runs: CPU per refusal in the flood at
# the most, the filter's own share of the NAPI thread's samples, in ns.
profile_table() {
	echo
	echo "profile of the flood at the most (perf, the server's NAPI thread, 4999 Hz; median of the runs)"
	printf "%-29s %14s %10s %15s %13s %18s\n" setup "ns per refusal" "own share" "own ns/refusal" "first touch" \
		"shared ns/refusal"
	local s
	for s in "${SETUPS[@]}"; do
		[ -s "$out/profile.$s" ] || continue
		awk -v s="$(label "$s")" -v c="$(setup_median "$s" 1)" -v sh="$(setup_median "$s" 2)" \
			-v ft="$(setup_median "$s" 3)" 'BEGIN {
			printf "%-29s %14.0f %9.1f%% %15.0f %12.1f%% %18.0f\n", s, c, 100 * sh, c * sh, 100 * ft, c * (1 - sh) }'
	done
	echo "own: samples in the filter's own code (edgeshed's program past its first $ENTRY_BYTES bytes; nft_*,"
	echo "nf_hook*, nf_reject*, nf_send_reset*, conntrack, nf_conncount); first touch: the program's first"
	echo "$ENTRY_BYTES bytes, where it loads the frame's first cache line; shared: all but own (the skb, the"
	echo "veth, for XDP the copy of the skb into an XDP page, IP input, the RST's way out), which a NIC's"
	echo "driver poll would replace. Top symbols per run: runs/SETUP.N.syn.max.top."
}

# why_capped PEER: for a missed target, what the profile says capped it.
why_capped() {
	local total own peer_us
	total=$(setup_median es_xdp 1)
	[ "$total" != - ] || return 0
	own=$(awk -v t="$total" -v sh="$(setup_median es_xdp 2)" 'BEGIN { printf "%.0f", t * sh }')
	peer_us=$(awk -v v="$(best_per_core "$1")" 'BEGIN { printf "%.1f", (v > 0 ? 1e6 / v : 0) }')
	echo "  the lab caps it: of edgeshed's $total ns of server CPU per refusal, its program is $own ns (profile"
	echo "  below); the rest is the veth's path for an skb from AF_PACKET (its copy into an XDP page, the"
	echo "  skb's free, the RST's way to the client), which a NIC's driver does not take. $(label "$1")"
	echo "  spends $peer_us us per refusal: $(ratio "$(awk -v u="$peer_us" 'BEGIN { print u * 1000 }')" "$own") x edgeshed's program alone."
}

loads_of() {
	local d=$1 r
	for r in "${RATES[@]}"; do echo "$d.$r"; done
	echo "$d.max"
}

echo "== Refusals per server core: server on CPU $SERVER_CPU, client on CPU $CLIENT_CPU; loads of ${LOAD_S}s at ${RATES[*]}/s and the most; $REPEAT runs, interleaved"
for n in $(seq "$REPEAT"); do
	for s in "${SETUPS[@]}"; do
		printf '   run %d/%d: %-28s' "$n" "$REPEAT" "$(label "$s")"
		bench_lab_run one_run "$s" "$n" >"$out/runs/$s.$n.log" 2>&1 ||
			{ echo "FAILED"; cat "$out/runs/$s.$n.log" >&2; exit 1; }
		for d in conn syn; do
			[ -f "$out/runs/$s.$n.$d.max.cpu" ] || continue
			load_figures "$s" "$n" "$d.max" | awk -v d="$d" '{ printf "  %s: %7d refused/s, busy %.2f, %8d per core", d, $1, $2, $4 }'
		done
		echo
	done
done

# Medians: "SETUP LOAD REFUSED_PER_S BUSY US_PER_REFUSAL PER_CORE".
for s in "${SETUPS[@]}"; do
	for d in conn syn; do
		for load in $(loads_of "$d"); do
			[ -f "$out/runs/$s.1.$load.cpu" ] || continue
			for n in $(seq "$REPEAT"); do load_figures "$s" "$n" "$load"; done >"$out/$s.$load.figures"
			col() { awk -v c="$1" '$c != "-" { print $c }' "$out/$s.$load.figures" | median; }
			echo "$s $load $(col 1) $(col 2) $(col 3) $(col 4)"
		done
	done
done >"$out/medians"
ref() { awk -v s="$1" -v l="$2" -v c="$3" '$1 == s && $2 == l { print $c }' "$out/medians"; }

if [ "$PROFILE" = 1 ]; then profile_runs; fi

# The setup's refusals per core at saturation: of its load that kept the
# server core busiest, the closest to saturation the lab gets.
best_per_core() {
	awk -v s="$1" '$1 == s && $4 > busy { busy = $4; core = $6 } END { print core + 0 }' "$out/medians"
}

{
	echo "Refusals per server core: every new connection refused (10 slots held, or a rate of 1/s)"
	echo "machine: $(machine_line); server side on CPU $SERVER_CPU, client on CPU $CLIENT_CPU; median of $REPEAT interleaved runs"
	echo
	printf "%-29s %-6s %11s %11s %6s %10s %14s\n" setup load offered "refused/s" busy "us/refusal" "refused/core/s"
	while read -r s load rps busy us core; do
		d=${load%%.*} r=${load#*.}
		case $r in
		max) [ "$d" = conn ] && offered="$LG_MAX_RATE/s" || offered="flood" ;;
		*) offered="$r/s" ;;
		esac
		printf "%-29s %-6s %11s %11s %6s %10s %14s\n" "$(label "$s")" "$d" "$offered" "$rps" "$busy" "$us" "$core"
	done <"$out/medians"
	echo
	echo "load: conn, loadgen's real connections (a refusal: RST or 503); syn, SYNs from spoofed sources"
	echo "(a refusal: a RST counted at the client). refused/s: over the arrivals' window. busy: the server"
	echo "core's share spent by the server side (its veth's NAPI thread and the server namespace's"
	echo "processes) over the load and its drain; us/refusal: that CPU, less its quiet rate, per refusal;"
	echo "refused/core/s: refusals per second of that CPU, what the core refuses at 100%. Saturation: each"
	echo "setup's load with the highest busy share (below 1: the client's core was the limit)."
	echo
	for s in "${SETUPS[@]}"; do
		printf "at saturation, %-29s %10.0f refused per server core per second\n" "$(label "$s"):" "$(best_per_core "$s")"
	done
	es=$(best_per_core es_xdp)
	for peer in nginx haproxy nft_ct nft_limit; do
		v=$(best_per_core "$peer")
		[ "$v" != 0 ] && [ "$es" != 0 ] || continue
		r=$(ratio "$es" "$v")
		case $peer in
		nginx) goal=50 ;;
		nft_*) goal=2 ;;
		*) goal= ;;
		esac
		if [ -n "$goal" ]; then
			met=$(awk -v r="$r" -v g="$goal" 'BEGIN { print (r != "-" && r >= g) ? "met" : "NOT met" }')
			echo "target: edgeshed (XDP) >= ${goal}x $(label "$peer") in refusals per server core: $r x, $met"
			if [ "$met" != met ] && [ "$PROFILE" = 1 ]; then why_capped "$peer"; fi
		else
			echo "ratio: edgeshed (XDP) / $(label "$peer") in refusals per server core: $r x"
		fi
	done
	tc=$(best_per_core es_tc)
	[ "$tc" != 0 ] && [ "$es" != 0 ] && echo "ratio: edgeshed XDP / edgeshed TC in refusals per server core: $(ratio "$es" "$tc") x"
	if [ "$PROFILE" = 1 ]; then profile_table; fi
	true
} | tee "$out/table.txt"

# Plot: refusals per server core at saturation, and CPU per refusal at
# 20,000/s of real connections, by setup.
i=0
for s in "${SETUPS[@]}"; do
	echo "$i \"$(label "$s")\" $(best_per_core "$s") $(ref "$s" conn.20000 5 || true)"
	i=$((i + 1))
done >"$out/plot.dat"
gnuplot <<GP
set terminal pngcairo size 1200,600 font ",10" noenhanced
set output "$out/saturation.png"
set multiplot layout 1,2 title "Refusing every new connection, server on one core, median of $REPEAT runs ($(machine_line))"
set style fill solid 0.7
set boxwidth 0.6
set grid ytics
set logscale y
set xtics rotate by -30
set bmargin 9
set ylabel "refusals per second per server core at saturation (log)"
plot "$out/plot.dat" using 1:3:xtic(2) with boxes notitle lc rgb "#c0504d", \
     "" using 1:3:(sprintf("%.0f", \$3)) with labels offset 0,0.7 notitle
set ylabel "server CPU us per refusal, real connections at 20,000/s (log)"
plot "$out/plot.dat" using 1:4:xtic(2) with boxes notitle lc rgb "#4f81bd", \
     "" using 1:4:(sprintf("%.1f", \$4)) with labels offset 0,0.7 notitle
unset multiplot
GP
echo "plot: $out/saturation.png"
