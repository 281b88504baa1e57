#!/usr/bin/env bash
# edgeshed run with the example config: leaves nothing behind when its
# start fails, attaches, ticks, reacts to an injected signal (sheds at
# critical, steps down one level at a time), reloads on SIGHUP (refusing a
# bad file), leaves the data plane admitting everything on SIGTERM, fails
# open after SIGKILL, adopts on restart, and detaches on exit when told to.
source "$(dirname "$0")/lib.sh"
: "${EXAMPLES:?folder of the example configs}"

lab_up
serve 80
serve 443
serve 8080

work=$(mktemp -d)
LAB_DIRS+=("$work") # lab_cleanup keeps the exit status; a trap of our own would not
cfg=$work/edgeshed.toml
injected=$work/injected
log=$work/log
echo 0 >"$injected"

# The example, pointed at the lab: its interface, enforcing, and its run
# directory and injected-pressure file in our work folder.
sed -e "s|^name = \"eth0\"|name = \"$SRV_IF\"|" \
	-e 's|^hook = "xdp"|hook = "xdp-generic"|' \
	-e 's|^mode = "observe"|mode = "enforce"|' \
	-e "s|^run_dir = \"/run/edgeshed\"|run_dir = \"$work/run\"|" \
	-e "s|^path = \"/run/edgeshed/injected-pressure\"|path = \"$injected\"|" \
	"$EXAMPLES/edgeshed.toml" >"$cfg"
grep -q "$SRV_IF" "$cfg" && grep -q "$injected" "$cfg" && grep -q "^run_dir = \"$work/run\"" "$cfg" ||
	fail "example config did not take the lab's values"
# A probe runs on a thread of its own: signals must still reach the loop.
cat >>"$cfg" <<TOML

[[signal]]
name = "probe"
kind = "probe"
address = "$SRV_V4"
port = 80
interval = "200ms"
timeout = "100ms"
stale_after = "1s"
target = 1.0
TOML

DAEMON=
runs=0
# Each run logs to a file of its own, so that checks see only its lines.
start_daemon() {
	runs=$((runs + 1))
	log=$work/log.$runs
	lab_daemon "$1" "$log"
	wait_for "daemon running" grep -q "running:" "$log"
}
status() { "$EDGESHED" --run-dir "$work/run" status --iface "$SRV_IF" --json; }
level_is() { [ "$(status | jq .level)" = "$1" ]; }

# A start that fails after attaching leaves no filter, qdisc or pin of its
# own: here the metrics port is taken. A second interface that is missing
# is refused before anything is attached.
sed 's|^hook = "xdp-generic"|hook = "tc"|' "$cfg" >"$work/tc.toml"
missing=es-none$LAB_ID
{ cat "$work/tc.toml"; printf '\n[[interface]]\nname = "%s"\nhook = "tc"\n' "$missing"; } >"$work/two.toml"
nothing_left() {
	! in_srv tc filter show dev "$SRV_IF" ingress | grep -q edgeshed || fail "$1 left its filter"
	! in_srv tc qdisc show dev "$SRV_IF" | grep -q clsact || fail "$1 left its clsact qdisc"
	[ ! -e "/sys/fs/bpf/edgeshed/$SRV_IF" ] && [ ! -e "/sys/fs/bpf/edgeshed/$missing" ] ||
		fail "$1 left pins: $(ls -R /sys/fs/bpf/edgeshed)"
}
serve 9477 60
holder=${LAB_PIDS[-1]}
in_srv "$EDGESHED" run --config "$work/tc.toml" >"$work/log.taken" 2>&1 &&
	fail "the daemon started with its metrics port taken"
grep -q "attached to $SRV_IF" "$work/log.taken" || fail "no attach before the failure: $(cat "$work/log.taken")"
nothing_left "a start refused by a taken metrics port"
pass "metrics port taken: $(grep -m1 -i 'error\|cannot' "$work/log.taken" | cut -c1-120); nothing left"
kill "$holder"
wait "$holder" 2>/dev/null || true
in_srv "$EDGESHED" run --config "$work/two.toml" >"$work/log.two" 2>&1 &&
	fail "the daemon started with a missing interface"
# Refused before anything is attached, naming the file and line of the name.
grep -q "attached to" "$work/log.two" && fail "attached before refusing a missing interface: $(cat "$work/log.two")"
grep -q "two.toml:[0-9]*:[0-9]*: interface\[1\].name = \"$missing\": no such interface" "$work/log.two" ||
	fail "the refusal does not name the file and line: $(cat "$work/log.two")"
nothing_left "a start refused by a missing second interface"
pass "second interface missing: $(grep -m1 "$missing" "$work/log.two" | cut -c1-120); nothing left"

start_daemon "$cfg"
grep -q "attached to $SRV_IF" "$log" || fail "no attach line in the log"
# "running:" comes before the first tick; its heartbeat follows.
ticking() { [ "$(status | jq .fail_open)" = false ]; }
wait_for "the first heartbeat" ticking
s=$(status)
[ "$(jq -r .mode <<<"$s")" = enforce ] || fail "mode: $s"
[ "$(jq .fail_open <<<"$s")" = false ] || fail "fail-open while the daemon ticks: $s"
pass "daemon attached and ticks (heartbeat age $(jq .heartbeat_age_ms <<<"$s") ms)"
# The [[signal]] tables, and a port's latency_objective, which is one too.
configured=$(($(grep -c '^\[\[signal\]\]' "$cfg") + $(grep -c '^latency_objective = ' "$cfg")))
all_shown() {
	s=$(status)
	[ "$(jq '[.daemon.signals[] | select(.age_ms != null and .value != null)] | length' <<<"$s")" = "$configured" ]
}
wait_for "status to show all $configured signals with value and age" all_shown
pass "status shows all $configured signals: $(jq -c '[.daemon.signals[] | {name, value, age_ms, stale}]' <<<"$s")"
expect_connect ok $SRV_V4 80

echo 2.5 >"$injected"  # pressure 2.5: critical (enter 2.0) in one tick
wait_for "level critical" level_is 3
grep -q "level normal -> critical" "$log" || fail "level change not logged"
pass "$(grep -m1 'level normal -> critical' "$log")"
expect_connect refused $SRV_V4 80    # normal is shed at critical
expect_connect refused $SRV_V4 443

echo 0.1 >"$injected"
start=$(date +%s)
wait_for "level normal again" level_is 0
took=$(($(date +%s) - start))
grep -q "level critical -> high" "$log" && grep -q "level high -> elevated" "$log" &&
	grep -q "level elevated -> normal" "$log" || fail "did not step down one level at a time"
pass "stepped down critical -> high -> elevated -> normal in ${took}s"
expect_connect ok $SRV_V4 80

# A bad file is refused whole; the daemon keeps running on the old one.
sed 's|^tick = "100ms"|tick = "1ms"|' "$cfg" >"$work/bad.toml"
cp "$cfg" "$work/good.toml"
cp "$work/bad.toml" "$cfg"
kill -HUP "$DAEMON"
wait_for "reload refused" grep -q "reload refused" "$log"
kill -0 "$DAEMON" || fail "daemon died on a bad reload"
pass "$(grep -m1 'reload refused' "$log" | cut -c1-160)"

# A good one applies: port 8080 becomes protected.
sed 's|^port = 443|port = 8080|' "$work/good.toml" >"$cfg"
kill -HUP "$DAEMON"
wait_for "reloaded" grep -q "reloaded" "$log"
[ "$(status | jq '[.ports[].port] | index(8080) != null')" = true ] || fail "8080 not protected after reload"
pass "reload applied: ports $(status | jq -c '[.ports[].port]')"

kill -TERM "$DAEMON"
wait "$DAEMON" || fail "daemon exit code $? on SIGTERM"
grep -q "left attached, admitting everything" "$log" || fail "no fail-open exit line"
[ -e "/sys/fs/bpf/edgeshed/$SRV_IF/es_config" ] || fail "on_exit = fail_open detached"
expect_connect ok $SRV_V4 80
pass "SIGTERM: left attached, admitting"

# Restart adopts; SIGKILL under shedding fails open within the timeout.
start_daemon "$cfg"
grep -q "adopted the data plane on $SRV_IF" "$log" || fail "restart did not adopt"
echo 2.5 >"$injected"
wait_for "level critical" level_is 3
expect_connect refused $SRV_V4 80
kill -KILL "$DAEMON"
wait "$DAEMON" 2>/dev/null || true
sleep 1.3  # heartbeat_timeout = 1s
[ "$(status | jq .fail_open)" = true ] || fail "status does not say fail-open: $(status)"
expect_connect ok $SRV_V4 80
pass "SIGKILL: fail-open within the heartbeat timeout"

# on_exit = detach removes everything.
sed 's|^on_exit = "fail_open"|on_exit = "detach"|' "$cfg" >"$work/detach.toml"
echo 0 >"$injected"
start_daemon "$work/detach.toml"
kill -TERM "$DAEMON"
wait "$DAEMON" || fail "daemon exit code $? on SIGTERM"
[ ! -e "/sys/fs/bpf/edgeshed/$SRV_IF" ] || fail "on_exit = detach left pins"
net=$(in_srv bpftool net show dev "$SRV_IF")
grep -q 'id [0-9]' <<<"$net" && fail "program left after detach: $net"
pass "on_exit = detach: nothing left"
echo "test_daemon: all checks passed"
