#!/usr/bin/env bash
# Writes the bash completion printed by the binary's own hidden
# `edgeshed completion bash` subcommand.
#   gen_completion.sh BINARY OUTPUT MODE
# MODE is the CMake option EDGESHED_BASH_COMPLETION:
#   AUTO  a binary without the subcommand is not an error: OUTPUT is left
#         absent and install() skips it;
#   ON    a binary without the subcommand is an error;
#   OFF   never called.
# A binary that has the subcommand but fails, or prints something that is not
# a bash completion, is an error in every mode.
set -euo pipefail

bin=$1
out=$2
mode=${3:-AUTO}

err=$(mktemp)
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$err" "$tmp"' EXIT

rc=0
"$bin" completion bash >"$tmp" 2>"$err" || rc=$?

if [ "$rc" -eq 2 ] && grep -qE 'A subcommand is required|not expected|unknown command' "$err"; then
	# CLI11's usage errors for an unknown word: the subcommand is not there.
	rm -f "$out"
	if [ "$mode" = ON ]; then
		echo "gen_completion.sh: $bin has no 'completion' subcommand (EDGESHED_BASH_COMPLETION=ON)" >&2
		exit 1
	fi
	echo "gen_completion.sh: $bin has no 'completion' subcommand yet; no bash completion installed"
	exit 0
fi
if [ "$rc" -ne 0 ]; then
	echo "gen_completion.sh: '$bin completion bash' failed ($rc):" >&2
	cat "$err" >&2
	exit 1
fi
# What bash-completion loads must at least parse and register a completion
# for the command.
if ! bash -n "$tmp" || ! grep -qE '^[[:space:]]*complete .*edgeshed' "$tmp"; then
	echo "gen_completion.sh: '$bin completion bash' printed no bash completion for edgeshed" >&2
	exit 1
fi
chmod 644 "$tmp"  # not mktemp's 0600
mv "$tmp" "$out"
