#!/usr/bin/env bash
# The systemd unit's CapabilityBoundingSet= (and the DaemonSet's
# capabilities, which check_kubernetes.py holds equal to it) is enough and
# is not too much: the daemon, as root but limited to exactly that set the
# way systemd limits it, and under a 64 KiB RLIMIT_MEMLOCK (no
# CAP_SYS_RESOURCE, no LimitMEMLOCK=), attaches a fresh data plane, ticks,
# reads the accept queue through iter/tcp, and adopts the data plane on a
# restart; so does it as a user of its own with the set as ambient
# capabilities, as the unit runs it; with any one capability of the set
# removed, it cannot start.
source "$(dirname "$0")/../netns/lib.sh"
: "${SOURCE_DIR:?the source tree}"

caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$SOURCE_DIR/deploy/systemd/edgeshed.service.in")
[ -n "$caps" ] || fail "no CapabilityBoundingSet= in the unit"

lab_up
serve 80
serve 443

work=$(mktemp -d)
LAB_DIRS+=("$work")
cfg=$work/edgeshed.toml
# The example config on the lab's interface, with its run directory and its
# injected-pressure file in our work folder.
sed -e "s|^name = \"eth0\"|name = \"$SRV_IF\"|" \
	-e 's|^hook = "xdp"|hook = "xdp-generic"|' \
	-e "s|^run_dir = \"/run/edgeshed\"|run_dir = \"$work/run\"|" \
	-e "s|^path = \"/run/edgeshed/injected-pressure\"|path = \"$work/injected\"|" \
	"$SOURCE_DIR/examples/edgeshed.toml" >"$cfg"
echo 0 >"$work/injected"
grep -q "$SRV_IF" "$cfg" || fail "example config did not take the lab's interface"
grep -q "^run_dir = \"$work/run\"" "$cfg" || fail "example config did not take the run directory"

# setpriv's names: "CAP_NET_ADMIN" -> "net_admin".
bounding() {
	local out=-all c
	for c in "$@"; do out+=",+$(tr 'A-Z' 'a-z' <<<"${c#CAP_}")"; done
	echo "$out"
}

# start_limited LOG CAP...: the daemon in the server namespace as uid 0 with
# exactly CAP... : systemd gives a root service its bounding set as permitted
# and effective set, and so does an exec by uid 0 under a reduced bounding
# set with no inheritable capabilities.
start_limited() {
	local log=$1
	shift
	nsenter --net="/run/netns/$SRV_NS" prlimit --memlock=65536:65536 \
		setpriv --inh-caps=-all --bounding-set="$(bounding "$@")" \
		"$EDGESHED" run --config "$cfg" >"$log" 2>&1 &
	DAEMON=$!
	LAB_PIDS+=("$DAEMON")
}

status() { "$EDGESHED" --run-dir "$work/run" status --iface "$SRV_IF" --json 2>/dev/null; }
# Ticking (heartbeat fresh) and every signal read, the accept queue and a
# port's latency objective (a kernel_latency signal) included.
healthy() {
	local s
	s=$(status) || return 1
	[ "$(jq .fail_open <<<"$s" 2>/dev/null)" = false ] &&
		[ "$(jq '[.daemon.signals[] | select(.value != null)] | length' <<<"$s" 2>/dev/null)" = \
			"$(($(grep -c '^\[\[signal\]\]' "$cfg") + $(grep -c '^latency_objective = ' "$cfg")))" ]
}
wait_healthy() {
	local i
	for i in $(seq 150); do
		healthy && return 0
		kill -0 "$DAEMON" 2>/dev/null || break
		sleep 0.1
	done
	cat "$1"
	fail "daemon with $caps: $2"
}
stop_daemon() {
	kill -TERM "$DAEMON"
	wait "$DAEMON" || fail "daemon with $caps: exit status $? on SIGTERM"
}

# The effective set must be the one asked for, or the test proves nothing.
cap_mask() {
	local mask=0 c n
	for c in "$@"; do
		case $c in
		CAP_NET_ADMIN) n=12 ;; CAP_SYS_ADMIN) n=21 ;; CAP_PERFMON) n=38 ;; CAP_BPF) n=39 ;;
		CAP_SYS_RESOURCE) n=24 ;; *) fail "no bit known for $c" ;;
		esac
		mask=$((mask | (1 << n)))
	done
	printf '%016x' "$mask"
}

# shellcheck disable=SC2086 # caps is a list
start_limited "$work/fresh.log" $caps
wait_healthy "$work/fresh.log" "no fresh attach with every signal read"
eff=$(awk '/^CapEff:/ { print $2 }' "/proc/$DAEMON/status")
# shellcheck disable=SC2086
[ "$eff" = "$(cap_mask $caps)" ] || fail "daemon's CapEff is $eff, not $(cap_mask $caps) ($caps)"
grep -q "attached to $SRV_IF" "$work/fresh.log" || fail "first run did not attach afresh"
pass "with only $caps and 64 KiB of memlock: attached, ticking, accept queue read"
stop_daemon

# The data plane stayed (on_exit = "fail_open"): the next run adopts it.
# shellcheck disable=SC2086
start_limited "$work/adopt.log" $caps
wait_healthy "$work/adopt.log" "no adoption of the pinned data plane"
grep -q "adopted the data plane on $SRV_IF" "$work/adopt.log" || fail "second run did not adopt"
pass "with only $caps: adopted the pinned data plane on restart"
stop_daemon
"$EDGESHED" detach --iface "$SRV_IF" >/dev/null

# As the unit runs it: a user of its own (not root), the set as ambient
# capabilities, and a mount namespace where /sys/fs/bpf is an empty tmpfs
# with only the pin root bound in from the host's bpffs (TemporaryFileSystem=
# and BindPaths=). The pin root here is one of the test's own, so a real
# /sys/fs/bpf/edgeshed is left alone.
svc_uid=64999
user_root=/sys/fs/bpf/es-user-$LAB_ID
LAB_HOOKS+=("rm -rf $user_root")
install -d -o $svc_uid -g $svc_uid -m 0700 "$user_root"
user_dir=$work/user
install -d -o $svc_uid -g $svc_uid -m 0755 "$user_dir"
chmod 0711 "$work"
sed -e "s|^run_dir = \"$work/run\"|run_dir = \"$user_dir/run\"|" \
	-e 's|^on_exit = "fail_open"|on_exit = "detach"|' "$cfg" >"$user_dir/edgeshed.toml"
grep -q "^run_dir = \"$user_dir/run\"" "$user_dir/edgeshed.toml" || fail "user config: no run directory"
chmod 0644 "$work/injected"
ambient=$(bounding $caps)
# shellcheck disable=SC2016 # expanded by the inner shell
nsenter --net="/run/netns/$SRV_NS" unshare --mount --propagation private sh -c '
	set -e
	mkdir -p "$1/stage"
	mount --bind "$2" "$1/stage"
	mount -t tmpfs -o mode=0755 tmpfs /sys/fs/bpf
	mkdir /sys/fs/bpf/edgeshed
	mount --move "$1/stage" /sys/fs/bpf/edgeshed
	exec prlimit --memlock=65536:65536 setpriv --reuid="$3" --regid="$3" --clear-groups \
		--inh-caps="$4" --ambient-caps="$4" --bounding-set="$4" "$5" run --config "$1/edgeshed.toml"
' sh "$user_dir" "$user_root" "$svc_uid" "$ambient" "$EDGESHED" >"$work/user.log" 2>&1 &
DAEMON=$!
LAB_PIDS+=("$DAEMON")
# In the daemon's mount namespace, where its pins are at the pin root.
ustatus() {
	nsenter --mount="/proc/$DAEMON/ns/mnt" "$EDGESHED" --run-dir "$user_dir/run" status --iface "$SRV_IF" \
		--json 2>/dev/null
}
for _ in $(seq 150); do
	[ "$(ustatus | jq .fail_open 2>/dev/null)" = false ] && break
	kill -0 "$DAEMON" 2>/dev/null || break
	sleep 0.1
done
[ "$(ustatus | jq .fail_open 2>/dev/null)" = false ] || { cat "$work/user.log"; fail "the daemon as uid $svc_uid does not tick"; }
grep -q "attached to $SRV_IF" "$work/user.log" || fail "as uid $svc_uid: no fresh attach"
uid=$(awk '/^Uid:/ { print $3 }' "/proc/$DAEMON/status")
eff=$(awk '/^CapEff:/ { print $2 }' "/proc/$DAEMON/status")
[ "$uid" = $svc_uid ] || fail "the daemon's effective uid is $uid, not $svc_uid"
# shellcheck disable=SC2086
[ "$eff" = "$(cap_mask $caps)" ] || fail "as uid $svc_uid: CapEff $eff, not $(cap_mask $caps)"
[ "$(stat -c %u "$user_root/$SRV_IF/es_config")" = $svc_uid ] ||
	fail "the pins are not in the host's bpffs, owned by uid $svc_uid"
# bpftool writes its listing in several writes: read whole, then searched.
# (A `bpftool ... | grep -q` under pipefail failed when grep, done at the
# first match, left bpftool to die of SIGPIPE: 49 of 300 on a busy host.)
xdp_attached() {
	local out
	out=$(in_srv bpftool net show dev "$SRV_IF")
	grep -q 'id [0-9]' <<<"$out"
}
xdp_attached || {
	# Seen once in CI (ci26), not reproduced in 5 runs: what the daemon said.
	kill -0 "$DAEMON" 2>/dev/null && echo "the daemon is running" || echo "the daemon has exited"
	in_srv bpftool net show dev "$SRV_IF"
	cat "$work/user.log"
	fail "as uid $svc_uid: no XDP program attached"
}
pass "as uid $svc_uid with only $caps (ambient): attached, ticking, pins in the host's bpffs"
kill -TERM "$DAEMON"
wait "$DAEMON" || fail "the daemon as uid $svc_uid: exit status $? on SIGTERM"
[ ! -e "$user_root/$SRV_IF" ] || fail "on_exit = detach as uid $svc_uid left pins"
! xdp_attached || fail "as uid $svc_uid: detach left the program"
pass "as uid $svc_uid: detached on exit, nothing left"

# Each capability is needed: without it the daemon refuses to start and
# leaves nothing attached.
for drop in $caps; do
	rest=()
	for c in $caps; do [ "$c" = "$drop" ] || rest+=("$c"); done
	log=$work/without-$drop.log
	start_limited "$log" "${rest[@]}"
	for _ in $(seq 100); do kill -0 "$DAEMON" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$DAEMON" 2>/dev/null; then
		cat "$log"
		fail "daemon still runs without $drop"
	fi
	rc=0
	wait "$DAEMON" || rc=$?
	[ "$rc" -ne 0 ] || fail "daemon without $drop exited 0"
	[ ! -e "/sys/fs/bpf/edgeshed/$SRV_IF/xdp_link" ] || fail "daemon without $drop left an XDP link"
	pass "without $drop: refused ($(tail -1 "$log" | cut -c1-110))"
	rm -rf "/sys/fs/bpf/edgeshed/$SRV_IF"
done
