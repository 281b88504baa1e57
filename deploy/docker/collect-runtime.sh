#!/usr/bin/env bash
# Adds to a root directory the shared libraries (and the dynamic loader) that
# the binaries already in it load, at the paths they load them from, so that
# the directory alone runs them.
#   collect-runtime.sh ROOT PATH...      (PATH: a binary's path inside ROOT)
# glibc 2.34 and later has the files and dns NSS modules built in, so name
# resolution (a Prometheus signal's URL, say) needs no dlopen()ed library;
# the container runtime provides /etc/hosts and /etc/resolv.conf.
set -euo pipefail

root=$1
shift

for path in "$@"; do
	# ldd lines: "libx.so.1 => /path/libx.so.1 (0x...)", "/lib64/ld-linux...
	# (0x...)" for the loader; linux-vdso has no file.
	ldd "$root$path" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
done | sort -u | while read -r lib; do
	# -L: the content a symlink (a soname, the loader's /lib64 path) points
	# to, at the path the binary asks for.
	cp -L --parents "$lib" "$root"
done
