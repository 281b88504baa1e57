#!/usr/bin/env bash
# Scenario 3, priorities: critical (port 443, and an operator's address as a
# critical source prefix), normal (port 80) and background (port 8080)
# traffic, mixed, at 3x the capacity of one service serving all three ports.
# Background is shed first: its shed share is at least normal's. Critical
# traffic succeeds: >= 99.9% of its requests answered.
source "$(dirname "$0")/scenario_lib.sh"

OPS_V4=198.51.100.3 # the operator's address, a critical [[prefix]]
scenario_up
in_cli ip addr add "$OPS_V4/24" dev "$CLI_IF"
cli_mac=$(in_cli ip -o link show "$CLI_IF" | grep -o 'link/ether [^ ]*' | cut -d' ' -f2)
in_srv ip neigh replace "$OPS_V4" lladdr "$cli_mac" dev "$SRV_IF"
start_refserver --port 80 --port 443 --port 8080
start_daemon priorities
sleep 2 # the probe learns the idle latency

# 3x = 1500/s for 6 s: critical 15% (10% to 443, 5% from the operator's
# address to 80), normal 45%, background 40%.
load mix --rate 1500 --duration-s 6 --timeout-ms 5000 \
	--class-port critical=443 --class-port background=8080 --class-source ops=$OPS_V4 \
	--class-mix critical=0.10,ops=0.05,normal=0.45,background=0.40
check_ge "offered" "$(jv mix .total.offered)" 8500
for c in critical ops normal background; do echo "$c: $(figures mix ".classes.$c")"; done

crit_offered=$(jv mix '.classes.critical.offered + .classes.ops.offered')
crit_ok=$(jv mix '.classes.critical.ok + .classes.ops.ok')
check_ge "critical offered" "$crit_offered" 1000
crit_success=$(awk -v o="$crit_offered" -v k="$crit_ok" 'BEGIN { printf "%.3f", 100 * k / o }')
check_ge "critical success (%)" "$crit_success" 99.9

share() { jv mix "(.classes.$1 | 100 * .refused / .offered * 10 | floor / 10)"; }
normal_share=$(share normal)
background_share=$(share background)
check_ge "normal offered" "$(jv mix .classes.normal.offered)" 1000
check_ge "background offered" "$(jv mix .classes.background.offered)" 1000
check_ge "background shed share (%) vs normal's" "$background_share" "$normal_share"
check_ge "normal admitted" "$(jv mix .classes.normal.ok)" 1
for c in normal background; do
	check_eq "$c: timeouts" "$(jv mix ".classes.$c.timeout")" 0
	check_eq "$c: resets" "$(jv mix ".classes.$c.reset")" 0
done

# The data plane's view of the same: per class, admitted and shed.
st=$(es_status)
dp() { jq -r ".classes.$1.counters | \"admitted \(.admitted), shed \(.shed_cap + .shed_fraction + .shed_rate) (cap \(.shed_cap), fraction \(.shed_fraction), rate \(.shed_rate))\"" <<<"$st"; }
check_eq "critical class: sheds in the data plane" \
	"$(jq '.classes.critical.counters | .shed_cap + .shed_fraction + .shed_rate' <<<"$st")" 0
for c in critical normal background; do echo "data plane, $c: $(dp "$c")"; done
pass "scenario 3 (3x, mixed): critical success $crit_success% ($crit_ok/$crit_offered, p99 $(jv mix .classes.critical.ok_latency_ms.p99) ms), shed share background $background_share% >= normal $normal_share%, normal $(jv mix .classes.normal.completed_per_sec)/s at p99 $(jv mix .classes.normal.ok_latency_ms.p99) ms"
stop_daemon
