#!/usr/bin/env bash
# A client that sends its request and half-closes (shutdown(SHUT_WR)) is
# still being served: the in-flight count keeps its connection until the
# server closes it, not only until the client's FIN (issue #16, point 5).
# The server reads each request to its end (the FIN), works 3 s, answers and
# closes, as an HTTP/1.0 or a one-shot RPC server does.
source "$(dirname "$0")/lib.sh"

PORT=8080
CLIENTS=5
lab_up

# Bounded: CLIENTS connections, or 30 s.
in_srv python3 - "$PORT" "$CLIENTS" <<'EOF' &
import socket, sys, threading, time
port, clients = int(sys.argv[1]), int(sys.argv[2])
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", port))
srv.listen(64)
srv.settimeout(30)

def serve(conn):
    with conn:
        conn.settimeout(10)
        while conn.recv(4096):
            pass
        time.sleep(3)
        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")

threads = []
for _ in range(clients):
    conn, _ = srv.accept()
    t = threading.Thread(target=serve, args=(conn,))
    t.start()
    threads.append(t)
for t in threads:
    t.join()
EOF
LAB_PIDS+=($!)
listening() { in_srv ss -Hltn "sport = :$PORT" | grep -q .; }
wait_for "the server to listen on $PORT" listening

in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook xdp-generic --port $PORT >/dev/null
inflight() { "$EDGESHED" status --iface "$SRV_IF" --json | jq '.classes.normal.connections'; }
none_in_flight() { [ "$(inflight)" = 0 ]; }
work=$(mktemp -d)
LAB_DIRS+=("$work")
[ "$(inflight)" = 0 ] || fail "in flight before any client: $(inflight)"

in_cli python3 - "$SRV_V4" "$PORT" "$CLIENTS" >"$work/client" 2>&1 <<'EOF' &
import socket, sys
addr, port, clients = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
conns = []
for _ in range(clients):
    c = socket.create_connection((addr, port), timeout=10)
    c.sendall(b"GET / HTTP/1.0\r\n\r\n")
    c.shutdown(socket.SHUT_WR)
    conns.append(c)
print(f"half-closed {len(conns)}", flush=True)
answered = sum(1 for c in conns if c.recv(4096).startswith(b"HTTP/1.0 200"))
print(f"answered {answered}")
EOF
client=$!
LAB_PIDS+=("$client")

half_closed() { grep -qx "half-closed $CLIENTS" "$work/client"; }
wait_for "the clients to send and half-close" half_closed
sleep 0.2 # their FINs reach the server, which is at work for 3 s
in_srv ss -Htn state close-wait "sport = :$PORT" | wc -l | grep -qx "$CLIENTS" ||
	fail "the server's sockets are not in CLOSE_WAIT: $(in_srv ss -Htn "sport = :$PORT")"
[ "$(inflight)" = "$CLIENTS" ] || fail "half-closed clients in flight: $(inflight), want $CLIENTS"
pass "$CLIENTS half-closed clients, their sockets in CLOSE_WAIT, count as in flight"

wait "$client" || fail "client: $(cat "$work/client")"
grep -qx "answered $CLIENTS" "$work/client" || fail "client: $(cat "$work/client")"
wait_for "the count to return to 0" none_in_flight
pass "all $CLIENTS answered, and the count is back to 0 once the server closed"
in_srv "$EDGESHED" detach --iface "$SRV_IF"
echo "test_tracker_halfclose: all checks passed"
