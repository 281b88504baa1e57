# Shared by the namespace tests: a client and a server namespace joined by a
# veth pair, with unique names per run, torn down on every exit path.
#   source lib.sh; lab_up; ... ; (cleanup runs from the EXIT trap)
set -euo pipefail

: "${EDGESHED:?path of the edgeshed binary}"
: "${TCP_TOOL:?path of tcp_tool}"

LAB_ID="${LAB_ID:-$$}"
SRV_NS="es-srv-$LAB_ID"
CLI_NS="es-cli-$LAB_ID"
SRV_IF="es-s$LAB_ID"
CLI_IF="es-c$LAB_ID"
SRV_V4=198.51.100.1
CLI_V4=198.51.100.2
SRV_V6=2001:db8::1
CLI_V6=2001:db8::2
LAB_PIDS=()
LAB_PINS=()
LAB_DIRS=() # temporary folders of a test, removed with the lab
LAB_HOOKS=() # commands of a test's own cleanup, run first

# Only the network namespace changes: bpffs pins stay in the host's mount
# namespace, where `edgeshed status` finds them.
in_srv() { nsenter --net="/run/netns/$SRV_NS" "$@"; }
in_cli() { nsenter --net="/run/netns/$CLI_NS" "$@"; }

lab_cleanup() {
	local rc=$?
	set +e
	for hook in "${LAB_HOOKS[@]}"; do eval "$hook"; done
	for pid in "${LAB_PIDS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
	# Whatever else still runs in the lab's namespaces.
	for ns in "$SRV_NS" "$CLI_NS"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
	done
	[ -d "/sys/fs/bpf/edgeshed/$SRV_IF" ] && in_srv "$EDGESHED" detach --iface "$SRV_IF" >/dev/null 2>&1
	rm -rf "/sys/fs/bpf/edgeshed/$SRV_IF"
	# The host's limits go with the last interface.
	[ "$(ls /sys/fs/bpf/edgeshed 2>/dev/null)" = host-wide-limits ] && rm -rf /sys/fs/bpf/edgeshed/host-wide-limits
	rmdir /sys/fs/bpf/edgeshed 2>/dev/null
	for pin in "${LAB_PINS[@]}"; do rm -f "$pin"; done
	for dir in "${LAB_DIRS[@]}"; do rm -rf "$dir"; done
	ip netns del "$SRV_NS" 2>/dev/null
	ip netns del "$CLI_NS" 2>/dev/null
	exit $rc
}

# bpffs on /sys/fs/bpf, mounted as edgeshed mounts it when missing
# (controller/dataplane/pin_dirs.cpp): on a fresh machine a test's own pin
# (bpftool) may come before any attach.
ensure_bpffs() {
	[ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" = bpf_fs ] || mount -t bpf -o mode=0700 bpf /sys/fs/bpf
}

# What a killed run with the same LAB_ID (a reused pid) left: its namespaces
# (es-NAME-LAB_ID), its interfaces' pins (es-XLAB_ID), which attach would
# adopt, and the test's own pins (es-NAME-LAB_ID, or with -maps after it),
# which bpftool would not overwrite.
lab_clear_leftovers() {
	local ns
	for ns in $(ip netns list | awk '{ print $1 }' | grep -E "^es-[a-z0-9]+-$LAB_ID\$" || true); do
		ip netns del "$ns"
	done
	rm -rf /sys/fs/bpf/edgeshed/es-?"$LAB_ID" /sys/fs/bpf/es[-_]*[-_]"$LAB_ID" /sys/fs/bpf/es[-_]*[-_]"$LAB_ID"-maps
}

lab_up() {
	trap lab_cleanup EXIT
	trap 'exit 130' INT TERM
	ensure_bpffs
	lab_clear_leftovers
	ip netns add "$SRV_NS"
	ip netns add "$CLI_NS"
	ip link add "$SRV_IF" netns "$SRV_NS" type veth peer name "$CLI_IF" netns "$CLI_NS"
	in_srv ip link set lo up
	in_cli ip link set lo up
	in_srv ip addr add "$SRV_V4/24" dev "$SRV_IF"
	in_cli ip addr add "$CLI_V4/24" dev "$CLI_IF"
	in_srv ip -6 addr add "$SRV_V6/64" dev "$SRV_IF" nodad
	in_cli ip -6 addr add "$CLI_V6/64" dev "$CLI_IF" nodad
	in_srv ip link set "$SRV_IF" up
	in_cli ip link set "$CLI_IF" up
	# Static neighbours: no ARP/ND round trip in the measurements.
	local srv_mac cli_mac
	cli_mac=$(in_cli ip -o link show "$CLI_IF" | grep -o 'link/ether [^ ]*' | cut -d' ' -f2)
	srv_mac=$(in_srv ip -o link show "$SRV_IF" | grep -o 'link/ether [^ ]*' | cut -d' ' -f2)
	in_cli ip neigh replace "$SRV_V4" lladdr "$srv_mac" dev "$CLI_IF"
	in_cli ip neigh replace "$SRV_V6" lladdr "$srv_mac" dev "$CLI_IF"
	in_srv ip neigh replace "$CLI_V4" lladdr "$cli_mac" dev "$SRV_IF"
	in_srv ip neigh replace "$CLI_V6" lladdr "$cli_mac" dev "$SRV_IF"
}

# Starts a server in the server namespace for at most SECONDS, and returns
# once it listens: a SYN sent earlier would be refused by the kernel, and a
# kernel RST reads as a shed.
serve() {
	local port=$1 seconds=${2:-120}
	# nsenter itself, not a subshell, so that kill reaches the server.
	nsenter --net="/run/netns/$SRV_NS" "$TCP_TOOL" serve "$port" "$seconds" &
	LAB_PIDS+=("$!")
	wait_for --within 5 --alive "$!" "tcp_tool serve $port to listen" tcp_listens "$SRV_NS" "$port"
}

# tcp_listens NS PORT: a TCP socket listens on PORT in namespace NS.
tcp_listens() { [ -n "$(ss -N "$1" -Hltn "( sport = :$2 )")" ]; }
# client_connects PORT: the client connects to the server's IPv4 PORT within
# 200 ms.
client_connects() { in_cli "$TCP_TOOL" connect "$SRV_V4" "$1" 200; }
# option_of OPTION ARG...: the value after OPTION in ARG... (nothing if none).
option_of() {
	local want=$1
	shift
	while [ $# -gt 1 ]; do
		[ "$1" = "$want" ] && echo "$2" && return 0
		shift
	done
	return 0
}

# The client veth gets the bare XDP_PASS program: native XDP_TX on a veth
# (edgeshed's RST) reaches the peer only while the peer runs an XDP program.
# Every setup gets it, so the client side receives the same way in each.
client_xdp_pass() {
	local pin=/sys/fs/bpf/es-bench-pass-$LAB_ID
	bpftool prog load "${BPF_OUT:?folder of the BPF objects}/baseline.bpf.o" "$pin" type xdp
	LAB_PINS+=("$pin")
	in_cli bpftool net attach xdpdrv pinned "$pin" dev "$CLI_IF"
}

fail() { echo "FAIL: $*" >&2; exit 1; }

# daemon_config [--hook HOOK] [--daemon LINE]... [--signal LINE]...
# [--keep-signal] DIR PORT MODE: writes DIR/edgeshed.toml, a daemon on the
# server's interface at HOOK (xdp-generic) protecting PORT in MODE (action
# rst), ticking every 100 ms, with its run directory in DIR and one file
# signal, DIR/injected, set to 0.1 of its target (no pressure) unless
# --keep-signal: a test that drives the signal, and rewrites the config
# meanwhile, keeps its value, or its absence. --daemon and --signal add a
# line to those tables; other tables the caller appends (TOML takes them in
# any order). Prints the file's path.
daemon_config() {
	local hook=xdp-generic daemon_lines='' signal_lines='' keep_signal=''
	while :; do
		case $1 in
		--hook) hook=$2 ;;
		--daemon) daemon_lines+=$'\n'$2 ;;
		--signal) signal_lines+=$'\n'$2 ;;
		--keep-signal) keep_signal=1 && shift && continue ;;
		*) break ;;
		esac
		shift 2
	done
	local dir=$1 port=$2 mode=$3
	[ -n "$keep_signal" ] || echo 0.1 >"$dir/injected"
	cat >"$dir/edgeshed.toml" <<TOML
[daemon]
tick = "100ms"
run_dir = "$dir/run"$daemon_lines

[dataplane]
mode = "$mode"
action = "rst"

[[interface]]
name = "$SRV_IF"
hook = "$hook"

[[port]]
port = $port

[[signal]]
name = "injected"
kind = "file"
path = "$dir/injected"
target = 1.0$signal_lines
TOML
	echo "$dir/edgeshed.toml"
}

# lab_daemon CONFIG LOG [OPTION...]: starts `edgeshed OPTION... run` in the
# server's namespace, its output appended to LOG, and sets DAEMON. nsenter
# itself runs in the background, not a subshell, so that DAEMON is the daemon.
lab_daemon() {
	local cfg=$1 out=$2
	shift 2
	nsenter --net="/run/netns/$SRV_NS" "$EDGESHED" "$@" run --config "$cfg" >>"$out" 2>&1 &
	DAEMON=$!
	LAB_PIDS+=("$DAEMON")
}

# wait_for [--within SECONDS] [--alive PID] [--try] WHAT CMD...: polls CMD
# every 0.1 s for up to SECONDS (15); fails once the time is up, or at once
# when PID has exited (it never will then), showing the log named by $log
# (when the caller has one). With --try it returns 1 instead, for a caller
# whose failure has more to say.
wait_for() {
	local within=15 alive='' try='' what
	while :; do
		case $1 in
		--within) within=$2 ;;
		--alive) alive=$2 ;;
		--try) try=1 && shift && continue ;;
		*) break ;;
		esac
		shift 2
	done
	what=$1
	shift
	for _ in $(seq $((within * 10))); do
		"$@" >/dev/null 2>&1 && return 0
		if [ -n "$alive" ] && ! kill -0 "$alive" 2>/dev/null; then
			[ -z "$try" ] || return 1
			wait_for_failed "$what: pid $alive exited"
		fi
		sleep 0.1
	done
	[ -z "$try" ] || return 1
	wait_for_failed "timed out after $within s waiting for: $what"
}
wait_for_failed() {
	if [ -n "${log:-}" ] && [ -f "$log" ]; then echo "--- log $log"; cat "$log"; fi
	fail "$1"
}
pass() { echo "ok: $*"; }

# expect_connect OUTCOME ADDR PORT: the client's connect ends in OUTCOME.
expect_connect() {
	local want=$1 addr=$2 port=$3 out
	out=$(in_cli "$TCP_TOOL" connect "$addr" "$port" 1000 || true)
	[ "${out%% *}" = "$want" ] || fail "connect $addr:$port: want $want, got '$out'"
	pass "connect $addr:$port -> $out"
}
