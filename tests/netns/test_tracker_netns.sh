#!/usr/bin/env bash
# The tracker (tp_btf/inet_sock_set_state) fires for every network namespace
# of the host; in-flight must count only the attached interface's. Found by
# the soak: other labs serving the same port raised the in-flight count and
# the level went critical with no load at all.
#
# Attaches to the server namespace's interface (port 80, observe mode), then
# holds 5 connections to port 80 inside a third namespace that edgeshed
# knows nothing of. The attached interface's in-flight must stay 0. Then
# the seed of connections the tracker never saw open (below).
source "$(dirname "$0")/lib.sh"
: "${REFSERVER:?path of the refserver binary}"

OTHER_NS="es-oth-$LAB_ID"
lab_up
LAB_HOOKS+=('ip netns pids "$OTHER_NS" 2>/dev/null | xargs -r kill 2>/dev/null; ip netns del "$OTHER_NS" 2>/dev/null')
ip netns add "$OTHER_NS"
ip netns exec "$OTHER_NS" ip link set lo up

in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook xdp-generic --port 80 --mode observe \
	--heartbeat-timeout-ms 0 >/dev/null
inflight() { "$EDGESHED" status --iface "$SRV_IF" --json | jq '[.classes[].connections] | add'; }
[ "$(inflight)" = 0 ] || fail "in-flight $(inflight) right after attach"

# A service on port 80 in the other namespace that holds each request 5 s.
ip netns exec "$OTHER_NS" "$REFSERVER" --port 80 --workers 5 --service-ms 5000 --metrics-port 0 \
	--duration-s 30 >/dev/null 2>&1 &
LAB_PIDS+=($!)
wait_for --within 5 "a service on port 80 in $OTHER_NS" \
	ip netns exec "$OTHER_NS" "$TCP_TOOL" connect 127.0.0.1 80 200
# Five requests, each held by a worker: five established connections.
ip netns exec "$OTHER_NS" bash -c '
	for i in 1 2 3 4 5; do
		exec {fd}<>/dev/tcp/127.0.0.1/80
		printf "GET / HTTP/1.1\r\nHost: lab\r\n\r\n" >&$fd
	done
	sleep 4' &
LAB_PIDS+=($!)
established_other() { ss -N "$OTHER_NS" -Htn state established '( sport = :80 )' | wc -l; }
five_established() { [ "$(established_other)" -ge 5 ]; }
wait_for --within 5 "5 connections established in $OTHER_NS" five_established
other=$(established_other)
got=$(inflight)
echo "established on port 80 in $OTHER_NS: $other; in-flight of $SRV_IF ($SRV_NS): $got"
# Without them an in-flight of 0 would prove nothing.
[ "$other" -ge 5 ] || fail "only $other of the 5 connections in $OTHER_NS are established"
[ "$got" = 0 ] || fail "the tracker counted $got connections of another network namespace"
pass "in-flight counts only the attached namespace"

# Connections the tracker never saw open are counted all the same: those of
# a port protected after they opened, and those established before attach.
# A walk over the sockets (iter/tcp) seeds the count; running it again (an
# adoption) counts nothing twice, and each seeded connection is uncounted
# when it closes.
in_srv "$REFSERVER" --port 8080 --workers 4 --service-ms 8000 --metrics-port 0 \
	--duration-s 30 >/dev/null 2>&1 &
LAB_PIDS+=($!)
wait_for --within 5 "the refserver to listen on 8080" tcp_listens "$SRV_NS" 8080
in_cli bash -c '
	for i in 1 2 3 4; do
		exec {fd}<>/dev/tcp/'"$SRV_V4"'/8080
		printf "GET / HTTP/1.1\r\nHost: lab\r\n\r\n" >&$fd
	done
	sleep 9' &
LAB_PIDS+=($!)
held() { [ "$(ss -N "$SRV_NS" -Htn state established '( sport = :8080 )' | wc -l)" -ge 4 ]; }
wait_for "4 connections to port 8080" held
[ "$(inflight)" = 0 ] || fail "in-flight $(inflight) before port 8080 is protected"
attach_8080() {
	in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook xdp-generic --port 8080 --mode observe \
		--heartbeat-timeout-ms 0 >/dev/null
}
attach_8080
[ "$(inflight)" = 4 ] || fail "in-flight $(inflight), not 4, once port 8080 is protected"
pass "a port protected after its connections opened: in-flight 4"
attach_8080
[ "$(inflight)" = 4 ] || fail "in-flight $(inflight), not 4, after a second attach (adoption)"
pass "adoption counts nothing twice: in-flight 4"
in_srv "$EDGESHED" detach --iface "$SRV_IF"
attach_8080
[ "$(inflight)" = 4 ] || fail "in-flight $(inflight), not 4, for connections established before attach"
pass "connections established before attach: in-flight 4"
idle() { [ "$(inflight)" = 0 ]; }
wait_for "in-flight 0 once the seeded connections close" idle
pass "seeded connections uncounted as they close"
