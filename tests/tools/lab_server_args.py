"""The command line the lab's Python servers share (eager_server.py,
threaded_server.py): W slots x S ms on an address and port, for a bounded
time, optionally answering 503 at once when every slot is busy; an idle
connection is closed after --idle-timeout-s. A heavy tail: --long-share of
the requests take --long-ms instead of S."""
import argparse
import random


def parse(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--address", default="0.0.0.0")
    p.add_argument("--port", type=int, default=80)
    p.add_argument("--workers", type=int, default=10, help="slots (W)")
    p.add_argument("--service-ms", type=float, default=20, help="service time per request (S)")
    p.add_argument("--long-share", type=float, default=0.0,
                   help="share of the requests that take --long-ms instead (a heavy tail)")
    p.add_argument("--long-ms", type=float, default=0.0, help="service time of those")
    p.add_argument("--backlog", type=int, default=4096)
    p.add_argument("--fail-fast", action="store_true", help="503 at once when every slot is busy")
    p.add_argument("--duration-s", type=float, default=120, help="exit after this long")
    p.add_argument("--idle-timeout-s", type=float, default=10,
                   help="close a connection that sends no request for this long (before its "
                        "first request, or between keep-alive requests)")
    a = p.parse_args()
    if a.workers < 1 or a.service_ms < 0 or a.duration_s <= 0 or a.idle_timeout_s <= 0:
        p.error("--workers >= 1, --service-ms >= 0, --duration-s > 0, --idle-timeout-s > 0")
    if not 0.0 <= a.long_share <= 1.0 or a.long_ms < 0 or (a.long_share > 0 and a.long_ms == 0):
        p.error("--long-share 0..1, --long-ms >= 0, and --long-ms with --long-share")
    return a


def service_s(args):
    """One request's service time, in seconds."""
    if args.long_share > 0 and random.random() < args.long_share:
        return args.long_ms / 1000.0
    return args.service_ms / 1000.0
