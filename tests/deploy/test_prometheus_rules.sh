#!/usr/bin/env bash
# The alerting rules: valid for Prometheus (promtool check rules, with its
# linter fatal), firing exactly as their unit tests say (promtool test
# rules), and written against the metric contract only.
source "$(dirname "$0")/lib.sh"

rules=$SOURCE_DIR/deploy/prometheus/edgeshed-alerts.yml
tests=$SOURCE_DIR/deploy/prometheus/edgeshed-alerts.test.yml
command -v promtool >/dev/null || fail "promtool missing: run scripts/deps.sh (package prometheus)"

promtool check rules --lint=all --lint-fatal "$rules" >"$WORK/check" 2>&1 ||
	{ cat "$WORK/check"; fail "promtool check rules"; }
pass "promtool check rules: $(grep -o '[0-9]* rules found' "$WORK/check")"

# Every alert of the file has a test case, or a new one would go untested.
alerts=$(sed -n 's/^ *- alert: //p' "$rules" | sort -u)
tested=$(sed -n 's/^ *alertname: //p' "$tests" | sort -u)
[ "$alerts" = "$tested" ] || fail "alerts without a test: $(comm -23 <(echo "$alerts") <(echo "$tested") | xargs)"

# promtool resolves rule_files relative to the test file.
promtool test rules "$tests" >"$WORK/test" 2>&1 || { cat "$WORK/test"; fail "promtool test rules"; }
pass "promtool test rules: $(wc -l <<<"$alerts") alerts fire when and where their tests say"

"$PYTHON" "$SOURCE_DIR/tests/deploy/metric_contract.py" rules "$rules"
