#!/usr/bin/env bash
# SYN flood absorption, side by side in one run: no filter (SYN backlog and
# SYN cookies), nftables (limit rate; ct count), iptables connlimit, edgeshed
# XDP drop, XDP rst, XDP generic drop and TC drop; and edgeshed XDP rst with
# the reflection limit at its defaults, whose RSTs toward the flood's one
# /24 must stay within its burst and rate.
#
# The flood goes from the client namespace to port 8080 of the server
# namespace, where refserver listens, from sources spoofed in 203.0.113.0/24
# (random address and port, random sequence number, Linux's SYN options). The
# server routes its answers back through the client namespace, where a netdev
# ingress rule drops them (SYN-ACKs, RSTs), as the Internet would. Meanwhile
# a real client (loadgen, 100 requests/s, a new connection each) asks port 80
# of the same refserver: its latency is what the flood costs the host.
#
# Each run floods twice, with tests/bench/synflood.cpp:
#   frames  FRAME_COUNT SYNs as XDP frames (a live-frames test run that
#           redirects them into the veth): they reach the server's NAPI ring
#           without an skb, as a NIC's ring holds them, and the ring drops
#           what does not fit, as a NIC's does. The model of a real NIC.
#   skb     SYN_COUNT SYNs through AF_PACKET, as skbs; the sender waits while
#           the ring is full. On a veth an skb exists before any hook, and an
#           XDP program must first copy it into a page with XDP headroom.
#
# Every filter has the same budget on port 8080: 100 new connections a
# second (nftables limit rate, edgeshed's token bucket) or 100 at once
# (ct count, connlimit); the flood is far above both, so nearly every SYN
# takes the filter's drop path.
#
# Per setup, flood and run: SYNs handled per second (the server veth's
# received packets over the flood's time), server-side CPU per million SYNs
# handled (see bench_lib.sh: the server veth's NAPI thread plus the server
# namespace's processes, less their rate in the 0.5 s before the flood), and
# the real requests' p50/p99. Medians of REPEAT runs; runs of the setups are
# interleaved, so a noisy minute hits every setup alike.
# Prints figures and asserts nothing.
source "$(dirname "$0")/bench_lib.sh"
need nft iptables ethtool jq gnuplot bpftool gawk
: "${SYNFLOOD:?path of the synflood generator}"

SYN_COUNT=${SYN_COUNT:-400000}
FRAME_COUNT=${FRAME_COUNT:-3000000}
FLOODS=(frames skb)
# SYNFLOOD_PROFILE=1 (the default): perf samples the server's NAPI thread
# during each frames flood, and the table splits each filter's CPU per SYN
# into its own code (edgeshed's program; nftables' chain) and the path every
# setup pays.
PROFILE=${SYNFLOOD_PROFILE:-1}
[ "$PROFILE" = 1 ] && need perf
# es_xdpg_drop (edgeshed XDP generic drop) is left out by default, to keep
# `make bench` within its time; SYNFLOOD_SETUPS can add it.
SETUPS=(${SYNFLOOD_SETUPS:-none nft_limit nft_ct_count iptables_connlimit es_xdp_drop es_xdp_rst es_xdp_rst_reflect es_tc_drop})
out=$BENCH_OUT/synflood
rm -rf "$out"
mkdir -p "$out/runs"

label() {
	case $1 in
	none) echo "no filter (SYN cookies)" ;;
	nft_limit) echo "nftables limit rate" ;;
	nft_ct_count) echo "nftables ct count" ;;
	iptables_connlimit) echo "iptables connlimit" ;;
	es_xdp_drop) echo "edgeshed XDP drop" ;;
	es_xdp_rst) echo "edgeshed XDP rst" ;;
	es_xdp_rst_reflect) echo "edgeshed XDP rst+reflect" ;;
	es_xdpg_drop) echo "edgeshed XDP generic drop" ;;
	es_tc_drop) echo "edgeshed TC drop" ;;
	esac
}
rx_packets() { in_srv ip -s -j link show "$SRV_IF" | jq '.[0].stats64.rx.packets'; }

apply_setup() {
	local s=$1 syn='tcp flags & (fin | syn | rst | ack) == syn'
	case $s in
	none) ;;
	# Before conntrack (priority raw), where a stateless limit costs least.
	nft_limit)
		in_srv nft -f - <<EOF
table inet es_bench {
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		tcp dport 8080 $syn limit rate over 100/second burst 100 packets counter drop
	}
}
EOF
		;;
	# ct count needs conntrack: every SYN gets an entry before the rule runs.
	nft_ct_count)
		in_srv nft -f - <<EOF
table inet es_bench {
	chain in {
		type filter hook input priority filter; policy accept;
		tcp dport 8080 $syn ct count over 100 counter drop
	}
}
EOF
		;;
	iptables_connlimit)
		in_srv iptables -A INPUT -p tcp --syn --dport 8080 -m connlimit --connlimit-above 100 \
			--connlimit-mask 0 -j DROP
		;;
	es_xdp_drop) edgeshed_static xdp drop 8080 --rate 100 --burst 100 ;;
	es_xdp_rst) edgeshed_static xdp rst 8080 --rate 100 --burst 100 ;;
	es_xdp_rst_reflect) ES_RST_REFLECT=default edgeshed_static xdp rst 8080 --rate 100 --burst 100 ;;
	es_xdpg_drop) edgeshed_static xdp-generic drop 8080 --rate 100 --burst 100 ;;
	es_tc_drop) edgeshed_static tc drop 8080 --rate 100 --burst 100 ;;
	esac
}

# How many of the flood's SYNs the setup's filter refused (for the table's
# sanity column): its own counter.
filtered_count() {
	case $1 in
	none) echo 0 ;;
	nft_*) in_srv nft -j list table inet es_bench | jq '[.. | objects | .counter? | objects | .packets] | add // 0' ;;
	iptables_connlimit) in_srv iptables -L INPUT -v -x -n | awk '/#conn/ { print $1; exit }' ;;
	es_*) edgeshed_counter shed_rate ;;
	esac
}

# One run of one setup, in its own lab: both floods, one after the other.
# Writes runs/SETUP.N.{csv,FLOOD.txt,FLOOD.gen}.
one_run() {
	local s=$1 n=$2 base=$out/runs/$1.$2 flood
	client_xdp_pass
	lab_threaded_napi
	in_srv ip route add 203.0.113.0/24 via "$CLI_V4"
	in_cli nft -f - <<EOF
table netdev es_sink {
	chain in {
		type filter hook ingress device "$CLI_IF" priority 0; policy accept;
		ip daddr 203.0.113.0/24 drop
	}
}
EOF
	start_bench_refserver "$base.refserver.log" --port 80 --port 8080 --workers 10 --service-ms 1 \
		--duration-s 300
	apply_setup "$s"
	renice_napi
	cpu_pids
	local lg_t0 lg mac m0 m1 m2 f0 f1 rx0 rx1 k0 k1 args
	mac=$(mac_of "$SRV_NS" "$SRV_IF")
	lg_t0=$(now_ms)
	"${BENCH_NICE[@]}" nsenter --net="/run/netns/$CLI_NS" "$LOADGEN" --target "$SRV_V4" --port 80 \
		--rate 100 --duration-s 120 --timeout-ms 3000 --quiet --csv "$base.csv" --json "$base.json" &
	lg=$!
	LAB_PIDS+=("$lg")
	for flood in "${FLOODS[@]}"; do
		case $flood in
		frames) args=(--frames --batch 256 --count "$FRAME_COUNT") ;;
		skb) args=(--count "$SYN_COUNT") ;;
		esac
		k0=$(filtered_count "$s")
		[ "$s" = es_xdp_rst_reflect ] &&
			echo "$(edgeshed_counter rst_sent) $(edgeshed_counter rst_reflect_limited)" >"$base.$flood.rst0"
		local prof=
		if [ "$PROFILE" = 1 ] && [ "$flood" = frames ]; then
			perf record -F 4999 -g -t "$(IFS=,; echo "${CPU_SRV_NAPI[*]}")" -o "$base.$flood.perf" \
				-- sleep 150 >/dev/null 2>&1 &
			prof=$!
			LAB_PIDS+=("$prof")
		fi
		m0=$(cpu_mark)
		sleep 0.5
		m1=$(cpu_mark)
		rx0=$(rx_packets)
		f0=$(now_ms)
		# Bounded by its count, and by time in case the machine stalls.
		in_cli "$SYNFLOOD" --iface "$CLI_IF" --dst-mac "$mac" --dst "$SRV_V4" --port 8080 \
			--timeout-s 120 "${args[@]}" >"$base.$flood.gen"
		m2=$(cpu_mark)
		f1=$(now_ms)
		[ -z "$prof" ] || { kill -INT "$prof"; wait "$prof" || true; }
		rx1=$(rx_packets)
		k1=$(filtered_count "$s")
		# The RSTs a one-/24 flood drew: the reflection limit's test.
		if [ "$s" = es_xdp_rst_reflect ]; then
			echo "$((f1 - f0)) $((k1 - k0)) $(edgeshed_counter rst_sent) $(edgeshed_counter rst_reflect_limited)" \
				>"$base.$flood.rst"
		fi
		# cpu_delta of the idle window | of the flood | the flood's window in
		# loadgen's clock | packets the server received, SYNs the filter refused
		echo "$(cpu_delta "$m0" "$m1") | $(cpu_delta "$m1" "$m2") | $((f0 - lg_t0)) $((f1 - lg_t0)) | $((rx1 - rx0)) $((k1 - k0))" >"$base.$flood.txt"
	done
	"$EDGESHED" status --iface "$SRV_IF" --json >"$base.status.json" 2>/dev/null || true
	kill -INT "$lg"
	wait "$lg" || true
}

# Figures of one flood of one run:
# "SYNS_PER_S CPU_S_PER_M P50 P99 NOT_OK HANDLED FILTERED GEN_SECONDS".
run_figures() {
	local base=$out/runs/$2.$3 idle fl win rest lat gen
	IFS='|' read -r idle fl win rest <"$base.$1.txt"
	lat=$(csv_latency "$base.csv" $win)
	gen=$(awk '{ print $4 }' "$base.$1.gen")
	awk -v idle="$idle" -v fl="$fl" -v lat="$lat" -v rest="$rest" -v gen="$gen" 'BEGIN {
		split(idle, i, " "); split(fl, f, " "); split(lat, l, " "); split(rest, r, " ")
		bg = (i[2] + i[3]) / i[1]                  # server-side CPU/s before the flood
		cpu = f[2] + f[3] - bg * f[1]
		printf "%.0f %.4f %s %s %d %d %d %s\n", r[1] / gen, cpu * 1e6 / r[1], l[2], l[3], l[4], r[1], r[2], gen
	}'
}

echo "== SYN flood absorption: $FRAME_COUNT SYNs as XDP frames, then $SYN_COUNT as skbs, per run; $REPEAT runs per setup, interleaved"
for n in $(seq "$REPEAT"); do
	for s in "${SETUPS[@]}"; do
		printf '   run %d/%d: %-27s' "$n" "$REPEAT" "$(label "$s")"
		bench_lab_run one_run "$s" "$n" >"$out/runs/$s.$n.log" 2>&1 ||
			{ echo "FAILED"; cat "$out/runs/$s.$n.log" >&2; exit 1; }
		for flood in "${FLOODS[@]}"; do
			run_figures "$flood" "$s" "$n" | awk -v f="$flood" '{ printf "  %s: %8d SYN/s %7.3f cpu s/M", f, $1, $2 }'
		done
		echo
	done
done

# Medians per flood and setup: "FLOOD SETUP SYN/S CPU P50 P99 NOT_OK FILTERED/HANDLED".
for flood in "${FLOODS[@]}"; do
	for s in "${SETUPS[@]}"; do
		for n in $(seq "$REPEAT"); do run_figures "$flood" "$s" "$n"; done >"$out/$flood.$s.figures"
		col() { awk -v c="$1" '{ print $c }' "$out/$flood.$s.figures" | median; }
		filt=$(awk '{ h += $6; f += $7 } END { printf "%.3f", h ? f / h : 0 }' "$out/$flood.$s.figures")
		echo "$flood $s $(col 1) $(col 2) $(col 3) $(col 4) $(col 5) $filt"
	done
done >"$out/medians"
ref() { awk -v f="$1" -v s="$2" -v c="$3" '$1 == f && $2 == s { print $c }' "$out/medians"; }

# Per setup, median over its runs: CPU per SYN, the filter's own share of
# the NAPI thread's samples, and that share in ns per SYN.
profile_table() {
	echo
	echo "profile of the frames flood (perf, the server's NAPI thread, 4999 Hz; median of the runs)"
	printf "%-26s %11s %10s %11s %13s %14s\n" setup "ns per SYN" "own share" "own ns/SYN" "first touch" \
		"shared ns/SYN"
	local s n f cpu share first
	for s in "${SETUPS[@]}"; do
		[[ $s == none ]] && continue
		for n in $(seq "$REPEAT"); do
			f=$out/runs/$s.$n.frames.perf
			[ -f "$f" ] || continue
			cpu=$(run_figures frames "$s" "$n" | awk '{ print $2 * 1000 }')
			echo "$cpu $(own_share "$f")"
		done >"$out/profile.$s"
		[ -s "$out/profile.$s" ] || continue
		cpu=$(profile_median "$out/profile.$s" 1)
		share=$(profile_median "$out/profile.$s" 2)
		first=$(profile_median "$out/profile.$s" 3)
		awk -v s="$(label "$s")" -v c="$cpu" -v sh="$share" -v ft="$first" 'BEGIN {
			printf "%-26s %11.0f %9.1f%% %11.0f %12.1f%% %14.0f\n", s, c, 100 * sh, c * sh, 100 * ft, c * (1 - sh) }'
	done
	echo "own: samples in the filter's own code (edgeshed's program past its entry; nft_*, nf_hook*,"
	echo "conntrack, nf_conncount); first touch: the program's first $ENTRY_BYTES bytes of machine code, where"
	echo "it loads the frame's first cache line (nftables pays that miss in eth_type_trans); shared: all"
	echo "but own, the veth, XDP and skb set-up and IP input."
	# The drop's target, on the whole CPU per SYN. A miss is split with the
	# profile: edgeshed's program, its first touch of the frame, and the
	# veth's ring and poll that every setup pays before its own work.
	local es nft r met es_own es_first veth
	[ -s "$out/profile.es_xdp_drop" ] && [ -s "$out/profile.nft_limit" ] || return 0
	es=$(profile_median "$out/profile.es_xdp_drop" 1)
	nft=$(profile_median "$out/profile.nft_limit" 1)
	es_own=$(awk '{ print $1 * $2 }' "$out/profile.es_xdp_drop" | median)
	es_first=$(awk '{ print $1 * $3 }' "$out/profile.es_xdp_drop" | median)
	veth=$(awk -v a="$es" -v o="$es_own" -v f="$es_first" 'BEGIN { printf "%.0f", a - o - f }')
	r=$(ratio "$nft" "$es")
	met=$(awk -v r="$r" 'BEGIN { print (r != "-" && r >= 5) ? "met" : "NOT met" }')
	echo "target (frames): edgeshed XDP drop >= 5x less CPU per SYN than nftables limit rate: $r x, $met"
	[ "$met" != met ] || return 0
	printf '  why: edgeshed XDP drop'"'"'s %.0f ns per SYN are %.0f ns of its program, %.0f ns of loading the\n' \
		"$es" "$es_own" "$es_first"
	printf '  frame'"'"'s first cache line, and %s ns of the veth'"'"'s ring and NAPI poll, which nftables pays too\n' "$veth"
	printf '  before its skb, IP input and chain (%.0f ns in all). Without that veth part in both: %s x.\n' \
		"$nft" "$(ratio "$(awk -v a="$nft" -v v="$veth" 'BEGIN { print a - v }')" "$(awk -v a="$es" -v v="$veth" 'BEGIN { print a - v }')")"
}

flood_title() {
	case $1 in
	frames) echo "SYNs as XDP frames, $FRAME_COUNT offered per run (the NIC model: no skb before the hooks)" ;;
	skb) echo "SYNs as skbs (AF_PACKET), $SYN_COUNT per run (an skb exists before any hook)" ;;
	esac
}

{
	echo "SYN flood absorption: port 8080, sources spoofed in 203.0.113.0/24; real client 100 req/s to port 80"
	echo "machine: $(machine_line); median of $REPEAT interleaved runs"
	for flood in "${FLOODS[@]}"; do
		xdp=$(ref "$flood" es_xdp_drop 4)
		echo
		echo "$(flood_title "$flood")"
		printf "%-26s %10s %12s %10s %10s %10s %10s %11s\n" "setup" "SYN/s" "cpu s/M SYN" "x XDP drop" \
			"real p50" "real p99" "real fail" "filtered"
		while read -r f s rate cpu p50 p99 bad filt; do
			[ "$f" = "$flood" ] || continue
			printf "%-26s %10.0f %12.3f %10s %10s %10s %10s %11s\n" "$(label "$s")" "$rate" "$cpu" \
				"$(ratio "$cpu" "$xdp")" "$p50" "$p99" "$bad" "$filt"
		done <"$out/medians"
	done
	echo
	echo "SYN/s: SYNs the server received per second of flood; cpu s/M SYN: server-side CPU seconds per million"
	echo "of them (the server veth's NAPI thread + server namespace processes, less their pre-flood rate);"
	echo "x XDP drop: that CPU over edgeshed XDP drop's; real p50/p99 (ms) and real fail (timeouts, errors):"
	echo "the real client's requests that started during the flood; filtered: share of the received SYNs that"
	echo "the setup's own counter says it refused (none: SYN cookies)."
	echo
	for flood in "${FLOODS[@]}"; do
		xdp=$(ref "$flood" es_xdp_drop 4)
		for rule in nft_limit nft_ct_count iptables_connlimit none es_tc_drop; do
			v=$(ref "$flood" "$rule" 4)
			[ -n "$v" ] && [ -n "$xdp" ] || continue
			printf "ratio (%s): %s / edgeshed XDP drop = %s x\n" "$flood" "$(label "$rule")" "$(ratio "$v" "$xdp")"
		done
	done
	# The reflection limit under a sustained flood toward one /24: once its
	# burst is spent, it draws the rate and no more.
	burst=$(sed -n 's/^#define EDGESHED_DEFAULT_RST_REFLECT_BURST \([0-9]*\).*/\1/p' "$BENCH_LIB_DIR/../../include/edgeshed/abi.h")
	rate=$(sed -n 's/^#define EDGESHED_DEFAULT_RST_REFLECT_PER_SEC \([0-9]*\).*/\1/p' "$BENCH_LIB_DIR/../../include/edgeshed/abi.h")
	for f in "$out"/runs/es_xdp_rst_reflect.*.rst; do
		[ -f "$f" ] || continue
		read -r r0 l0 <"${f%.rst}.rst0"
		read -r ms shed r1 l1 <"$f"
		awk -v ms="$ms" -v shed="$shed" -v rst=$((r1 - r0)) -v held=$((l1 - l0)) -v b="$burst" -v r="$rate" \
			-v run="$(basename "${f%.rst}")" 'BEGIN {
			most = b + r * ms / 1000
			printf "reflection limit (%s): %d SYNs shed toward 203.0.113.0/24 in %.2f s (%.0f/s): %d RSTs sent, %d held back; at most %d + %d/s x %.2f s = %.0f: %s\n",
				run, shed, ms / 1000, shed * 1000 / ms, rst, held, b, r, ms / 1000, most, rst <= most + 1 ? "held" : "EXCEEDED"
		}'
	done
	# A filter that refused much less than it received says so.
	while read -r f s _ _ _ _ _ filt; do
		[ "$s" != none ] && awk -v x="$filt" 'BEGIN { exit !(x < 0.95) }' || continue
		echo "note ($f): $(label "$s") refused only $filt of the SYNs it received (see runs/$s.*.status.json)."
		if [ "$f" = frames ] && [[ $s == es_xdp_rst* ]]; then
			echo "  The rest reached it unparseable (counter unparsed): the live-frames generator recycles the"
			echo "  pages that edgeshed rewrites into RSTs, most likely while those are still on their way, so"
			echo "  this row is indicative only. The skb flood and bench-refusal measure the RST path cleanly."
		fi
	done <"$out/medians"
	# The target is judged on the frames flood, the model of a NIC: on an
	# skb, XDP pays a copy that no NIC asks of it.
	xdp=$(ref frames es_xdp_drop 4)
	for rule in nft_limit nft_ct_count; do
		v=$(ref frames "$rule" 4)
		[ -n "$v" ] && [ -n "$xdp" ] || continue
		r=$(ratio "$v" "$xdp")
		met=$(awk -v r="$r" 'BEGIN { print (r != "-" && r >= 3) ? "met" : "NOT met" }')
		echo "target (frames): edgeshed XDP drop >= 3x less CPU per SYN than the nftables rule, $(label "$rule"): $r x, $met"
	done
	if [ "$PROFILE" = 1 ]; then profile_table; fi
} | tee "$out/table.txt"

# Plot: CPU per million SYNs by setup, one bar per flood; SYNs/s the same.
i=0
for s in "${SETUPS[@]}"; do
	echo "$i \"$(label "$s")\" $(ref frames "$s" 4) $(ref skb "$s" 4) $(ref frames "$s" 3) $(ref skb "$s" 3)"
	i=$((i + 1))
done >"$out/plot.dat"
gnuplot <<GP
set terminal pngcairo size 1200,650 font ",10" noenhanced
set output "$out/synflood.png"
set multiplot layout 1,2 title "SYN flood, median of $REPEAT runs ($(machine_line))"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.7
set grid ytics
set yrange [0:*]
set xtics rotate by -35
set key top right
set offsets 0, 0, graph 0.12, 0
set ylabel "server-side CPU seconds per million SYNs"
plot "$out/plot.dat" using 3:xtic(2) title "XDP frames (NIC model)" lc rgb "#c0504d", \
     "" using 4 title "skbs (AF_PACKET)" lc rgb "#f2a19e"
set ylabel "SYNs handled per second"
plot "$out/plot.dat" using 5:xtic(2) title "XDP frames (NIC model)" lc rgb "#4f81bd", \
     "" using 6 title "skbs (AF_PACKET)" lc rgb "#a7c0de"
unset multiplot
GP
echo "plot: $out/synflood.png"
