#!/usr/bin/env bash
# make install with DESTDIR, at the default prefix and at /usr: the exact
# tree, the unit's ExecStart under the prefix given at install time, the
# installed files equal to the built ones, and the BPF objects inside the
# installed binary (nothing else to install for the data plane).
source "$(dirname "$0")/lib.sh"

# The tree make install writes under PREFIX (relative to /), with modes.
expected_tree() {
	local p=${1#/}
	local dirs=() parts="" part
	IFS=/ read -ra segs <<<"$p"
	for part in "${segs[@]}"; do
		parts=${parts:+$parts/}$part
		dirs+=("drwxr-xr-x $parts")
	done
	printf '%s\n' "${dirs[@]}"
	cat <<TREE
drwxr-xr-x $p/lib
drwxr-xr-x $p/lib/systemd
drwxr-xr-x $p/lib/systemd/system
-rw-r--r-- $p/lib/systemd/system/edgeshed.service
drwxr-xr-x $p/lib/sysusers.d
-rw-r--r-- $p/lib/sysusers.d/edgeshed.conf
drwxr-xr-x $p/sbin
-rwxr-xr-x $p/sbin/edgeshed
drwxr-xr-x $p/share
drwxr-xr-x $p/share/doc
drwxr-xr-x $p/share/doc/edgeshed
-rw-r--r-- $p/share/doc/edgeshed/README.md
drwxr-xr-x $p/share/doc/edgeshed/examples
-rw-r--r-- $p/share/doc/edgeshed/examples/edgeshed.toml
drwxr-xr-x $p/share/man
drwxr-xr-x $p/share/man/man8
-rw-r--r-- $p/share/man/man8/edgeshed.8
TREE
	if has_completion; then
		cat <<TREE
drwxr-xr-x $p/share/bash-completion
drwxr-xr-x $p/share/bash-completion/completions
-rw-r--r-- $p/share/bash-completion/completions/edgeshed
TREE
	fi
}

tree_of() { (cd "$1" && find . -mindepth 1 -printf '%M %P\n' | sort -k2); }

check_tree() {
	local root=$1 prefix=$2 p=${2#/}
	diff <(expected_tree "$prefix" | sort -k2) <(tree_of "$root") ||
		fail "install tree under $prefix differs from the expected one (< expected, > installed)"
	cmp -s "$root/$p/sbin/edgeshed" "$EDGESHED" || fail "installed binary is not the built one"
	cmp -s "$root/$p/share/man/man8/edgeshed.8" "$BUILD_DIR/deploy/edgeshed.8" ||
		fail "installed man page is not the built one"
	cmp -s "$root/$p/share/doc/edgeshed/examples/edgeshed.toml" "$SOURCE_DIR/examples/edgeshed.toml" ||
		fail "installed example config is not examples/edgeshed.toml"
	local exec
	exec=$(grep '^ExecStart=' "$root/$p/lib/systemd/system/edgeshed.service")
	[ "$exec" = "ExecStart=$prefix/sbin/edgeshed run --config /etc/edgeshed/edgeshed.toml" ] ||
		fail "unit under $prefix: $exec"
	grep -q '@[A-Z_]*@' "$root/$p/lib/systemd/system/edgeshed.service" &&
		fail "unit under $prefix has unsubstituted @VARIABLES@"
	if has_completion; then
		cmp -s "$root/$p/share/bash-completion/completions/edgeshed" <("$EDGESHED" completion bash) ||
			fail "installed completion is not what 'edgeshed completion bash' prints"
	fi
	pass "install tree under $prefix: $(tree_of "$root" | grep -c '^-') files, unit runs $prefix/sbin/edgeshed"
}

# The Makefile's target, as a user runs it (default PREFIX).
make -s -C "$SOURCE_DIR" install BUILD="$BUILD_DIR" DESTDIR="$WORK/default" >"$WORK/log" 2>&1 ||
	{ cat "$WORK/log"; fail "make install DESTDIR=... failed"; }
check_tree "$WORK/default" /usr/local

# A packager's prefix, given at install time only: the build tree was
# configured with the default one, and the unit must still follow. This is
# the command make install PREFIX=/usr runs once the build is up to date
# (a second make would only walk the up-to-date build again).
DESTDIR="$WORK/usr" cmake --install "$BUILD_DIR" --prefix /usr >"$WORK/log" 2>&1 ||
	{ cat "$WORK/log"; fail "cmake --install --prefix /usr with DESTDIR failed"; }
check_tree "$WORK/usr" /usr

# The data plane ships inside the binary: each BPF object the daemon loads
# is embedded byte for byte by its skeleton, so no .bpf.o is installed.
for obj in edgeshed accept_queue; do
	"$PYTHON" -c 'import sys; sys.exit(open(sys.argv[2], "rb").read() not in open(sys.argv[1], "rb").read())' \
		"$WORK/usr/usr/sbin/edgeshed" "$BPF_OUT/$obj.bpf.o" ||
		fail "$obj.bpf.o is not embedded in the installed binary"
done
"$WORK/usr/usr/sbin/edgeshed" --help >/dev/null || fail "installed binary does not run"
pass "BPF objects edgeshed and accept_queue are embedded in the installed binary"
