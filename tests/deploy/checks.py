"""What the deploy checks (check_dashboard.py, check_kubernetes.py,
metric_contract.py) share: every failure is found before any is reported,
so that one run lists them all.
"""
import sys

errors = []


def check(cond, what):
    """Records what as a failure unless cond; returns cond."""
    if not cond:
        errors.append(what)
    return cond


def report(failures, ok):
    """Prints each failure and exits 1; with none, prints ok."""
    for e in failures:
        print(f"FAIL: {e}", file=sys.stderr)
    if failures:
        sys.exit(1)
    print(f"ok: {ok}")
