#!/usr/bin/env bash
# Scenario 2, beyond saturation and back: the classic case's service
# (capacity 500/s) behind edgeshed, offered 0.5x -> 1.5x -> 3x -> 0.5x of its
# capacity. In every phase above 1x: completed and admitted p99 within the
# bounds of scenario_lib.sh (80% of capacity, 3x the service time; an idle
# machine reaches 90% and 2x). The level returns to normal
# within 10 s of the load dropping, and changes at most once while the load
# is steady (each phase, its first 2 s left out; in the last phase, the
# one-step-at-a-time descent to normal is the recovery, measured on its own).
source "$(dirname "$0")/scenario_lib.sh"

RAMP="0.5x:5s,1.5x:10s,3x:10s,0.5x:13s"
scenario_up
start_refserver
start_daemon ramp
sleep 2 # a few ticks at rest: the probe's first readings
level_is normal || fail "level $(daemon_level) before any load"
start_level_sampler
t0=$(now_ms)
load ramp --ramp "$RAMP" --capacity 500 --timeout-ms 5000
sleep 0.5
stop_level_sampler
log_level_changes >"$SC_WORK/changes"

rank() { case $1 in normal) echo 0 ;; elevated) echo 1 ;; high) echo 2 ;; critical) echo 3 ;; *) echo 9 ;; esac; }
timeline=$(awk -v t0="$t0" '{ printf "%s%.1fs %s", (NR > 1 ? ", " : ""), ($1 - t0) / 1000, $2 }' "$SC_WORK/levels")
echo "level timeline (sampled every 200 ms, from the load's start): $timeline"
echo "level changes logged: $(awk -v t0="$t0" '{ printf "%s%.1fs %s->%s", (NR > 1 ? ", " : ""), ($1 - t0) / 1000, $2, $3 }' "$SC_WORK/changes")"

nphases=$(jv ramp '.phases | length')
for i in $(seq 0 $((nphases - 1))); do
	p=".phases[$i]"
	label=$(jv ramp "$p.label")
	echo "phase $i ($label from $(jv ramp "$p.start_s") s): $(figures ramp "$p")"
	check_eq "phase $i: resets" "$(jv ramp "$p.reset")" 0
	check_eq "phase $i: errors" "$(jv ramp "$p.error")" 0
	over=$(awk -v r="$(jv ramp "$p.rate")" 'BEGIN { print (r > 500) }')
	[ "$over" = 1 ] || continue
	check_ge "phase $i ($label): ok count" "$(jv ramp "$p.ok_latency_ms.count")" 1
	check_ge "phase $i ($label): refused" "$(jv ramp "$p.refused")" 1
	check_ge "phase $i ($label): completed/s" "$(jv ramp "$p.completed_per_sec")" "$SC_MIN_COMPLETED"
	check_le "phase $i ($label): admitted p99 (ms)" "$(jv ramp "$p.ok_latency_ms.p99")" "$SC_MAX_P99_MS"
	pass "phase $i ($label): $(jv ramp "$p.completed_per_sec")/s completed, admitted p99 $(jv ramp "$p.ok_latency_ms.p99") ms, refusal p99 $(jv ramp "$p.refused_ms.p99") ms"
done

# The level must have reacted to the overload, or coming back means nothing.
peak=$(awk '{ print $2 }' "$SC_WORK/levels" | while read -r l; do rank "$l"; done | sort -n | tail -1)
[ "${peak:-0}" -ge 1 ] || fail "the level never left normal during the overload: $timeline"

# Back to normal within 10 s of the drop (the start of the last phase).
drop=$((t0 + $(jv ramp "(.phases[-1].start_s * 1000 | floor)")))
back_log=$(awk -v d="$drop" '$1 >= d && $3 == "normal" { print $1; exit }' "$SC_WORK/changes")
back_sampled=$(awk -v d="$drop" '$1 >= d && $2 == "normal" { print $1; exit }' "$SC_WORK/levels")
[ -n "$back_log" ] && [ -n "$back_sampled" ] || fail "the level did not return to normal after the load dropped: $timeline"
[ "$(tail -n1 "$SC_WORK/levels" | cut -d' ' -f2)" = normal ] || fail "the level ended $(tail -n1 "$SC_WORK/levels")"
took=$(awk -v a="$drop" -v b="$back_log" 'BEGIN { printf "%.1f", (b - a) / 1000 }')
took_sampled=$(awk -v a="$drop" -v b="$back_sampled" 'BEGIN { printf "%.1f", (b - a) / 1000 }')
check_le "seconds from the drop to level normal" "$took" 10
# (the sampler reads every 200 ms: the same 10 s, give or take a sample)
check_le "seconds from the drop to level normal (sampled)" "$took_sampled" 10.2
pass "level back to normal ${took} s after the load dropped (sampled: ${took_sampled} s)"

# Changes while the load is steady: each phase from 2 s after its start to its
# end; in the last phase, from the return to normal on. In the last phase,
# the descent itself must go down, one step at a time.
for i in $(seq 0 $((nphases - 1))); do
	start=$((t0 + $(jv ramp "(.phases[$i].start_s * 1000 | floor)")))
	end=$((start + $(jv ramp "(.phases[$i].duration_s * 1000 | floor)")))
	from=$((start + 2000)) from_sampled=$((start + 2000))
	if [ "$i" -eq $((nphases - 1)) ]; then
		from=$((back_log + 1)) from_sampled=$((back_sampled + 1))
		up=$(awk -v s="$start" -v b="$back_log" '$1 >= s && $1 <= b' "$SC_WORK/changes" | while read -r _ a b; do
			[ "$(rank "$b")" -lt "$(rank "$a")" ] || echo "$a->$b"
		done)
		[ -z "$up" ] || fail "phase $i: the level rose while the load was low: $up"
	fi
	n=$(awk -v a="$from" -v b="$end" '$1 >= a && $1 < b' "$SC_WORK/changes" | wc -l)
	ns=$(awk -v a="$from_sampled" -v b="$end" 'NR > 1 && $1 >= a && $1 < b' "$SC_WORK/levels" | wc -l)
	echo "phase $i: $n level change(s) logged, $ns sampled, in the steady window $(((from - t0) / 100))..$(((end - t0) / 100)) (x0.1 s)"
	check_le "phase $i: level changes while steady" "$n" 1
done
pass "scenario 2 (ramp $RAMP): at most one level change per steady phase"
stop_daemon
