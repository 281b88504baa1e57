#!/usr/bin/env bash
# The README's "Protecting a service by hand", run as written on a veth
# (issue #52 row 1): its commands, taken from the README itself, run in the
# server's namespace with the lab's interface for eth0 and this build for
# `sudo build/edgeshed`. A veth is where native XDP's RSTs are lost (the
# peer runs no XDP program and has GRO off), so attach must pick a hook that
# delivers them. Then 40 clients, each from its own address, connect to
# port 80: those the fraction sheds (0.3 of them by source hash) get a RST
# within 10 ms, the others are admitted.
source "$(dirname "$0")/lib.sh"
README="$(cd "$(dirname "$0")/../.." && pwd)/README.md"

lab_up
work=$(mktemp -d)
LAB_DIRS+=("$work")

# The README's block: from the heading to the end of its first sh fence.
awk '/^## Protecting a service by hand/ { on = 1 } on && /^```sh/ { block = 1; next }
	block && /^```/ { exit } block' "$README" >"$work/by_hand.sh"
grep -q 'attach --iface eth0' "$work/by_hand.sh" || fail "no attach in the README's block: $(cat "$work/by_hand.sh")"
# Continued lines joined; comments and blank lines dropped.
sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' "$work/by_hand.sh" | grep -v '^\s*#' | grep -v '^\s*$' |
	sed 's/ *#.*$//' >"$work/commands"
n=$(wc -l <"$work/commands")
[ "$n" -ge 5 ] || fail "only $n commands in the README's block: $(cat "$work/commands")"
# The gro off the veth peer has by default is the case that loses native
# XDP's RSTs: it must stay off here for the test to mean anything.
in_cli ethtool -k "$CLI_IF" | grep -q '^generic-receive-offload: off' ||
	fail "the client's veth has GRO on: native XDP would deliver RSTs, the test would prove nothing"

serve 80 120
# 40 client addresses; the server answers the admitted ones by ARP.
for i in $(seq 10 49); do in_cli ip addr add "198.51.100.$i/24" dev "$CLI_IF"; done

# run_readme_line N: the README's line N, as written but for the names.
run_readme_line() {
	local line
	line=$(sed -n "$1p" "$work/commands")
	line=${line//sudo build\/edgeshed/\"\$EDGESHED\"}
	line=${line//eth0/$SRV_IF}
	echo "+ $line"
	in_srv bash -c "EDGESHED='$EDGESHED'; $line"
}
# Everything before detach, then the clients, then detach.
detach_line=$(grep -n 'detach' "$work/commands" | head -1 | cut -d: -f1)
[ -n "$detach_line" ] || fail "no detach in the README's block"
for ((i = 1; i < detach_line; i++)); do
	run_readme_line "$i" >"$work/line$i.out" 2>&1 || fail "README line $i failed: $(cat "$work/line$i.out")"
	cat "$work/line$i.out"
done
grep -q "is a veth: hook xdp-generic" "$work/line1.out" || fail "attach did not say which hook it took on a veth: $(cat "$work/line1.out")"
hook=$("$EDGESHED" status --iface "$SRV_IF" --json --interval 0 | jq -r .hook)
[ "$hook" = xdp-generic ] || fail "attach on a veth took hook $hook"
[ "$("$EDGESHED" status --iface "$SRV_IF" --json --interval 0 | jq -r .mode)" = enforce ] || fail "not enforcing"
pass "the README's commands attached at $hook and enforce"

# Each client from its own address, 300 ms at most each: bounded.
in_cli python3 - "$SRV_V4" >"$work/clients" <<'PY'
import socket, sys, time
server = sys.argv[1]
for i in range(10, 50):
    s = socket.socket()
    s.settimeout(0.3)
    s.bind((f"198.51.100.{i}", 0))
    t0 = time.monotonic()
    try:
        s.connect((server, 80))
        outcome = "ok"
    except ConnectionRefusedError:
        outcome = "refused"
    except OSError:
        outcome = "timeout"
    print(outcome, f"{(time.monotonic() - t0) * 1000:.2f}")
    s.close()
PY
refused=$(grep -c '^refused' "$work/clients" || true)
ok=$(grep -c '^ok' "$work/clients" || true)
timeouts=$(grep -c '^timeout' "$work/clients" || true)
slowest=$(awk '$1 == "refused" && $2 > m { m = $2 } END { print m + 0 }' "$work/clients")
echo "40 clients: $ok admitted, $refused refused (slowest RST $slowest ms), $timeouts timed out"
[ "$timeouts" = 0 ] || fail "$timeouts clients timed out: a shed SYN was dropped, or its RST lost"
[ "$refused" -ge 3 ] && [ "$refused" -le 25 ] || fail "$refused of 40 refused at --shed-fraction 0.3"
[ "$ok" -ge 15 ] || fail "only $ok of 40 admitted at --shed-fraction 0.3"
awk '$1 == "refused" && $2 >= 10 { exit 1 }' "$work/clients" || fail "a RST took $slowest ms (over 10)"
pass "README by hand on a veth: $refused of 40 clients refused by a RST within $slowest ms, $ok admitted"

run_readme_line "$detach_line" || fail "the README's detach failed"
[ ! -e "/sys/fs/bpf/edgeshed/$SRV_IF" ] || fail "detach left $SRV_IF's pins"
in_srv ip -d link show dev "$SRV_IF" | grep -q 'prog/xdp' && fail "detach left an XDP program"
pass "the README's detach removed the program and the pins"
