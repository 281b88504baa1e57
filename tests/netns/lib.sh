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

lab_up() {
	trap lab_cleanup EXIT
	trap 'exit 130' INT TERM
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
	local port=$1 seconds=${2:-120} pid
	# nsenter itself, not a subshell, so that kill reaches the server.
	nsenter --net="/run/netns/$SRV_NS" "$TCP_TOOL" serve "$port" "$seconds" &
	pid=$!
	LAB_PIDS+=("$pid")
	for _ in $(seq 100); do
		[ -n "$(ss -N "$SRV_NS" -Hltn "( sport = :$port )")" ] && return 0
		kill -0 "$pid" 2>/dev/null || fail "tcp_tool serve $port exited before listening"
		sleep 0.05
	done
	fail "tcp_tool serve $port does not listen after 5 s"
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

# daemon_config DIR PORT MODE: writes DIR/edgeshed.toml, a daemon on the
# server's interface at xdp-generic protecting PORT in MODE (action rst),
# ticking every 100 ms, with its run directory in DIR and one file signal,
# DIR/injected (0.1 of its target: no pressure). Prints the file's path.
daemon_config() {
	local dir=$1 port=$2 mode=$3
	echo 0.1 >"$dir/injected"
	cat >"$dir/edgeshed.toml" <<TOML
[daemon]
tick = "100ms"
run_dir = "$dir/run"

[dataplane]
mode = "$mode"
action = "rst"

[[interface]]
name = "$SRV_IF"
hook = "xdp-generic"

[[port]]
port = $port

[[signal]]
name = "injected"
kind = "file"
path = "$dir/injected"
target = 1.0
TOML
	echo "$dir/edgeshed.toml"
}

# wait_for WHAT CMD...: polls CMD for up to 15 s; on time-out shows the
# daemon's log (the file named by $log, when a test has one) and fails.
wait_for() {
	local what=$1 i
	shift
	for i in $(seq 150); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	if [ -n "${log:-}" ] && [ -f "$log" ]; then echo "--- daemon log"; cat "$log"; fi
	fail "timed out waiting for: $what"
}
pass() { echo "ok: $*"; }

# expect_connect OUTCOME ADDR PORT: the client's connect ends in OUTCOME.
expect_connect() {
	local want=$1 addr=$2 port=$3 out
	out=$(in_cli "$TCP_TOOL" connect "$addr" "$port" 1000 || true)
	[ "${out%% *}" = "$want" ] || fail "connect $addr:$port: want $want, got '$out'"
	pass "connect $addr:$port -> $out"
}
