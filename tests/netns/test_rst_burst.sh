#!/usr/bin/env bash
# Refusal under a burst, with real clients (issue #16, point 3). The data
# plane sheds every new connection to the service, by RST:
#  - with the default limits, a burst of 2,000 connections in 0.1 s from
#    one address (one /24) is refused at once: every SYN gets a RST, none is
#    dropped, so no client waits for its 1 s retransmission;
#  - with a reflection limit of 100 a second after a burst of 200, the same
#    burst draws the burst and then the rate, the rest is dropped
#    (`rst_reflect_limited`), and those clients time out or are refused late.
source "$(dirname "$0")/scenario_lib.sh"

PORT=80
scenario_up
start_refserver

counters() { es_status | jq -c "$1"; }
shed_all() {
	in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook xdp-generic \
		--port $PORT --mode enforce --action rst --heartbeat-timeout-ms 0 "$@" >/dev/null
	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 1 >/dev/null
}

shed_all
check_eq "default limits" "$(counters '.rst_reflect | [.per_sec, .burst, .prefix_v4, .prefix_v6]')" \
	'[1000,4000,24,48]'
load burst --rate 20000 --count 2000 --timeout-ms 3000
echo "burst with the defaults: $(figures burst)"
check_eq "defaults: refused" "$(jv burst .total.refused)" 2000
check_eq "defaults: timeouts" "$(jv burst .total.timeout)" 0
# A dropped SYN would be refused after its retransmission, 1 s later: the
# client's CSV has no refusal that slow.
slowest=$(awk -F, 'NR > 1 && $3 == "refused" { if ($4 > m) m = $4 } END { print m + 0 }' "$SC_WORK/burst.csv")
last_start=$(awk -F, 'NR > 1 { if ($1 > m) m = $1 } END { print m + 0 }' "$SC_WORK/burst.csv")
echo "the burst's last connection started at $last_start ms; the slowest refusal took $slowest ms"
check_le "defaults: slowest refusal (ms)" "$slowest" 900
check_eq "defaults: rst_sent" "$(counters .classes.normal.counters.rst_sent)" 2000
check_eq "defaults: rst_capped" "$(counters .classes.normal.counters.rst_capped)" 0
pass "2,000 connections in 0.1 s from one /24, defaults: all refused by RST," \
	"refusal p99 $(jv burst .total.refused_ms.p99) ms, slowest $slowest ms"
in_srv "$EDGESHED" detach --iface "$SRV_IF"

shed_all --rst-reflect-per-sec 100 --rst-reflect-burst 200
start=$(date +%s%N)
load limited --rate 20000 --count 2000 --timeout-ms 3000
took_s=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
echo "burst under a limit of 200 then 100/s, over $took_s s: $(figures limited)"
sent=$(counters .classes.normal.counters.rst_sent)
limited=$(counters .counters.rst_reflect_limited)
# The burst, the rate over the run (retransmissions included) and a jiffy.
check_le "limited: rst_sent" "$sent" "$(awk -v t="$took_s" 'BEGIN { print int(200 + 100 * (t + 0.01) + 1) }')"
check_ge "limited: rst_sent" "$sent" 200
check_ge "limited: rst_reflect_limited" "$limited" 1500
check_eq "limited: rst_capped" "$(counters .classes.normal.counters.rst_capped)" "$limited"
# At most about 550 RSTs over the run: the other clients' SYNs and their
# retransmissions were dropped, and they time out.
check_ge "limited: timeouts" "$(jv limited .total.timeout)" 1000
pass "the same burst under a limit of 200 then 100/s: $sent RSTs in $took_s s, $limited dropped"
echo "test_rst_burst: all checks passed"
