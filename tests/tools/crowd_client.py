#!/usr/bin/env python3
"""crowd_client: long polls and server-push streams from one client, beside
whatever else the lab sends to the same port (eager_server.py's /poll and
/stream).

Opens --streams connections with "GET /stream?ms=STREAM_MS" and --polls
connections with "GET /poll?ms=POLL_MS" (a new connection each,
"Connection: close"), interleaved and spread evenly over --spread-s. Once
every attempt has ended (request sent, or failed), one line to stderr:
"crowd_client: opened P of N polls, S of M streams in T ms". Each poll waits
for its answer (up to POLL_MS + 5 s); each stream is read until --duration-s
after the start, then closed.

Prints one JSON object to stdout:
  polls:   count, ok (answered 200), failed {refused, reset, timeout, other}
           (other: a status that is not 200, a close before the answer, any
           other error), latency_ms {min, max} of the answered;
  streams: count, opened (200 and headers received), not_opened {refused,
           reset, timeout, other}, alive_at_end (a line within the last
           second), stalled (open, no line in the last second), ended_early
           {closed, reset} (before the end), lines, max_gap_ms (the longest
           wait between two lines of one stream, the first line from the
           headers), first_line_ms;
  elapsed_s.
Bounded by itself: it ends by --duration-s + POLL_MS + 10 s whatever the
server does (what is still pending then counts as a time-out). Exit status 0
when it ran (whatever the figures), 2 on bad arguments.
"""
import argparse
import asyncio
import errno
import json
import sys
import time

REASONS = ("refused", "reset", "timeout", "other")


def reason_of(exc):
    """The failure class of an exception from a connect, a read or a write."""
    if isinstance(exc, ConnectionRefusedError):
        return "refused"
    if isinstance(exc, (ConnectionResetError, BrokenPipeError)):
        return "reset"
    if isinstance(exc, asyncio.TimeoutError):
        return "timeout"
    if isinstance(exc, OSError) and exc.errno == errno.ETIMEDOUT:
        return "timeout"
    return "other"


class Crowd:
    def __init__(self, args):
        self.args = args
        self.loop = asyncio.get_running_loop()
        self.t0 = self.loop.time()
        self.stream_end = self.t0 + args.duration_s
        self.hard_end = self.t0 + args.duration_s + args.poll_ms / 1000.0 + 10.0
        self.polls_ok = 0
        self.poll_failed = dict.fromkeys(REASONS, 0)
        self.poll_ms = []
        self.streams_opened = 0
        self.not_opened = dict.fromkeys(REASONS, 0)
        self.ended_early = {"closed": 0, "reset": 0}
        self.alive = 0
        self.stalled = 0
        self.lines = 0
        self.max_gap = 0.0
        self.first_line = 0.0
        self.attempts_left = args.polls + args.streams
        self.polls_sent = 0

    def left(self, at_most):
        """Seconds for one wait: at_most, and never past the hard end."""
        return max(0.0, min(at_most, self.hard_end - self.loop.time()))

    def attempt_ended(self):
        self.attempts_left -= 1
        if self.attempts_left == 0:
            print(f"crowd_client: opened {self.polls_sent} of {self.args.polls} polls, "
                  f"{self.streams_opened} of {self.args.streams} streams in "
                  f"{(self.loop.time() - self.t0) * 1000:.0f} ms", file=sys.stderr, flush=True)

    async def request(self, path):
        """A connection with the request sent: (reader, writer)."""
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(self.args.target, self.args.port),
            timeout=self.left(self.args.connect_timeout_s))
        writer.write(f"GET {path} HTTP/1.1\r\nHost: lab\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        return reader, writer

    async def poll(self, delay):
        await asyncio.sleep(delay)
        writer = None
        try:
            try:
                reader, writer = await self.request(f"/poll?ms={self.args.poll_ms:g}")
                self.polls_sent += 1
            finally:
                self.attempt_ended()
            sent = self.loop.time()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"),
                                          timeout=self.left(self.args.poll_ms / 1000.0 + 5.0))
            if head.split(b" ", 2)[1:2] != [b"200"]:
                self.poll_failed["other"] += 1
                return
            self.polls_ok += 1
            self.poll_ms.append((self.loop.time() - sent) * 1000.0)
        except asyncio.IncompleteReadError:
            self.poll_failed["other"] += 1  # closed before the answer
        except (OSError, asyncio.TimeoutError, asyncio.LimitOverrunError) as e:
            self.poll_failed[reason_of(e)] += 1
        finally:
            if writer:
                writer.close()

    async def open_stream(self):
        """(reader, writer) of a stream whose 200 and headers came, or None
        (counted in not_opened)."""
        writer = None
        try:
            reader, writer = await self.request(f"/stream?ms={self.args.stream_ms:g}")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"),
                                          timeout=self.left(self.args.connect_timeout_s))
            if head.split(b" ", 2)[1:2] == [b"200"]:
                self.streams_opened += 1
                return reader, writer
            self.not_opened["other"] += 1
        except asyncio.IncompleteReadError:
            self.not_opened["other"] += 1  # closed before the headers
        except (OSError, asyncio.TimeoutError, asyncio.LimitOverrunError) as e:
            self.not_opened[reason_of(e)] += 1
        finally:
            self.attempt_ended()
        if writer:
            writer.close()
        return None

    async def stream(self, delay):
        await asyncio.sleep(delay)
        opened = await self.open_stream()
        if not opened:
            return
        reader, writer = opened
        try:
            last = start = self.loop.time()
            while True:
                wait = min(self.stream_end, self.hard_end) - self.loop.time()
                if wait <= 0:
                    break
                try:
                    line = await asyncio.wait_for(reader.readline(), timeout=wait)
                except asyncio.TimeoutError:
                    break  # the end of the reading
                except OSError as e:
                    self.ended_early["reset" if reason_of(e) == "reset" else "closed"] += 1
                    return
                if not line.endswith(b"\n"):
                    self.ended_early["closed"] += 1  # EOF
                    return
                now = self.loop.time()
                if last == start:
                    self.first_line = max(self.first_line, now - start)
                self.lines += 1
                self.max_gap = max(self.max_gap, now - last)
                last = now
            if self.loop.time() - last <= 1.0:
                self.alive += 1
            else:
                self.stalled += 1
        finally:
            writer.close()

    async def run(self):
        n = self.args.polls + self.args.streams
        step = self.args.spread_s / n if n else 0.0
        tasks = []
        streams = 0
        for i in range(n):
            # Interleaved: a stream wherever the streams' share of the first i + 1 is due.
            if (i + 1) * self.args.streams // n > streams:
                tasks.append(self.loop.create_task(self.stream(i * step)))
                streams += 1
            else:
                tasks.append(self.loop.create_task(self.poll(i * step)))
        _, pending = await asyncio.wait(tasks, timeout=self.left(1e9) + 1.0)
        for t in pending:  # past the hard end: not expected, the waits are bounded
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def report(self):
        pending_polls = (self.args.polls - self.polls_ok - sum(self.poll_failed.values()))
        self.poll_failed["timeout"] += pending_polls
        return {
            "polls": {
                "count": self.args.polls,
                "ok": self.polls_ok,
                "failed": self.poll_failed,
                "latency_ms": {"min": round(min(self.poll_ms), 1) if self.poll_ms else None,
                               "max": round(max(self.poll_ms), 1) if self.poll_ms else None},
            },
            "streams": {
                "count": self.args.streams,
                "opened": self.streams_opened,
                "not_opened": self.not_opened,
                "alive_at_end": self.alive,
                "stalled": self.stalled,
                "ended_early": self.ended_early,
                "lines": self.lines,
                "max_gap_ms": round(self.max_gap * 1000.0, 1),
                "first_line_ms": round(self.first_line * 1000.0, 1),
            },
            "elapsed_s": round(self.loop.time() - self.t0, 2),
        }


async def main(args):
    crowd = Crowd(args)
    await crowd.run()
    print(json.dumps(crowd.report()), flush=True)


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--target", required=True)
    p.add_argument("--port", type=int, default=80)
    p.add_argument("--polls", type=int, default=0)
    p.add_argument("--poll-ms", type=float, default=30000)
    p.add_argument("--streams", type=int, default=0)
    p.add_argument("--stream-ms", type=float, default=100)
    p.add_argument("--duration-s", type=float, default=10, help="how long the streams are read")
    p.add_argument("--spread-s", type=float, default=1, help="the attempts spread over this long")
    p.add_argument("--connect-timeout-s", type=float, default=5,
                   help="for a connect, and for a stream's headers")
    a = p.parse_args()
    if min(a.polls, a.streams) < 0 or a.poll_ms <= 0 or a.stream_ms <= 0 or a.duration_s <= 0 \
            or a.spread_s < 0 or a.connect_timeout_s <= 0:
        p.error("counts >= 0; --poll-ms, --stream-ms, --duration-s, --connect-timeout-s > 0")
    return a


if __name__ == "__main__":
    asyncio.run(main(parse()))
