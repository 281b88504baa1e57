#!/usr/bin/env bash
# make lint: clang-tidy (.clang-tidy) and cppcheck (.cppcheck-suppressions)
# on the project's own C++, and clang-tidy (bpf/.clang-tidy) on the BPF C.
# Any finding fails.
#   lint.sh BUILD_DIR
# Both tools read the compile commands of a build of its own in BUILD_DIR, in
# which only the BPF skeletons are built (the C++ includes them); the
# libFuzzer targets have a clang build of their own, so their commands come
# from configuring it in BUILD_DIR/fuzz. Every C++ file in git must be in one
# of the two: a file that is in neither fails the lint instead of going
# unchecked.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD=$(realpath -m "${1:-build-lint}")
JOBS=${JOBS:-$(nproc)}
TIDY=clang-tidy-14
failed=()

die() {
	echo "lint: $*" >&2
	exit 1
}

for tool in "$TIDY" cppcheck clang-14 clang++-14 jq; do
	command -v "$tool" >/dev/null || die "$tool not found (scripts/deps.sh installs it)"
done

# 1. The compile commands, and the generated headers they include.
mkdir -p "$BUILD"
# No precompiled headers: each file is checked with its own includes only.
cmake -S . -B "$BUILD" -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON >"$BUILD/lint-configure.log" 2>&1 ||
	{ cat "$BUILD/lint-configure.log" >&2; die "configuring $BUILD failed"; }
cmake --build "$BUILD" -j "$JOBS" --target edgeshed_skel accept_queue_skel baseline_skel baseline_tracing_skel \
	synflood_xdp_skel >"$BUILD/lint-build.log" 2>&1 ||
	{ cat "$BUILD/lint-build.log" >&2; die "building the skeletons failed"; }
cmake -S tests/fuzz/libfuzzer -B "$BUILD/fuzz" -DCMAKE_CXX_COMPILER=clang++-14 \
	-DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$BUILD/lint-configure-fuzz.log" 2>&1 ||
	{ cat "$BUILD/lint-configure-fuzz.log" >&2; die "configuring $BUILD/fuzz failed"; }

# One command per file: a source built into several targets (tests/common/
# packet.cpp is in five) would be checked once for each.
mkdir -p "$BUILD/lint-db" "$BUILD/fuzz/lint-db"
jq 'unique_by(.file)' "$BUILD/compile_commands.json" >"$BUILD/lint-db/compile_commands.json"
jq 'unique_by(.file)' "$BUILD/fuzz/compile_commands.json" >"$BUILD/fuzz/lint-db/compile_commands.json"
main_db=$BUILD/lint-db/compile_commands.json
fuzz_db=$BUILD/fuzz/lint-db/compile_commands.json
main_files=() fuzz_files=()
# Sets, not `printf | grep -q`: under pipefail, grep leaving at its first
# match can kill printf with SIGPIPE and fail the pipeline, a file found.
declare -A in_main=() in_fuzz=()
while read -r f; do in_main[$f]=1; done < <(jq -r '.[].file' "$main_db")
while read -r f; do in_fuzz[$f]=1; done < <(jq -r '.[].file' "$fuzz_db")
while read -r f; do
	abs=$ROOT/$f
	if [[ $f == tests/fuzz/libfuzzer/* ]] && [ -n "${in_fuzz[$abs]:-}" ]; then
		fuzz_files+=("$abs")
	elif [ -n "${in_main[$abs]:-}" ]; then
		main_files+=("$abs")
	else
		die "$f is in no compile database, so nothing would check it (CMakeLists.txt)"
	fi
done < <(git ls-files '*.cpp')
[ ${#main_files[@]} -gt 0 ] || die "no C++ sources found"

# 2. clang-tidy, one process per file, JOBS at a time. A file's output is
# printed whole, and only when it has findings.
# The analyzer follows our calls into the bpftool skeletons in BUILD_DIR and
# reports their error path as a leak: it takes libbpf's
# bpf_object__destroy_skeleton, declared in a system header, for a function
# that frees nothing. Generated code is not ours to change, so a file whose
# every error lies in BUILD_DIR/bpf passes. (BUILD_DIR/layers/ holds links
# to controller/'s folders, the path our headers are included by: their
# errors count.)
tidy() {
	local db=$1
	shift
	printf '%s\0' "$@" | xargs -0 -P "$JOBS" -n 1 bash -c '
		out=$("$0" -quiet -p "$1" "$3" 2>&1) && exit 0
		errors=$(grep -E "^[^ ]+:[0-9]+:[0-9]+: (error|warning):" <<<"$out")
		[ -n "$errors" ] && ! grep -qv "^$2/" <<<"$errors" && exit 0
		printf "%s\n" "$out" | grep -v " warnings\? generated\.$"
		exit 1
	' "$TIDY" "$db" "$BUILD/bpf"
}
start=$SECONDS
tidy_rc=0
tidy "$(dirname "$main_db")" "${main_files[@]}" || tidy_rc=1
[ ${#fuzz_files[@]} -eq 0 ] || tidy "$(dirname "$fuzz_db")" "${fuzz_files[@]}" || tidy_rc=1

# The BPF C, with the flags of cmake/bpf.cmake: kernel code for clang
# -target bpf, so bpf/.clang-tidy holds the checks that fit it (for the
# benchmark's generator in tests/bench/ too).
arch=$(uname -m)
arch=${arch/x86_64/x86}
arch=${arch/aarch64/arm64}
bpf_flags=(-target bpf -mcpu=v3 -D__TARGET_ARCH_"$arch" -Wall -Werror -I"$BUILD/bpf"
	-I"$ROOT/include" -I"$ROOT/bpf")
mapfile -t bpf_files < <(git ls-files '*.bpf.c')
# xargs appends the file after the flags.
printf '%s\0' "${bpf_files[@]}" | xargs -0 -P "$JOBS" -n 1 bash -c '
	out=$("$0" -quiet --config-file="$1" "${!#}" -- "${@:2:$#-2}" 2>&1) && exit 0
	printf "%s\n" "$out" | grep -v " warnings\? generated\.$"
	exit 1
' "$TIDY" "$ROOT/bpf/.clang-tidy" "${bpf_flags[@]}" || tidy_rc=1
[ "$tidy_rc" -eq 0 ] || failed+=(clang-tidy)
echo "lint: clang-tidy on $((${#main_files[@]} + ${#fuzz_files[@]})) C++ and" \
	"${#bpf_files[@]} BPF files: $([ "$tidy_rc" -eq 0 ] && echo clean || echo FINDINGS)" \
	"($((SECONDS - start)) s)"

# 3. cppcheck on the same C++ sources; what it finds in the generated
# skeletons in BUILD_DIR/bpf is not ours to fix.
start=$SECONDS
cppcheck_opts=(--quiet --error-exitcode=1 -j "$JOBS" --std=c++20 --language=c++
	--enable=warning,performance,portability,style --inline-suppr
	--suppressions-list="$ROOT/.cppcheck-suppressions" --library=googletest
	--suppress=missingIncludeSystem --suppress="*:$BUILD/bpf/*")
cppcheck_rc=0
cppcheck "${cppcheck_opts[@]}" --project="$main_db" || cppcheck_rc=1
if [ ${#fuzz_files[@]} -gt 0 ]; then
	cppcheck "${cppcheck_opts[@]}" --project="$fuzz_db" --file-filter="$ROOT/tests/fuzz/libfuzzer/*" ||
		cppcheck_rc=1
fi
[ "$cppcheck_rc" -eq 0 ] || failed+=(cppcheck)
echo "lint: cppcheck on $((${#main_files[@]} + ${#fuzz_files[@]})) C++ files:" \
	"$([ "$cppcheck_rc" -eq 0 ] && echo clean || echo FINDINGS) ($((SECONDS - start)) s)"

[ ${#failed[@]} -eq 0 ] || die "FAILED: ${failed[*]}"
echo "lint: clean"
