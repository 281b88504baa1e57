#!/usr/bin/env bash
# The Dockerfile, without a Docker engine: its stages are the ones intended
# (a Debian bookworm builder running deps.sh and make, a scratch runtime),
# its entrypoint is what the DaemonSet runs, and its runtime root file
# system, made by the Dockerfile's own RUN step on this build tree, holds
# nothing but the binary and its libraries and runs the binary by itself.
source "$(dirname "$0")/lib.sh"

dockerfile=$SOURCE_DIR/deploy/docker/Dockerfile
daemonset=$SOURCE_DIR/deploy/kubernetes/daemonset.yaml

# Instructions with their continuation lines joined.
instructions=$(sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' "$dockerfile" | grep -vE '^\s*(#|$)')
froms=$(grep -E '^FROM ' <<<"$instructions")
[ "$(head -1 <<<"$froms")" = "FROM debian:bookworm AS build" ] || fail "builder stage: $(head -1 <<<"$froms")"
[ "$(tail -1 <<<"$froms")" = "FROM scratch" ] || fail "runtime stage is not FROM scratch"
grep -qx 'RUN scripts/deps.sh' <<<"$instructions" || fail "the builder does not run scripts/deps.sh"
grep -qE '^RUN make BUILD=/build$' <<<"$instructions" || fail "the builder does not run make"
pass "stages: bookworm builder (deps.sh, make) and a scratch runtime"

entrypoint=$(sed -n 's/^ENTRYPOINT \["\([^"]*\)"\]$/\1/p' <<<"$instructions")
command=$("$PYTHON" -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print(d["spec"]["template"]["spec"]["containers"][0]["command"][0])' "$daemonset")
[ -n "$entrypoint" ] && [ "$entrypoint" = "$command" ] ||
	fail "image entrypoint '$entrypoint' is not the DaemonSet's command '$command'"
pass "entrypoint $entrypoint is what the DaemonSet runs"

# The RUN step that makes the runtime root, on this machine's build tree
# instead of the builder's /build, into a work folder instead of /rootfs.
step=$(grep -E '^RUN make install ' <<<"$instructions") || fail "no 'RUN make install' step"
step=${step#RUN }
step=${step//BUILD=\/build/BUILD=$BUILD_DIR}
step=${step//\/rootfs/$WORK/rootfs}
(cd "$SOURCE_DIR" && bash -euo pipefail -c "$step") >"$WORK/log" 2>&1 ||
	{ cat "$WORK/log"; fail "the Dockerfile's install step failed here"; }

root=$WORK/rootfs
[ -x "$root$entrypoint" ] || fail "no $entrypoint in the runtime root"
# Only the binary and shared objects, and the two empty mount points.
extra=$(cd "$root" && find . -type f ! -path "./${entrypoint#/}" ! -name '*.so*' | sed 's|^\./||')
[ -z "$extra" ] || fail "the runtime root holds more than the binary and its libraries: $extra"
[ ! -e "$root/bin/sh" ] || fail "the runtime root has a shell"
# Counted, not grep -q: a SIGPIPE to readelf under pipefail would hide a hit.
[ "$(readelf -S "$root$entrypoint" | grep -c '\.debug_info')" = 0 ] || fail "the image's binary has debug info"
# A container runtime mounts /proc (a sanitizer build reads its maps at
# start); nothing else is lent from this machine.
mkdir "$root/proc"
unshare --mount --fork sh -c 'mount -t proc proc "$1/proc" && exec chroot "$1" "$2" --help' \
	sh "$root" "$entrypoint" >"$WORK/help" 2>&1 ||
	{ cat "$WORK/help"; fail "the binary does not run in its runtime root alone"; }
grep -q '^Usage: ' "$WORK/help" || { cat "$WORK/help"; fail "no usage from $entrypoint --help in its runtime root"; }
pass "runtime root: $(find "$root" -type f | wc -l) files, $(du -sh "$root" | cut -f1); $entrypoint --help runs in it alone"
