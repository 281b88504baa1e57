#!/usr/bin/env bash
# Soak: the daemon (configs/soak.toml: the ramp scenario's service and
# levels, one signal of every kind) runs the lab for SOAK_SECONDS (default
# 600) under alternating overload and calm. Each cycle: OVER_S of 2x the
# service's capacity, CALM_S of 0.3x, then QUIET_S without load. Four
# invariants, each with its tolerance and why:
#
#  memory   The daemon's RSS, sampled every SAMPLE_S. The first cycle is
#           warm-up (thread stacks, allocator arenas, the first windows of
#           each signal). After it, the highest RSS of the last cycle may
#           exceed the highest of the second by at most RSS_TOLERANCE_KB
#           (default 1024): RSS moves in pages and glibc keeps freed memory
#           in per-thread arenas, so a flat daemon wobbles by a few pages;
#           a leak of a few hundred bytes per tick (a few kB/s) crosses 1 MB
#           within the default soak. The slope is printed as well.
#  fds      The count of /proc/PID/fd. Sources open sockets and files for a
#           moment (probe, scrape, /proc reads), so a sample may catch one:
#           the floor of each cycle (its fewest) must never rise above the
#           second cycle's, and no sample may exceed that floor by more
#           than FD_TRANSIENT (default 16).
#  counters No drift between what the client did, what the data plane
#           counted and what the controller saw, with no tolerance: these
#           are exact accounting identities in a lossless lab.
#            - per load phase: data-plane decisions = connections offered +
#              SYNs the client retransmitted (TcpExt TCPSynRetrans, in the
#              client's namespace): each SYN is decided once;
#            - per load phase: SYNs shed = RSTs sent = connections refused
#              as the client saw them (the RST budget is never reached);
#            - in each quiet gap, at each of QUIET_SAMPLES readings: the
#              data plane's connection count equals the server's established
#              connections on the port (ss); its count of requests in
#              service is 0 (every request entered was answered or ended
#              with its connection: the count does not drift), and the
#              controller's in-flight signal (state file) equals it.
#              Nothing connects to the
#              port then (the probe uses a second, unprotected port of the
#              service), so all three hold still; a count that leaked
#              shows as a data plane ahead of the kernel.
#  levels   No flapping. A phase's first SETTLE_OVER_S / SETTLE_CALM_S are
#           its transition (escalation takes ticks, the descent one level
#           per exit_after). After that, while the load is steady, the level
#           may move in one direction and back at most once: one excursion
#           is a reaction to something real (on a shared host, a stall of
#           the service's CPU makes a short overload), up and down and up
#           again is flapping. Every overload phase leaves the level above
#           normal and every calm phase ends at normal, so that a controller
#           that stopped reacting does not pass for a stable one.
#
# The service listens on SOAK_PORT (48080), a port of its own. The soak
# found that the tracker counted a protected port's connections in every
# network namespace of the host, so other labs serving port 80 passed for
# load here; it now counts the attached namespace only (test_tracker_netns),
# and the soak keeps its port all the same, so that its numbers are its
# own whatever else the host runs.
#
# Cycles run until the next one would end after SOAK_SECONDS; at least three
# must fit (warm-up, reference, last). Prints one row per cycle and a table
# of the invariants, and exits non-zero when one is violated. Everything it
# starts goes on every exit path.
source "$(dirname "$0")/scenario_lib.sh"

SOAK_SECONDS=${SOAK_SECONDS:-600}
SOAK_PORT=${SOAK_PORT:-48080}
PROBE_PORT=$((SOAK_PORT + 1))
OVER_S=${OVER_S:-20}
CALM_S=${CALM_S:-20}
QUIET_S=${QUIET_S:-4}
CAPACITY=500 # 10 workers x 20 ms
OVER_RATE=$((CAPACITY * 2))
CALM_RATE=$((CAPACITY * 3 / 10))
SAMPLE_S=${SAMPLE_S:-2}
RSS_TOLERANCE_KB=${RSS_TOLERANCE_KB:-1024}
FD_TRANSIENT=${FD_TRANSIENT:-16}
QUIET_SAMPLES=5
SETTLE_OVER_S=3
SETTLE_CALM_S=7
METRICS_PORT=9100
TIMEOUT_MS=2000
# A cycle's length before the first one is measured: its phases, the
# loadgen's answer wait after each load phase (timeout + 1 s) and the
# quiet readings.
CYCLE_S=$((OVER_S + CALM_S + QUIET_S + 2 * (TIMEOUT_MS / 1000 + 1) + QUIET_SAMPLES))
MAX_CYCLES=$((SOAK_SECONDS / (OVER_S + CALM_S) + 1))
[ $((3 * CYCLE_S)) -le "$SOAK_SECONDS" ] ||
	fail "SOAK_SECONDS=$SOAK_SECONDS is under 3 cycles of about ${CYCLE_S} s: no trend to judge"

scenario_up
FAILURES=()
violation() { FAILURES+=("$*"); echo "VIOLATION: $*" >&2; }

# The reference service for the whole soak, with its /metrics for the
# scrape signal (scenario_lib's start_refserver stops after 240 s).
"${SC_NICE[@]}" nsenter --net="/run/netns/$SRV_NS" "$REFSERVER" --port "$SOAK_PORT,$PROBE_PORT" --workers 10 --service-ms 20 \
	--metrics-port "$METRICS_PORT" --duration-s $((SOAK_SECONDS + 120)) >"$SC_WORK/refserver.log" 2>&1 &
LAB_PIDS+=($!)
log=$SC_WORK/refserver.log wait_for --within 5 "the refserver to answer" client_connects "$SOAK_PORT"

echo 0 >"$SC_WORK/injected"
start_daemon soak "PORT=$SOAK_PORT" "PROBE_PORT=$PROBE_PORT"
sleep 3 # the first ticks: every source has read once

# ---- sampling ----------------------------------------------------------
# RSS (kB), fd count and threads of the daemon every SAMPLE_S, bounded by
# the soak's length. Each sample also fetches /metrics and /level from the
# daemon's endpoint, as a scraper would, so that its server runs all along.
scrape() {
	in_srv timeout 2 bash -c 'exec 3<>/dev/tcp/127.0.0.1/9477 &&
		printf "GET %s HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n" "$1" >&3 && cat <&3' scrape "$1"
}
scrape /metrics | head -n 1 | grep -q ' 200 ' || fail "the daemon's /metrics does not answer: $(scrape /metrics 2>&1 | head -n 3)"
(
	trap 'exit 0' TERM
	for _ in $(seq $((SOAK_SECONDS / SAMPLE_S + 120))); do
		[ -d "/proc/$DAEMON" ] || exit 0
		scrape /metrics >/dev/null 2>&1
		scrape /level >/dev/null 2>&1
		rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON/status" 2>/dev/null) || exit 0
		thr=$(awk '/^Threads:/ { print $2 }' "/proc/$DAEMON/status" 2>/dev/null) || exit 0
		fds=$(find "/proc/$DAEMON/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
		echo "$(now_ms) $rss $fds $thr" >>"$SC_WORK/samples"
		sleep "$SAMPLE_S"
	done
) &
SC_SAMPLER=$!
LAB_PIDS+=("$SC_SAMPLER")

# Sums of the data plane's class counters: "decided shed rst_sent
# connections requests_in_service".
dp_counts() {
	es_status | jq -r '[.classes[]] |
		[ (map(.counters | .admitted + .shed_cap + .shed_fraction + .shed_rate + .would_shed_cap
			+ .would_shed_fraction + .would_shed_rate + .fail_open + .pass_mode_off) | add),
		  (map(.counters | .shed_cap + .shed_fraction + .shed_rate) | add),
		  (map(.counters.rst_sent) | add),
		  (map(.connections) | add),
		  (map(.inflight) | add) ] | @tsv'
}
# SYNs the client's kernel retransmitted (all sockets of its namespace).
syn_retrans() {
	in_cli awk '/^TcpExt:/ { if (!n) { for (i = 1; i <= NF; i++) col[$i] = i; n = 1 } else print $col["TCPSynRetrans"] }' \
		/proc/net/netstat
}
# The state file, once it is our daemon's (a restarted daemon rewrites it
# from its first tick). A bounded wait; empty when it never was ours.
our_state() {
	OUR_STATE=
	wait_for --within 1 --try "the state file of pid $DAEMON" read_our_state || true
	[ -z "$OUR_STATE" ] || echo "$OUR_STATE"
}
read_our_state() {
	OUR_STATE=$(jq -c --argjson p "$DAEMON" 'select(.pid == $p)' "$SC_STATE" 2>/dev/null) && [ -n "$OUR_STATE" ] ||
		{ OUR_STATE= && return 1; }
}
established_on_port() { in_srv ss -Htn state established "( sport = :$SOAK_PORT )" | wc -l; }
controller_inflight() {
	our_state | jq -r '.signals[] | select(.name == "established") | .value // "null"' 2>/dev/null || echo null
}
our_level() { our_state | jq -r '.level // "none"' 2>/dev/null || echo none; }

# load_phase CYCLE NAME RATE SECONDS: one loadgen run and the data plane's
# and the client kernel's counts around it, as a row of $SC_WORK/phases:
# cycle name start_ms end_ms offered ok refused reset timeout error
# decided shed rst_sent syn_retrans max_level
load_phase() {
	local c=$1 name=$2 rate=$3 seconds=$4 t0 t1 before after r0 r1 id=c$1.$2
	read -r -a before < <(dp_counts)
	r0=$(syn_retrans)
	t0=$(now_ms)
	load "$id" --port "$SOAK_PORT" --rate "$rate" --duration-s "$seconds" --timeout-ms "$TIMEOUT_MS"
	t1=$(now_ms)
	read -r -a after < <(dp_counts)
	r1=$(syn_retrans)
	echo "$c $name $t0 $t1 $(jv "$id" '.total | "\(.offered) \(.ok) \(.refused) \(.reset) \(.timeout) \(.error)"')" \
		"$((after[0] - before[0])) $((after[1] - before[1])) $((after[2] - before[2])) $((r1 - r0))" >>"$SC_WORK/phases"
}

# quiet_gap CYCLE: no load; after a second for the last connections to
# close and one for the state file's refresh (daemon/state_refresh.h),
# QUIET_SAMPLES readings of data plane, kernel and controller, and
# the level, as a row of $SC_WORK/quiet:
# cycle start_ms end_ms dp_max ss_max ctl_max mismatches level
quiet_gap() {
	local c=$1 t0 dp req ss ctl bad=0 dpmax=0 ssmax=0 ctlmax=0
	t0=$(now_ms)
	sleep 2
	for _ in $(seq "$QUIET_SAMPLES"); do
		read -r dp req < <(dp_counts | cut -f4,5)
		ss=$(established_on_port)
		ctl=$(controller_inflight)
		[[ "$ctl" =~ ^[0-9]+(\.0*)?$ ]] && ctl=${ctl%.*} || ctl=-1 # no reading is a mismatch
		[ "$dp" -eq "$ss" ] && [ "$req" -eq 0 ] && [ "$ctl" -eq "$req" ] || bad=$((bad + 1))
		[ "$req" -gt "$ctlmax" ] && ctlmax=$req
		[ "$dp" -gt "$dpmax" ] && dpmax=$dp
		[ "$ss" -gt "$ssmax" ] && ssmax=$ss
		[ "$ctl" -gt "$ctlmax" ] && ctlmax=$ctl
		sleep 0.2
	done
	sleep "$(awk -v q="$QUIET_S" -v n="$QUIET_SAMPLES" 'BEGIN { r = q - 2 - 0.2 * n; print (r > 0 ? r : 0) }')"
	echo "$c $t0 $(now_ms) $dpmax $ssmax $ctlmax $bad $(our_level)" >>"$SC_WORK/quiet"
}

echo "soak: ${SOAK_SECONDS} s of cycles of ${OVER_S} s at ${OVER_RATE}/s (2x), ${CALM_S} s at ${CALM_RATE}/s" \
	"(0.3x), ${QUIET_S} s quiet; port $SOAK_PORT, daemon pid $DAEMON"
T_START=$(now_ms)
CYCLES=0
for c in $(seq "$MAX_CYCLES"); do
	t0=$(now_ms)
	kill -0 "$DAEMON" 2>/dev/null || fail "the daemon exited in cycle $c: $(tail -n 5 "$DAEMON_LOG")"
	load_phase "$c" over "$OVER_RATE" "$OVER_S"
	load_phase "$c" calm "$CALM_RATE" "$CALM_S"
	quiet_gap "$c"
	CYCLES=$c
	now=$(now_ms)
	echo "cycle $c done at $(((now - T_START) / 1000)) s"
	# Another cycle only if it ends within SOAK_SECONDS, judging by this one.
	[ $((now - T_START + now - t0)) -le $((SOAK_SECONDS * 1000)) ] || break
done
[ "$CYCLES" -ge 3 ] || fail "only $CYCLES cycles fitted in $SOAK_SECONDS s: no trend to judge"

stop_level_sampler
log_level_changes >"$SC_WORK/changes"
kill -0 "$DAEMON" 2>/dev/null || fail "the daemon exited: $(tail -n 5 "$DAEMON_LOG")"

# ---- per-cycle table -----------------------------------------------------
# Samples and level changes are assigned to a cycle by time: a cycle runs
# from its overload phase's start to its quiet gap's end.
awk '$2 == "over" { print $1, $3 }' "$SC_WORK/phases" >"$SC_WORK/cycle_start"
awk '{ print $1, $3 }' "$SC_WORK/quiet" >"$SC_WORK/cycle_end"
cycle_of() { # reads "epoch_ms ..." lines, prefixes each with its cycle (0: before the first)
	awk 'FNR == NR { s[$1] = $2; next } FILENAME == ARGV[2] { e[$1] = $2; n = $1; next }
		{ c = 0; for (i = 1; i <= n; i++) if ($1 >= s[i] && $1 <= e[i]) c = i; print c, $0 }' \
		"$SC_WORK/cycle_start" "$SC_WORK/cycle_end" -
}
cycle_of <"$SC_WORK/samples" >"$SC_WORK/samples.c"
rank() { case $1 in normal) echo 0 ;; elevated) echo 1 ;; high) echo 2 ;; critical) echo 3 ;; *) echo 9 ;; esac; }

printf "\n%-5s %7s %7s %7s %7s %7s %7s %7s %7s %9s %5s %5s %8s %5s %5s %7s\n" cycle offered ok refused \
	decided "+retx" shed rst "lvl-chg" "dp/ss/ctl" diff lvl "rss kB" fdmin fdmax threads
for c in $(seq "$CYCLES"); do
	awk -v c="$c" '$1 == c { o += $5; ok += $6; rf += $7; d += $11; sh += $12; rs += $13; rx += $14 }
		END { printf "%-5d %7d %7d %7d %7d %7d %7d %7d ", c, o, ok, rf, d, rx, sh, rs }' "$SC_WORK/phases"
	s=$(awk -v c="$c" '$1 == c { print $2 }' "$SC_WORK/cycle_start")
	e=$(awk -v c="$c" '$1 == c { print $2 }' "$SC_WORK/cycle_end")
	printf "%7d " "$(awk -v s="$s" -v e="$e" '$1 >= s && $1 <= e' "$SC_WORK/changes" | wc -l)"
	awk -v c="$c" '$1 == c { printf "%9s %5d %5s ", $4 "/" $5 "/" $6, $7, substr($8, 1, 5) }' "$SC_WORK/quiet"
	awk -v c="$c" '$1 == c { if (!n++ || $3 > r) r = $3; if (n == 1 || $4 < fmin) fmin = $4; if ($4 > fmax) fmax = $4; t = $5 }
		END { printf "%8d %5d %5d %7d\n", r, fmin, fmax, t }' "$SC_WORK/samples.c"
done
echo "(decided: data-plane decisions; +retx: SYNs the client retransmitted; dp/ss/ctl: the highest"
echo " connections of data plane and kernel, and requests in service of data plane and controller, over"
echo " the quiet gap's $QUIET_SAMPLES readings; diff: readings where they were not dp = ss and 0 requests;"
echo " lvl: level at the end of the cycle)"

# ---- invariants ----------------------------------------------------------
# memory
read -r rss2 rss_last slope < <(awk -v last="$CYCLES" '
	$1 == 2 && $3 > m2 { m2 = $3 }
	$1 == last && $3 > ml { ml = $3 }
	$1 >= 2 { n++; x = $2 / 60000; sx += x; sy += $3; sxx += x * x; sxy += x * $3 }
	END { d = n * sxx - sx * sx; printf "%d %d %.1f\n", m2, ml, (d > 0 ? (n * sxy - sx * sy) / d : 0) }' \
	"$SC_WORK/samples.c")
mem_growth=$((rss_last - rss2))
mem_ok=PASS
[ "$mem_growth" -le "$RSS_TOLERANCE_KB" ] || {
	mem_ok=FAIL
	violation "memory: RSS peak grew from $rss2 kB (cycle 2) to $rss_last kB (cycle $CYCLES)"
}

# fds
read -r fd_floor2 fd_floor_max fd_max < <(awk -v last="$CYCLES" '
	$1 >= 2 { if (!($1 in f) || $4 < f[$1]) f[$1] = $4; if ($4 > mx) mx = $4 }
	END { fl = 0; for (c in f) if (c + 0 > 2 && f[c] > fl) fl = f[c]; printf "%d %d %d\n", f[2], fl, mx }' \
	"$SC_WORK/samples.c")
fd_ok=PASS
[ "$fd_floor_max" -le "$fd_floor2" ] || {
	fd_ok=FAIL
	violation "fds: the floor rose from $fd_floor2 (cycle 2) to $fd_floor_max"
}
[ "$fd_max" -le $((fd_floor2 + FD_TRANSIENT)) ] || {
	fd_ok=FAIL
	violation "fds: a sample of $fd_max, more than $FD_TRANSIENT above the floor $fd_floor2"
}

# counters
cnt_ok=PASS
while read -r c name _ _ offered ok refused reset timeout error decided shed rst retx; do
	[ "$decided" -eq $((offered + retx)) ] || {
		cnt_ok=FAIL
		violation "counters: cycle $c $name: data plane decided $decided SYNs, the client sent $offered + $retx retransmitted"
	}
	[ "$shed" -eq "$refused" ] && [ "$rst" -eq "$refused" ] || {
		cnt_ok=FAIL
		violation "counters: cycle $c $name: $shed shed and $rst RSTs sent, $refused refusals seen"
	}
	[ "$reset" -eq 0 ] && [ "$error" -eq 0 ] || {
		cnt_ok=FAIL
		violation "counters: cycle $c $name: $reset resets and $error errors in a lossless lab"
	}
done <"$SC_WORK/phases"
while read -r c _ _ dp ss ctl bad _; do
	[ "$bad" -eq 0 ] || {
		cnt_ok=FAIL
		violation "counters: cycle $c quiet: $bad of $QUIET_SAMPLES readings differ (highest: data plane's connections $dp, kernel's $ss, requests in service $ctl)"
	}
done <"$SC_WORK/quiet"

# levels
lvl_ok=PASS
excursions=0
while read -r c name t0 t1 _; do
	settle=$([ "$name" = over ] && echo "$SETTLE_OVER_S" || echo "$SETTLE_CALM_S")
	# Directions of the changes while steady (+ up, - down), in order.
	dirs=$(awk -v a=$((t0 + settle * 1000)) -v b="$t1" '$1 >= a && $1 < b { print $2, $3 }' "$SC_WORK/changes" |
		while read -r from to; do [ "$(rank "$to")" -gt "$(rank "$from")" ] && printf + || printf -; done)
	turns=$(awk -v d="$dirs" 'BEGIN { n = 0; for (i = 2; i <= length(d); i++) n += substr(d, i, 1) != substr(d, i - 1, 1); print n }')
	[ -n "$dirs" ] && excursions=$((excursions + 1))
	[ "$turns" -le 1 ] || {
		lvl_ok=FAIL
		violation "levels: cycle $c $name: the level turned $turns times while the load was steady (${dirs})"
	}
	if [ "$name" = over ]; then
		# The level at the phase's end: the last change before it.
		peak=$(awk -v a="$t0" -v b="$t1" '$1 <= b { l = $3 } END { print l }' "$SC_WORK/changes")
		[ "$(rank "${peak:-normal}")" -ge 1 ] || {
			lvl_ok=FAIL
			violation "levels: cycle $c: the level stayed normal through the overload"
		}
	fi
done <"$SC_WORK/phases"
while read -r c _ _ _ _ _ _ level; do
	[ "$level" = normal ] || {
		lvl_ok=FAIL
		violation "levels: cycle $c: level $level at the end of the calm and quiet phases"
	}
done <"$SC_WORK/quiet"
changes_total=$(wc -l <"$SC_WORK/changes")

offered_total=$(awk '{ o += $5 } END { print o }' "$SC_WORK/phases")
decided_total=$(awk '{ d += $11 } END { print d }' "$SC_WORK/phases")
printf "\n%-9s %-6s %s\n" invariant result measured
printf "%-9s %-6s %s\n" memory "$mem_ok" \
	"RSS peak $rss2 kB (cycle 2) -> $rss_last kB (cycle $CYCLES), growth ${mem_growth} kB (limit $RSS_TOLERANCE_KB); trend ${slope} kB/min"
printf "%-9s %-6s %s\n" fds "$fd_ok" "floor $fd_floor2 (cycle 2), highest later floor $fd_floor_max, highest sample $fd_max (limit floor + $FD_TRANSIENT)"
printf "%-9s %-6s %s\n" counters "$cnt_ok" \
	"$offered_total connections, $decided_total decisions; every phase and quiet gap exact (see the table)"
printf "%-9s %-6s %s\n" levels "$lvl_ok" \
	"$changes_total changes in $CYCLES cycles; $excursions steady windows with a change, none turning more than once"
echo "(soak of $(((($(now_ms) - T_START)) / 1000)) s; $(wc -l <"$SC_WORK/samples") samples;" \
	"SCENARIO_KEEP=1 keeps the work folder, $SC_WORK)"

stop_daemon
[ ${#FAILURES[@]} -eq 0 ] || fail "${#FAILURES[@]} invariant violation(s)"
pass "soak: memory, fds, counters and levels flat over $CYCLES cycles"
