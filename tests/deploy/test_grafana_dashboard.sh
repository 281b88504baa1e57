#!/usr/bin/env bash
# The Grafana dashboard: importable (data source input, variables, layout),
# every query valid PromQL for promtool, and every metric, label and label
# value it names in the metric contract.
source "$(dirname "$0")/lib.sh"

dashboard=$SOURCE_DIR/deploy/grafana/edgeshed-dashboard.json
"$PYTHON" "$SOURCE_DIR/tests/deploy/check_dashboard.py" "$WORK/queries.yml"
promtool check rules "$WORK/queries.yml" >"$WORK/check" 2>&1 ||
	{ cat "$WORK/check"; fail "a dashboard query is not valid PromQL"; }
pass "promtool parses all $(grep -o '[0-9]* rules found' "$WORK/check" | cut -d' ' -f1) dashboard queries"
"$PYTHON" "$SOURCE_DIR/tests/deploy/metric_contract.py" dashboard "$dashboard"
