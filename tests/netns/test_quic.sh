#!/usr/bin/env bash
# QUIC with a real client and server (issue #17, part 1): ngtcp2's example
# HTTP/3 tools (Debian's ngtcp2-client and ngtcp2-server, GnuTLS builds),
# gtlsserver on UDP 4433 in the server namespace with a self-signed
# certificate made here, gtlsclient in the client namespace.
#  - without edgeshed, a new connection (handshake and a 1,000-byte GET)
#    succeeds over IPv4 and IPv6, and a 10 MiB download through the
#    server's 8 Mbit/s egress takes about 11 s: the baseline;
#  - a TCP-only protection of port 4433 (`--port`) shedding everything
#    refuses TCP connections to the port, and leaves QUIC alone;
#  - at each hook, with edgeshed protecting UDP 4433 as QUIC and shedding the
#    whole normal class, every new connection fails within the client's
#    handshake time-out, while a download begun before the shedding goes on
#    and completes, whole, in about the baseline's time: its packets after
#    the handshake have short headers, which are never decided;
#  - once the shedding stops, a new connection succeeds again;
#  - under the daemon, with the level driven by a file signal: new
#    connections fail at critical, and succeed once the level has dropped.
# gtlsclient exits 0 whatever happens, even on a handshake time-out, so a
# connection succeeded when the downloaded file equals the served one.
source "$(dirname "$0")/lib.sh"

# The example tools install in /usr/bin (client) and /usr/sbin (server).
PATH=$PATH:/usr/sbin:/sbin
for tool in gtlsclient gtlsserver openssl jq sha256sum; do
	command -v "$tool" >/dev/null ||
		fail "$tool not found: scripts/deps.sh installs it (ngtcp2-client, ngtcp2-server, openssl, jq)"
done

PORT=4433
HOOKS=(xdp-generic tc)
# The server's egress runs through a token bucket, so that the download
# lasts long enough to span the shedding (tbf: this kernel has no netem).
RATE=8mbit
BIG_BYTES=$((10 * 1024 * 1024))
SMALL_BYTES=1000
# The client's handshake time-out: its Initial goes at 0 and again at its
# first probe time-out, ~1 s (3 x the 333 ms initial RTT), then at 1.5 s it
# gives up (sending a CONNECTION_CLOSE in a third Initial) and exits.
HANDSHAKE_TIMEOUT_MS=1500
GET_LIMIT=5       # seconds: a GET that outlives its handshake time-out is killed
TRANSFER_LIMIT=40 # seconds, the download's bound
ATTEMPTS=4        # new connections during the shedding, IPv4 and IPv6 in turn

lab_up
WORK=$(mktemp -d /tmp/edgeshed-quic.XXXXXX)
LAB_DIRS+=("$WORK")
# A copy of the binary for the whole run: a rebuild of the tree during the
# test must not swap the program between its steps.
cp "$EDGESHED" "$WORK/edgeshed" || fail "cannot copy $EDGESHED"
EDGESHED=$WORK/edgeshed
mkdir "$WORK/htdocs" "$WORK/dl"
head -c $SMALL_BYTES /dev/urandom >"$WORK/htdocs/small"
head -c $BIG_BYTES /dev/urandom >"$WORK/htdocs/big"
BIG_SHA=$(sha256sum <"$WORK/htdocs/big" | cut -d' ' -f1)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
	-subj /CN=quic.example -addext "subjectAltName=IP:$SRV_V4,IP:$SRV_V6" \
	-keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>"$WORK/openssl.log" ||
	fail "openssl could not make a certificate: $(cat "$WORK/openssl.log")"

# On a failure, the server's last words and every client's. A hook runs in
# lab_cleanup, whose local rc is the test's exit status.
show_logs() {
	[ "${rc:-0}" -ne 0 ] || return 0
	local f
	for f in "$WORK"/server.log "$WORK"/dl/*.log; do
		[ -s "$f" ] && { echo "--- last lines of $(basename "$f")"; tail -n 8 "$f" | cut -c1-200; } >&2
	done
	return 0
}
LAB_HOOKS+=(show_logs)
in_srv tc qdisc add dev "$SRV_IF" root tbf rate $RATE burst 32kb latency 100ms
LAB_HOOKS+=('in_srv tc qdisc del dev "$SRV_IF" root 2>/dev/null')

# gtlsserver on both families ('*'), quiet: the log has only its errors.
nsenter --net="/run/netns/$SRV_NS" gtlsserver --quiet --htdocs="$WORK/htdocs" '*' $PORT \
	"$WORK/key.pem" "$WORK/cert.pem" >"$WORK/server.log" 2>&1 &
LAB_PIDS+=($!)
udp_listens_twice() { [ "$(ss -N "$SRV_NS" -Hlun "( sport = :$PORT )" | wc -l)" -ge 2 ]; }
log=$WORK/server.log wait_for --within 5 --alive $! "gtlsserver to listen on UDP $PORT" udp_listens_twice

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
seconds() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }
url_host() { [ "$1" = 6 ] && echo "[$SRV_V6]" || echo "$SRV_V4"; }

# client NAME FAMILY FILE LIMIT: a new connection from the client namespace
# that GETs FILE into dl/NAME/ (its output in dl/NAME.log), killed after
# LIMIT seconds. Its own exit status says nothing, and is not returned.
client() {
	local name=$1 family=$2 file=$3 limit=$4 host
	host=$(url_host "$family")
	mkdir "$WORK/dl/$name"
	timeout "$limit" nsenter --net="/run/netns/$CLI_NS" gtlsclient --quiet \
		--exit-on-all-streams-close --handshake-timeout=${HANDSHAKE_TIMEOUT_MS}ms \
		--download="$WORK/dl/$name" "${host//[\[\]]/}" $PORT "https://$host:$PORT/$file" \
		>"$WORK/dl/$name.log" 2>&1 || echo "exit $?" >>"$WORK/dl/$name.log"
}

# connect NAME FAMILY: a new connection with a small GET; sets OUTCOME to
# "ok in MS ms" (the file came whole), "refused in MS ms (WHY)" (nothing
# came: WHY is the client's error, e.g. ERR_HANDSHAKE_TIMEOUT, or "killed" by
# the bound) or "broken in MS ms" (part of the file).
N_CONNECT=0
connect() {
	local name=$1-$((N_CONNECT += 1)) t0 ms why
	local got=$WORK/dl/$name/small log=$WORK/dl/$name.log
	t0=$(now_ms)
	client "$name" "$2" small $GET_LIMIT
	ms=$(($(now_ms) - t0))
	if cmp -s "$got" "$WORK/htdocs/small"; then
		OUTCOME="ok in $ms ms"
	elif [ -e "$got" ]; then
		OUTCOME="broken in $ms ms"
	else
		why=$(grep -o 'ERR_[A-Z_]*' "$log" | head -n 1 || true)
		grep -q '^exit 124' "$log" && why=killed
		OUTCOME="refused in $ms ms (${why:-unknown})"
	fi
}

# expect_quic WANT FAMILY WHAT: a new connection over IPv$FAMILY ends in WANT.
expect_quic() {
	local want=$1 family=$2 what=$3
	connect "${what//[^a-z0-9]/_}" "$family"
	[ "${OUTCOME%% *}" = "$want" ] ||
		fail "$what: a new QUIC connection over IPv$family: want $want, got '$OUTCOME'"
	pass "$what: new QUIC connection over IPv$family -> $OUTCOME"
}

# The download of the big file, in the background: transfer_start NAME,
# transfer_bytes, transfer_wait BYTES (until so much has come), then
# transfer_end (waits, checks the file whole, sets TRANSFER_MS).
transfer_start() {
	TRANSFER=$1
	TRANSFER_T0=$(now_ms)
	client "$TRANSFER" 4 big $TRANSFER_LIMIT &
	TRANSFER_PID=$!
	LAB_PIDS+=("$TRANSFER_PID")
}
transfer_bytes() { stat -c %s "$WORK/dl/$TRANSFER/big" 2>/dev/null || echo 0; }
transfer_running() { kill -0 "$TRANSFER_PID" 2>/dev/null; }
transfer_has() { [ "$(transfer_bytes)" -ge "$1" ]; }
transfer_wait() {
	wait_for --within 10 --alive "$TRANSFER_PID" --try "$TRANSFER: $1 bytes" transfer_has "$1" ||
		fail "$TRANSFER: $(transfer_bytes) bytes, want $1 ($(transfer_running && echo "after 10 s" || echo "the download ended"))"
}
transfer_end() {
	wait "$TRANSFER_PID" || true # bounded by TRANSFER_LIMIT
	TRANSFER_MS=$(($(now_ms) - TRANSFER_T0))
	local got=$WORK/dl/$TRANSFER/big bytes sha
	bytes=$(transfer_bytes)
	[ "$bytes" -eq $BIG_BYTES ] ||
		fail "$TRANSFER: the download ended after $(seconds $TRANSFER_MS) s at $bytes of $BIG_BYTES bytes"
	sha=$(sha256sum <"$got" | cut -d' ' -f1)
	[ "$sha" = "$BIG_SHA" ] || fail "$TRANSFER: $bytes bytes, but sha256 $sha, want $BIG_SHA"
}

counter() {
	local v
	v=$("$EDGESHED" status --iface "$SRV_IF" --json | jq -e "$1") ||
		fail "edgeshed status --json: no $1"
	echo "$v"
}

# 1. Without edgeshed. A TCP listener on the same port, for step 2.
serve $PORT 280
expect_connect ok "$SRV_V4" $PORT
expect_quic ok 4 "without edgeshed"
expect_quic ok 6 "without edgeshed"
transfer_start baseline
transfer_end
BASELINE_MS=$TRANSFER_MS
pass "without edgeshed: $BIG_BYTES bytes downloaded in $(seconds $BASELINE_MS) s" \
	"through the server's $RATE egress, sha256 ok"
# The shedding below must fall inside a download: its start (at 512 KiB,
# ~0.6 s in), its refused handshakes, then 2 s to spare.
[ "$BASELINE_MS" -ge $((ATTEMPTS * HANDSHAKE_TIMEOUT_MS + 3000)) ] ||
	fail "the download takes $BASELINE_MS ms, too short to span $ATTEMPTS refused handshakes; lower RATE"

for hook in "${HOOKS[@]}"; do
	# 2. A TCP-only protection of the same port sheds TCP; UDP passes.
	in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook "$hook" --port $PORT --mode enforce \
		--action rst --heartbeat-timeout-ms 0 >/dev/null
	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 1 >/dev/null
	expect_connect refused "$SRV_V4" $PORT
	expect_quic ok 4 "$hook, TCP-only port $PORT shedding all"
	in_srv "$EDGESHED" detach --iface "$SRV_IF"

	# 3. QUIC protected; the download begins before the shedding.
	in_srv "$EDGESHED" attach --iface "$SRV_IF" --hook "$hook" --quic-port $PORT \
		--mode enforce --heartbeat-timeout-ms 0 >/dev/null ||
		fail "$hook: attach --quic-port $PORT failed"
	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 0 >/dev/null
	transfer_start "$hook-transfer"
	transfer_wait $((512 * 1024))
	admitted_before=$(counter .quic.classes.normal.counters.admitted)
	[ "$admitted_before" -ge 1 ] || fail "$hook: the download's connection was not admitted (admitted $admitted_before)"

	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 1 >/dev/null
	shed_t0=$(now_ms)
	bytes_at_shed=$(transfer_bytes)
	refused=0 outcomes=()
	for i in $(seq $ATTEMPTS); do
		family=$((i % 2 ? 4 : 6))
		connect "$hook-shed" $family
		outcomes+=("IPv$family $OUTCOME")
		case $OUTCOME in
		refused*) refused=$((refused + 1)) ;;
		*) fail "$hook, shedding all: a new QUIC connection over IPv$family: want refused, got '$OUTCOME'" ;;
		esac
	done
	# The claim holds if the download went on through every refusal.
	bytes_after=$(transfer_bytes)
	if ! transfer_running || [ "$bytes_after" -ge $BIG_BYTES ]; then
		fail "$hook: the download ended before the attempts did ($bytes_after bytes); lower RATE"
	fi
	[ "$bytes_after" -gt "$bytes_at_shed" ] ||
		fail "$hook: the download stalled while shedding ($bytes_at_shed -> $bytes_after bytes)"
	shed=$(counter .quic.classes.normal.counters.shed_fraction)
	[ "$shed" -gt 0 ] || fail "$hook: $refused connections refused, but shed_fraction $shed"
	printf -v each '%s; ' "${outcomes[@]}"
	pass "$hook, shedding all: $ATTEMPTS new connections attempted, $refused refused" \
		"[${each%; }]; shed_fraction $shed"

	transfer_end
	[ $TRANSFER_MS -le $((2 * BASELINE_MS)) ] ||
		fail "$hook: the download took $(seconds $TRANSFER_MS) s, baseline $(seconds $BASELINE_MS) s"
	pass "$hook: the download begun before the shedding went on: $BIG_BYTES bytes in" \
		"$(seconds $TRANSFER_MS) s (baseline $(seconds $BASELINE_MS) s), sha256 ok;" \
		"$bytes_at_shed bytes when the shedding began, $bytes_after after $ATTEMPTS refusals" \
		"($(seconds $(($(now_ms) - shed_t0))) s of shedding)"

	# 4. The shedding stops: a new connection is admitted again.
	admitted_shed=$(counter .quic.classes.normal.counters.admitted)
	"$EDGESHED" policy --iface "$SRV_IF" --class normal --shed-fraction 0 >/dev/null
	expect_quic ok 4 "$hook, shedding stopped"
	admitted_after=$(counter .quic.classes.normal.counters.admitted)
	[ "$admitted_after" -gt "$admitted_shed" ] ||
		fail "$hook: the new connection was not counted as admitted ($admitted_shed -> $admitted_after)"
	undersized=$(counter .counters.quic_undersized)
	# gtlsclient pads every datagram that holds an Initial to 1,200 bytes.
	[ "$undersized" -eq 0 ] || fail "$hook: a real client's Initials counted undersized ($undersized)"
	echo "$hook: counters: admitted $admitted_before before the shedding, $admitted_shed at its end," \
		"$admitted_after after; shed_fraction $shed; quic_undersized $undersized;" \
		"all of .quic.classes.normal.counters:" \
		"$("$EDGESHED" status --iface "$SRV_IF" --json | jq -c .quic.classes.normal.counters)"
	in_srv "$EDGESHED" detach --iface "$SRV_IF"
done

# 5. The daemon, from a config that protects the port as QUIC: a file signal
# drives the level to critical, where the default policies shed the normal
# class whole, and back down. New connections fail at critical and succeed
# once the level has dropped.
injected=$WORK/injected
echo 0 >"$injected"
cat >"$WORK/quic.toml" <<EOF
[daemon]
run_dir = "$WORK/run"
tick = "100ms"
on_exit = "detach"
heartbeat_timeout = "1s"

[dataplane]
mode = "enforce"

[[interface]]
name = "$SRV_IF"
hook = "xdp-generic"

[[port]]
port = $PORT
protocol = "quic"

[[signal]]
name = "injected"
kind = "file"
target = 1.0
path = "$injected"
EOF
nsenter --net="/run/netns/$SRV_NS" "$EDGESHED" run --config "$WORK/quic.toml" >"$WORK/daemon.log" 2>&1 &
daemon=$!
LAB_PIDS+=("$daemon")
log=$WORK/daemon.log # wait_for shows it on a time-out
wait_for "the daemon's running: line" grep -q "running:" "$log"
level_is() { [ "$(jq -r .level "$WORK/run/state.json" 2>/dev/null)" = "$1" ]; }
wait_for "level normal" level_is normal
expect_quic ok 4 "daemon, level normal"
echo 5 >"$injected" # pressure 5.0: critical in one tick
wait_for "level critical" level_is critical
expect_quic refused 6 "daemon, level critical"
echo 0 >"$injected"
level_t0=$(now_ms)
# Down one level at a time, each after its dwell: about 9 s.
wait_for --within 30 --try "level normal" level_is normal || fail "the level is still $(jq -r .level "$WORK/run/state.json") 30 s after the pressure went"
expect_quic ok 4 "daemon, level back to normal after $(seconds $(($(now_ms) - level_t0))) s"
pass "daemon: $(counter .quic.classes.normal.counters | jq -c '{admitted, shed_fraction}')"
kill -TERM "$daemon"
wait "$daemon" || true
echo "test_quic: all checks passed"
