#!/usr/bin/python3
"""Checks deploy/grafana/edgeshed-dashboard.json as Grafana 9+ would import it.

- an importable dashboard: schemaVersion >= 36, the Prometheus data source as
  the ${DS_PROMETHEUS} input, used by every panel, target and variable;
- templated instance and iface, each expression filtered by $instance and,
  where its metric has an iface label, by $iface;
- unique panel ids, panels inside the 24-column grid, none overlapping;
- every view the dashboard exists for is there (a metric of each).
Writes every expression, its variables replaced, as a recording rule to the
path given, for promtool to parse.
"""
import json
import pathlib
import re
import sys

import yaml

from checks import check, errors, report

ROOT = pathlib.Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "edgeshed-dashboard.json"
DS = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
IFACE_METRICS = ("edgeshed_decisions_total", "edgeshed_rst_total", "edgeshed_packets_total")
# What the dashboard is for, and a metric that shows each.
VIEWS = {
    "level over time": "edgeshed_pressure_level",
    "pressure over time": "edgeshed_pressure{",
    "decisions by verdict/reason and class": "edgeshed_decisions_total",
    "shed ratio": 'verdict="shed"',
    "in-flight": "edgeshed_inflight",
    "limit": "edgeshed_limit",
    "signal value": "edgeshed_signal_value",
    "signal target": "edgeshed_signal_target",
    "stale signals": "edgeshed_signal_stale",
    "RSTs sent/capped": "edgeshed_rst_total",
    "tick duration quantiles": "histogram_quantile",
    "level changes": "edgeshed_level_changes_total",
}


def main():
    dash = json.loads(DASHBOARD.read_text())
    check(dash.get("schemaVersion", 0) >= 36, "schemaVersion is older than Grafana 9")
    inputs = {i["name"]: i for i in dash.get("__inputs", [])}
    ds_input = inputs.get("DS_PROMETHEUS", {})
    check(ds_input.get("type") == "datasource" and ds_input.get("pluginId") == "prometheus",
          "no DS_PROMETHEUS data source input")

    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
    for name in ("instance", "iface"):
        v = variables.get(name)
        if check(v, f"no templated {name}"):
            check(v.get("type") == "query" and v.get("datasource") == DS,
                  f"variable {name} is not a query on ${{DS_PROMETHEUS}}")

    panels = [p for p in dash["panels"]]
    panels += [c for p in dash["panels"] for c in p.get("panels", [])]
    ids = [p["id"] for p in panels]
    check(len(ids) == len(set(ids)), "panel ids are not unique")
    cells = {}
    exprs = []
    for p in panels:
        g = p["gridPos"]
        check(g["x"] >= 0 and g["w"] > 0 and g["x"] + g["w"] <= 24, f"panel '{p['title']}' leaves the grid")
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                other = cells.setdefault((x, y), p["title"])
                check(other == p["title"], f"panels '{other}' and '{p['title']}' overlap")
        if p["type"] == "row":
            continue
        check(p.get("datasource") == DS, f"panel '{p['title']}' does not use ${{DS_PROMETHEUS}}")
        check(p.get("targets"), f"panel '{p['title']}' has no query")
        for t in p.get("targets", []):
            e = t["expr"]
            exprs.append((p["title"], e))
            check(t.get("datasource") == DS, f"panel '{p['title']}' {t['refId']}: not ${{DS_PROMETHEUS}}")
            # Each selector of an edgeshed metric is filtered by instance
            # (and by iface when the metric has it).
            for m in re.finditer(r"(edgeshed_\w+)(\{[^}]*\})?", e):
                sel = m.group(2) or ""
                check('instance=~"$instance"' in sel,
                      f"panel '{p['title']}': {m.group(1)} is not filtered by $instance")
                if m.group(1) in IFACE_METRICS:
                    check('iface=~"$iface"' in sel,
                          f"panel '{p['title']}': {m.group(1)} is not filtered by $iface")

    text = "\n".join(e for _, e in exprs)
    for view, needle in VIEWS.items():
        check(needle in text, f"no panel shows {view} ({needle})")

    # Grafana's variables as a query would see them, for promtool.
    def concrete(e):
        return (e.replace("$__rate_interval", "5m").replace("$instance", ".*").replace("$iface", ".*"))

    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:expr_{i}", "expr": concrete(e)} for i, (_, e) in enumerate(exprs)]}]}
    pathlib.Path(sys.argv[1]).write_text(yaml.safe_dump(rules))
    print(f"{len(panels)} panels, {len(exprs)} queries")


if __name__ == "__main__":
    main()
    report(errors, "edgeshed-dashboard.json imports as a Grafana 9+ dashboard and shows every view")
