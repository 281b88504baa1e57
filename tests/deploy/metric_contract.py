#!/usr/bin/python3
"""Holds PromQL in deployment files to the metric contract, deploy/metrics.txt.

  metric_contract.py rules FILE       every rule's expr
  metric_contract.py dashboard FILE   every panel target's expr and every
                                      templating query

Every edgeshed_* name must be a contract metric (or a histogram's _bucket,
_sum, _count); every label matched on it must be one of its labels (or a
target label Prometheus adds); a label with a closed set of values may only
be matched to those values; and the labels of by()/without() must exist on
some metric of the expression. Prints what it checked; exits 1 on any
violation.
"""
import json
import pathlib
import re
import sys

import yaml

from checks import report

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "deploy" / "metrics.txt"
# Added by Prometheus to every series of a target.
TARGET_LABELS = {"instance", "job"}
# Not edgeshed's metrics, but what the rules may legitimately use.
FOREIGN = {"up": {"labels": {}, "type": "gauge"}}


def load_contract():
    metrics = {}
    for line in CONTRACT.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, kind, *labels = line.split()
        spec = {}
        for label in labels:
            lname, _, values = label.partition("=")
            spec[lname] = set(values.split("|")) if values else None
        metrics[name] = {"type": kind, "labels": spec}
    return metrics


def series_names(metrics):
    """Every series name the contract exposes, with the labels it carries."""
    out = {}
    for name, m in metrics.items():
        out[name] = m["labels"]
        if m["type"] == "histogram":
            out[name + "_bucket"] = {**m["labels"], "le": None}
            out[name + "_sum"] = m["labels"]
            out[name + "_count"] = m["labels"]
    return out


SELECTOR = re.compile(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?")
MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
GROUPING = re.compile(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)")
# A Grafana variable ($iface, ${iface}, [[iface]]) stands for whatever the
# variable holds: its values are checked where the variable is defined.
VARIABLE = re.compile(r"\$\{?\w+\}?|\[\[\w+\]\]")


def check_expr(expr, where, series, errors):
    used = {}
    text = re.sub(r'"(?:[^"\\]|\\.)*"', lambda m: m.group(0).replace("{", "(").replace("}", ")"), expr)
    for m in SELECTOR.finditer(text):
        name, selector = m.group(1), m.group(2)
        if not name.startswith("edgeshed_") and name not in FOREIGN:
            continue
        if name.startswith("edgeshed_") and name not in series:
            errors.append(f"{where}: {name} is not in the metric contract")
            continue
        labels = series.get(name, FOREIGN.get(name, {}).get("labels", {}))
        used[name] = labels
        # The matchers, from the original text (values may hold braces).
        if selector:
            sel = expr[m.start(2):m.end(2)]
            for lname, op, value in MATCHER.findall(sel):
                if lname == "__name__":
                    continue
                if lname not in labels and lname not in TARGET_LABELS:
                    errors.append(f"{where}: {name} has no label {lname}")
                    continue
                allowed = labels.get(lname)
                if allowed is None or VARIABLE.search(value):
                    continue
                if op in ("=", "!="):
                    values = [value]
                else:
                    # Only a plain alternation of literals can be checked.
                    if not re.fullmatch(r"[A-Za-z0-9_|]+", value):
                        continue
                    values = value.split("|")
                for v in values:
                    if v not in allowed:
                        errors.append(f"{where}: {name}{{{lname}}} is never \"{v}\" "
                                      f"(one of {sorted(allowed)})")
    known = set(TARGET_LABELS)
    for labels in used.values():
        known |= set(labels)
    for group in GROUPING.findall(text):
        for lname in (x.strip() for x in group.split(",")):
            if lname and lname not in known:
                errors.append(f"{where}: grouping by {lname}, a label of none of {sorted(used)}")
    return set(used)


def rules_exprs(path):
    doc = yaml.safe_load(path.read_text())
    for group in doc["groups"]:
        for rule in group["rules"]:
            yield rule.get("alert") or rule.get("record"), rule["expr"]


def dashboard_exprs(path):
    dash = json.loads(path.read_text())

    def panels(items):
        for p in items:
            yield p
            yield from panels(p.get("panels", []))

    for p in panels(dash.get("panels", [])):
        for i, t in enumerate(p.get("targets", [])):
            if "expr" in t:
                yield f"panel '{p.get('title')}' target {t.get('refId', i)}", t["expr"]
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query")
        if v.get("type") == "query" and q:
            # label_values(metric{...}, label): the metric and its label.
            m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\s*\)\s*", q)
            if m:
                yield f"variable {v['name']}", f"sum by ({m.group(2)}) ({m.group(1)})"
            else:
                yield f"variable {v['name']}", q


def main():
    kind, path = sys.argv[1], pathlib.Path(sys.argv[2])
    series = series_names(load_contract())
    exprs = list(rules_exprs(path) if kind == "rules" else dashboard_exprs(path))
    errors, names = [], set()
    for where, expr in exprs:
        names |= check_expr(expr, where, series, errors)
    if not exprs:
        errors.append(f"{path}: no expressions found")
    report(errors, f"{path.name}: {len(exprs)} expressions, {len(names)} metrics, all in the contract")


if __name__ == "__main__":
    main()
