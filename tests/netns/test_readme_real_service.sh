#!/usr/bin/env bash
# The README's "Protecting a real service", pasted as written (issue #52):
# its block, taken from the README itself, runs as one script in a network
# namespace of the test's own that stands for the host (so that host0 and
# its address never reach the machine's root namespace), with this build
# for `build/edgeshed`, and the names it picks made unique: the namespace
# "web" and its config file. Then what the block promises: the config
# checks, the daemon attaches web0 at xdp-generic, curl gets 200 in observe
# mode while the pinned level counts would-sheds, a refusal at once in
# enforce mode, and the block's own cleanup leaves nothing behind.
source "$(dirname "$0")/lib.sh"
README="$(cd "$(dirname "$0")/../.." && pwd)/README.md"

HOST_NS="es-host-$LAB_ID"
WEB_NS="es-web-$LAB_ID"
work=$(mktemp -d)
LAB_DIRS+=("$work")
# The host's namespace goes last: everything the block started in it first.
LAB_HOOKS+=("ip netns pids $WEB_NS 2>/dev/null | xargs -r kill 2>/dev/null"
	"ip netns pids $HOST_NS 2>/dev/null | xargs -r kill 2>/dev/null; sleep 0.5"
	"ip netns del $WEB_NS 2>/dev/null" "ip netns del $HOST_NS 2>/dev/null")
# The block's daemon uses the default run and state directories: the test
# removes those it made, and does not run beside a daemon that uses them.
for dir in /run/edgeshed /var/lib/edgeshed; do
	[ -e "$dir" ] || LAB_HOOKS+=("rm -rf $dir")
done
trap lab_cleanup EXIT
if [ -e /run/edgeshed/daemon.lock ] && ! flock -n /run/edgeshed/daemon.lock true; then
	fail "a daemon holds /run/edgeshed on this host: the README's block would meet it"
fi

awk '/^## Protecting a real service/ { on = 1 } on && /^```sh/ { block = 1; next }
	block && /^```/ { exit } block' "$README" >"$work/block.sh"
grep -q 'edgeshed run --config /tmp/web.toml' "$work/block.sh" ||
	fail "no daemon in the README's block: $(cat "$work/block.sh")"
# The names, and nothing else: build/edgeshed, the namespace, the config.
sed -e "s#build/edgeshed#\"\$EDGESHED\"#g" -e "s#/run/netns/web\\b#/run/netns/$WEB_NS#g" \
	-e "s#netns add web\$#netns add $WEB_NS#; s#netns web #netns $WEB_NS #g" \
	-e "s#ip -n web #ip -n $WEB_NS #g; s#netns exec web #netns exec $WEB_NS #g" \
	-e "s#netns del web\$#netns del $WEB_NS#; s#/tmp/web.toml#$work/web.toml#g" \
	"$work/block.sh" >"$work/script.sh"
if grep -nE '(^|[^-])\bweb\b( |$)|/tmp/web' "$work/script.sh" | grep -v '^\s*[0-9]*:\s*#'; then
	fail "a name of the README's block was not made unique (lines above)"
fi

ip netns add "$HOST_NS"
ip -n "$HOST_NS" link set lo up
# At most a minute: the block's own steps take a few seconds.
rc=0
EDGESHED="$EDGESHED" timeout --kill-after=5 60 ip netns exec "$HOST_NS" bash "$work/script.sh" \
	>"$work/out" 2>&1 || rc=$?
sed 's/^/  | /' "$work/out"
[ "$rc" = 0 ] || fail "the README's block exited $rc"

grep -q 'interface web0: hook xdp-generic' "$work/out" || fail "check printed no plan for web0"
grep -q '^200$' "$work/out" || fail "curl did not get 200 in observe mode"
would=$(grep -E '^[0-9]+$' "$work/out" | grep -v '^200$' | head -1)
[ -n "$would" ] && [ "$would" -ge 1 ] || fail "no would_shed_fraction counted under the pinned level: '$would'"
grep -q 'Failed to connect' "$work/out" || fail "curl was not refused in enforce mode"
if ip netns list | grep -q "^$WEB_NS\b"; then fail "the block's cleanup left namespace $WEB_NS"; fi
pass "the README's real-service block works as written: 200 observed, $would would-shed, refused at once"
