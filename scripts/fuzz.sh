#!/usr/bin/env bash
# The libFuzzer targets of tests/fuzz/libfuzzer/, built with clang in a
# build folder of their own (the main build uses g++).
#   fuzz.sh build DIR [TARGET...]            configure and build the targets
#                                            (all, or the ones named) in DIR
#   fuzz.sh run DIR TARGET SECONDS [SEED]    replay the target's seeds and
#                                            regressions, then fuzz it for SECONDS
#   fuzz.sh all DIR SECONDS                  build, then run every target (make fuzz)
#                                            for SECONDS and FUZZ_MIN_RUNS (10^6) inputs
# SEED 0 (the default of `all`) lets libFuzzer pick one. The ctest cases
# fuzz.build and fuzz.<target> call `build` and `run`. A crash leaves its
# input in DIR/artifacts/<target>/; once fixed, it belongs in
# tests/fuzz/regressions/<target>/, which every run replays.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRC=$ROOT/tests/fuzz/libfuzzer
CORPUS=$ROOT/tests/fuzz/corpus
REGRESSIONS=$ROOT/tests/fuzz/regressions

usage() {
	sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

# The target list, from the one file that declares it.
targets() {
	sed -n 's/^set(EDGESHED_FUZZ_TARGETS \(.*\))$/\1/p' "$SRC/targets.cmake"
}

compiler() {
	local c
	for c in clang++-14 clang++; do
		command -v "$c" >/dev/null && { echo "$c"; return; }
	done
	echo "fuzz.sh: clang++ not found (scripts/deps.sh installs it)" >&2
	exit 1
}

# build DIR [TARGET...]
build() {
	local dir=$1 only=()
	shift
	local t
	for t in "$@"; do only+=(--target "${t}_fuzz"); done
	mkdir -p "$dir"
	cmake -S "$SRC" -B "$dir" -DCMAKE_CXX_COMPILER="$(compiler)" >"$dir/configure.log" 2>&1 ||
		{ cat "$dir/configure.log" >&2; exit 1; }
	cmake --build "$dir" -j "$(nproc)" "${only[@]}"
}

# The longest input worth fuzzing: the longest checked-in one rounded up to
# a power of two, and at least 1024 bytes. Beyond the largest real file
# (4064 bytes of /proc/net/netstat) longer inputs are more of the same
# lines, and each costs time linear in its length.
max_len() {
	local target=$1 longest len=1024
	longest=$(find "$CORPUS/$target" "$REGRESSIONS/$target" -type f -printf '%s\n' 2>/dev/null |
		sort -n | tail -1)
	while [ "$len" -lt "${longest:-0}" ]; do len=$((len * 2)); done
	echo "$len"
}

# run DIR TARGET SECONDS [SEED]
# With FUZZ_MIN_RUNS set (make fuzz: 10^6), a target that ran fewer inputs
# in SECONDS goes on until it has, for at most FUZZ_MAX_SECONDS (300) more.
run() {
	local dir=$1 target=$2 seconds=$3 seed=${4:-0}
	local bin=$dir/${target}_fuzz work=$dir/corpus/$target artifacts=$dir/artifacts/$target
	local log=$dir/$target.log dict=() rc=0
	[ -x "$bin" ] || { echo "fuzz.sh: $bin is not built (fuzz.sh build $dir)" >&2; exit 1; }
	[ -d "$CORPUS/$target" ] || { echo "fuzz.sh: no seeds in $CORPUS/$target" >&2; exit 1; }
	mkdir -p "$work" "$artifacts"
	[ -f "$CORPUS/$target.dict" ] && dict=(-dict="$CORPUS/$target.dict")
	# Leaks are checked too (ASan's default), so a parser that forgets
	# memory on some path fails here.
	local common=(-timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$target")"
		-artifact_prefix="$artifacts/")

	# 1. Every checked-in input once: the seeds, then the regressions.
	local replay=("$CORPUS/$target")
	[ -d "$REGRESSIONS/$target" ] && replay+=("$REGRESSIONS/$target")
	if ! "$bin" "${common[@]}" -runs=0 "${replay[@]}" >"$log" 2>&1; then
		echo "fuzz.$target: a checked-in input fails:" >&2
		tail -n 40 "$log" >&2
		return 1
	fi
	local replayed
	replayed=$(find "${replay[@]}" -type f | wc -l)

	# 2. Fuzzing, for a bounded time. New inputs go to the build folder's
	# corpus, which later runs start from.
	"$bin" "${common[@]}" "${dict[@]}" -seed="$seed" -max_total_time="$seconds" \
		-print_final_stats=1 "$work" "$CORPUS/$target" >"$log" 2>&1 || rc=$?
	local runs cov corpus more=""
	seed=$(sed -n 's/^INFO: Seed: //p' "$log" | head -1)
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	local min_runs=${FUZZ_MIN_RUNS:-0} first_runs=$runs
	if [ "$rc" -eq 0 ] && [ "${runs:-0}" -lt "$min_runs" ]; then
		# Where the first leg stopped: its corpus, a seed of its own.
		local bound=${FUZZ_MAX_SECONDS:-300} started=$SECONDS extra
		"$bin" "${common[@]}" "${dict[@]}" -seed="$((seed + 1))" -runs="$((min_runs - runs))" \
			-max_total_time="$bound" -print_final_stats=1 "$work" "$CORPUS/$target" >>"$log" 2>&1 || rc=$?
		extra=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
		more=", then ${extra:-0} more in $((SECONDS - started)) s"
		more+=" ($((runs + ${extra:-0})) in all, FUZZ_MIN_RUNS $min_runs)"
		runs=$((runs + ${extra:-0}))
	fi
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
	corpus=$(find "$work" -type f | wc -l)
	if [ "$rc" -ne 0 ]; then
		echo "fuzz.$target: FAILED after ${runs:-?} inputs (exit $rc)" >&2
		grep -E 'ERROR|invariant failed|runtime error|SUMMARY' "$log" | head -n 20 >&2 || true
		grep -E 'Test unit written|artifact' "$log" | tail -n 3 >&2 || true
		echo "full log: $log; reproduce: $bin <input>" >&2
		return 1
	fi
	echo "fuzz.$target: $replayed checked-in inputs replayed, then ${first_runs:-0} inputs in ${seconds} s$more" \
		"(seed $seed), coverage ${cov:-?} edges, build corpus $corpus inputs"
}

all() {
	local dir=$1 seconds=$2 failed=()
	build "$dir"
	for t in $(targets); do
		FUZZ_MIN_RUNS=${FUZZ_MIN_RUNS-1000000} run "$dir" "$t" "$seconds" 0 || failed+=("$t")
	done
	if [ ${#failed[@]} -gt 0 ]; then
		echo "fuzz.sh: failed: ${failed[*]} (inputs in $dir/artifacts/)" >&2
		return 1
	fi
}

case "${1:-}" in
build) [ $# -ge 2 ] || usage; shift; build "$@" ;;
run) [ $# -ge 4 ] && [ $# -le 5 ] || usage; run "$2" "$3" "$4" "${5:-0}" ;;
all) [ $# -eq 3 ] || usage; all "$2" "$3" ;;
targets) targets ;;
*) usage ;;
esac
