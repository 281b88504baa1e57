#!/usr/bin/env bash
# fresh_machine.sh CMD...: runs CMD, as root, where the host's kernel state
# looks as it does on a machine that has never run edgeshed or its tests: in
# a private mount namespace without bpffs, tracefs or debugfs. What a test
# needs of them, it (or the product) mounts itself; a test that passes only
# after an earlier run left them mounted, or left pins in them, fails here.
# The host's own mounts are untouched (propagation private: the unmounts and
# whatever the run mounts stay in the namespace, and go with it).
#   sudo scripts/fresh_machine.sh make test
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "fresh_machine.sh: run as root (it makes a mount namespace)" >&2
	exit 1
fi
[ $# -gt 0 ] || {
	echo "usage: fresh_machine.sh CMD..." >&2
	exit 2
}

# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare --mount --propagation private sh -c '
	for m in /sys/fs/bpf /sys/kernel/tracing /sys/kernel/debug; do
		# Mounted more than once (stacked), each goes.
		while mountpoint -q "$m"; do
			umount "$m" 2>/dev/null || umount -l "$m" || exit 1
		done
	done
	exec "$@"
' sh "$@"
