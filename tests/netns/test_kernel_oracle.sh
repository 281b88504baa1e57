#!/usr/bin/env bash
# The running kernel as the oracle (issue #38, point 1). tests/tools/
# kernel_oracle.py sends some 260 crafted cases (header chains, length
# fields, fragments, VLAN stacks, TCP flags and options, QUIC headers) from
# a packet socket on the client's veth, each labelled "new" (a connection
# attempt to a protected port) or "not-new", and records what Linux
# answers: a SYN-ACK or a RST to its source port, or a datagram delivered
# to a socket in the server namespace.
#  - pass 1, without edgeshed: Linux's own answer to each case (the
#    control). The packet fuzzer's oracle, and the data plane by
#    BPF_PROG_TEST_RUN, are then checked against it (KernelCorpus* in
#    packet_fuzz, on this corpus);
#  - then at xdp-generic and at tc, under the daemon in enforce mode, action
#    rst, with the normal and background classes overridden to admit
#    nothing: each case again, its answer and the change of edgeshed's
#    counters across it.
# Fails for a "new" case Linux accepts in the control and accepts again
# under shed-all (a bypass), and for a "not-new" case edgeshed sheds or whose
# answer changes, unless it is too deep to read (a fifth VLAN tag, a
# seventh extension header, a TCP header cut by a first fragment): decided
# as the new connection it may hide (point 2), it is listed apart. A case
# shed that Linux drops anyway is only reported. The
# table of every case goes to stdout and, as markdown, to $ORACLE_REPORT
# when set. With $ORACLE_CORPUS set, the control's corpus is copied there
# (ORACLE_CORPUS=tests/fuzz/kernel_corpus.txt refreshes the committed one).
source "$(dirname "$0")/lib.sh"

TCP_PORT=8080       # protected; kernel_oracle.py's TCP_PORT
TCP_OPEN_PORT=9090  # a listener, not protected
QUIC_PORT=4433      # protected as QUIC
ORACLE=(python3 "$(dirname "$0")/../tools/kernel_oracle.py")
HOOKS=(xdp-generic tc)

lab_up
work=$(mktemp -d /tmp/edgeshed-oracle.XXXXXX)
LAB_DIRS+=("$work")
# The frames of a 1,000-byte TFO SYN with tags fit; so does a QUIC Initial
# behind eight extension headers.
in_srv ip link set "$SRV_IF" mtu 9000
in_cli ip link set "$CLI_IF" mtu 9000
mac_of() { grep -o 'link/ether [^ ]*' | cut -d' ' -f2; }
srv_mac=$(in_srv ip -o link show "$SRV_IF" | mac_of)
cli_mac=$(in_cli ip -o link show "$CLI_IF" | mac_of)

serve $TCP_PORT 600
serve $TCP_OPEN_PORT 600

# oracle_run SALT CORPUS [COUNTERS-COMMAND]: every case, from the client.
oracle_run() {
	local salt=$1 out=$2 counters=${3:-}
	in_cli "${ORACLE[@]}" run --iface "$CLI_IF" --src-mac "$cli_mac" --dst-mac "$srv_mac" \
		--server-netns "/run/netns/$SRV_NS" --out "$out" --salt "$salt" \
		${counters:+--counters-cmd "$counters"} || fail "kernel_oracle.py run failed"
}
answer_of() { awk -F'\t' -v c="$1" '$1 == c { print $3; exit }' "$2"; }

t0=$SECONDS
oracle_run 0 "$work/control.txt"
# The lab answers at all: else every "none" below would mean nothing.
for want in v4-syn:synack v6-syn:synack v4-quic-initial:delivered v6-quic-initial:delivered \
	v4-ack:rst; do
	got=$(answer_of "${want%%:*}" "$work/control.txt")
	[ "$got" = "${want#*:}" ] || fail "without edgeshed, ${want%%:*} got '$got', not ${want#*:}"
done
[ -z "${ORACLE_CORPUS:-}" ] || cp "$work/control.txt" "$ORACLE_CORPUS"
accepted=$(awk -F'\t' '!/^#/ && $4 ~ /^1\// && ($3 == "synack" || $3 == "delivered")' "$work/control.txt" | wc -l)
pass "without edgeshed: $(grep -vc '^#' "$work/control.txt") frames, $accepted cases accepted by Linux ($((SECONDS - t0)) s)"

# The packet fuzzer's oracle, against what this kernel just answered.
if [ -n "${PACKET_FUZZ:-}" ]; then
	KERNEL_CORPUS="$work/control.txt" "$PACKET_FUZZ" --gtest_filter='KernelCorpus*' \
		--gtest_brief=1 >"$work/corpus_test.log" 2>&1 ||
		{ cat "$work/corpus_test.log"; oracle_fuzz_failed=1; }
	[ -n "${oracle_fuzz_failed:-}" ] || pass "the packet fuzzer's oracle and the data plane's test runs agree with the kernel on the corpus"
else
	echo "PACKET_FUZZ not set: the fuzzer's oracle is not checked against this corpus"
fi

# daemon_at HOOK: a daemon on the server's interface at HOOK, enforce, rst,
# protecting TCP_PORT (TCP) and QUIC_PORT (QUIC), no pressure; then every
# class it can shed overridden to admit nothing. Sets DAEMON.
daemon_at() {
	local hook=$1 dir=$work/$1
	mkdir -p "$dir"
	daemon_config --hook "$hook" "$dir" "$TCP_PORT" enforce >/dev/null
	cat >>"$dir/edgeshed.toml" <<TOML

[[port]]
port = $QUIC_PORT
protocol = "quic"
TOML
	log=$dir/daemon.log
	lab_daemon "$dir/edgeshed.toml" "$log"
	status() { "$EDGESHED" --run-dir "$dir/run" status --iface "$SRV_IF" --json --interval 0; }
	running() { status | jq -e '.daemon.level' >/dev/null; }
	wait_for "the daemon at $hook" running
	for class in normal background; do
		"$EDGESHED" override $class --admit-fraction 0 --run-dir "$dir/run" >/dev/null ||
			fail "override $class --admit-fraction 0"
	done
	shedding_all() {
		status | jq -e --arg hook "$hook" '.hook == $hook and .mode == "enforce" and
			.classes.normal.shed_fraction == 1 and .classes.background.shed_fraction == 1' >/dev/null
	}
	wait_for "shed-all at $hook" shedding_all
}

salt=0
judge_args=()
for hook in "${HOOKS[@]}"; do
	t0=$SECONDS
	daemon_at "$hook"
	salt=$((salt + 1))
	oracle_run $salt "$work/$hook.txt" \
		"$EDGESHED --run-dir $work/$hook/run status --iface $SRV_IF --json --interval 0"
	got=$(answer_of v4-syn "$work/$hook.txt")
	[ "$got" = rst ] || fail "$hook: the plain SYN got '$got' under shed-all, not a RST: $(cat "$log")"
	kill -TERM "$DAEMON"
	wait "$DAEMON" || true
	in_srv "$EDGESHED" detach --iface "$SRV_IF" >/dev/null 2>&1 || true
	judge_args+=(--hook "$hook=$work/$hook.txt")
	pass "$hook: every case sent again under shed-all ($((SECONDS - t0)) s)"
done

"${ORACLE[@]}" judge --control "$work/control.txt" "${judge_args[@]}" ${ORACLE_REPORT:+--report "$ORACLE_REPORT"} ||
	fail "edgeshed and the kernel disagree: see the FAIL lines above"
[ -z "${oracle_fuzz_failed:-}" ] || fail "the packet fuzzer's oracle or the data plane's test runs disagree with the kernel: KernelCorpus* above"
echo "test_kernel_oracle: all checks passed"
