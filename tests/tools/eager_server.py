#!/usr/bin/env python3
"""eager_server: an event-loop HTTP/1.1 server that accepts at once and
queues inside, the way nginx, Envoy, Go, Node or asyncio services do.

Every connection is accepted as soon as it arrives (a big listen backlog,
asyncio's accept loop), so the kernel's accept queue stays empty and the
queue forms in the process: each request waits for one of --workers slots
(an asyncio.Semaphore, standing for a backend pool), holds it for
--service-ms (a sleep: the point is waiting, not CPU), then gets
"200 ok\\n". Keep-alive is honoured (HTTP/1.1 default, "Connection: close"
ends the connection after the answer).

Two paths hold no slot, for the long-lived shapes beside short requests:
GET /poll?ms=N answers "200 ok\\n" after N ms (a long poll the server
holds); GET /stream?ms=N answers 200 with headers only (no Content-Length,
"Connection: close"), then writes one line "SEQ MS\\n" (MS since the stream
began) every N ms until the client goes away or the server's life ends (a
server push). N defaults to 1000 and 100.

--fail-fast: the in-process semaphore comparator. A request that finds all
slots busy gets "503" at once instead of waiting.

Capacity step: SIGUSR1 takes half the slots away (held by the server itself,
so the requests get the other half), SIGUSR2 gives them back.

The server exits after --duration-s (bounded life in the lab) or on
SIGTERM/SIGINT, and prints one line of counts to stderr, among them the
requests it read and could not answer ("read and lost": the connection was
reset or closed while the request was in service).
"""
import asyncio
import signal
import sys
import time
import urllib.parse

import lab_server_args

OK = b"ok\n"
STREAM_HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")


def target_ms(target, default_ms):
    """N of a target "...?ms=N" (N > 0), else default_ms."""
    try:
        ms = float(urllib.parse.parse_qs(urllib.parse.urlsplit(target).query)["ms"][0])
    except (KeyError, ValueError):
        return default_ms
    return ms if ms > 0 else default_ms


def response(status, body, close):
    reason = {200: b"OK", 400: b"Bad Request", 503: b"Service Unavailable"}[status]
    head = [b"HTTP/1.1 %d %s" % (status, reason), b"Content-Type: text/plain",
            b"Content-Length: %d" % len(body)]
    if close:
        head.append(b"Connection: close")
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class Server:
    def __init__(self, args):
        self.args = args
        self.slots = asyncio.Semaphore(args.workers)
        self.held = []  # permits taken away by a capacity step
        self.served = 0
        self.rejected = 0
        self.connections = 0
        self.polls = 0  # long polls answered
        self.streams = 0  # streams begun
        self.stream_lines = 0
        self.lost = 0  # requests read, their answer never written
        self.step_lock = asyncio.Lock()

    async def handle(self, reader, writer):
        self.connections += 1
        try:
            while True:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"),
                                                  timeout=self.args.idle_timeout_s)
                except (asyncio.IncompleteReadError, asyncio.TimeoutError,
                        asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.split(b"\r\n")
                parts = lines[0].split(b" ")
                if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
                    writer.write(response(400, b"bad request\n", True))
                    await writer.drain()
                    return
                close = parts[2] == b"HTTP/1.0"
                for line in lines[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"connection":
                        v = value.strip().lower()
                        close = v == b"close" or (close and v != b"keep-alive")
                target = parts[1].decode("latin-1")
                path = target.partition("?")[0]
                if path == "/stream":
                    await self.stream(reader, writer, target_ms(target, 100))
                    return
                if path == "/poll":
                    await asyncio.sleep(target_ms(target, 1000) / 1000.0)
                    self.polls += 1
                    writer.write(response(200, OK, close))
                elif self.args.fail_fast and self.slots.locked():
                    self.rejected += 1
                    writer.write(response(503, b"busy\n", close))
                else:
                    async with self.slots:
                        await asyncio.sleep(lab_server_args.service_s(self.args))
                    self.served += 1
                    if writer.transport.is_closing():
                        self.lost += 1
                        return
                    writer.write(response(200, OK, close))
                try:
                    await writer.drain()
                except ConnectionError:
                    self.lost += 1
                    raise
                if close:
                    return
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def stream(self, reader, writer, every_ms):
        """The headers, then a line every every_ms until the client closes."""
        self.streams += 1
        writer.write(STREAM_HEAD)
        await writer.drain()
        start = time.monotonic()
        seq = 0
        while True:
            now = time.monotonic()
            due = start + (seq + 1) * every_ms / 1000.0  # line SEQ is due then
            if due > now:
                # Waits for the next line's time, or for the client's end.
                try:
                    if not await asyncio.wait_for(reader.read(512), timeout=due - now):
                        return
                    continue
                except asyncio.TimeoutError:
                    pass
            writer.write(b"%d %.3f\n" % (seq, (time.monotonic() - start) * 1000.0))
            await writer.drain()
            seq += 1
            self.stream_lines += 1

    async def halve(self):
        async with self.step_lock:
            if self.held:
                return
            for _ in range(self.args.workers // 2):
                await self.slots.acquire()
                self.held.append(1)
            print(f"eager_server: capacity step: {self.args.workers - len(self.held)} slots",
                  file=sys.stderr, flush=True)

    async def restore(self):
        async with self.step_lock:
            while self.held:
                self.held.pop()
                self.slots.release()
            print(f"eager_server: capacity step: {self.args.workers} slots", file=sys.stderr,
                  flush=True)


async def main(args):
    server = Server(args)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, lambda: loop.create_task(server.halve()))
    loop.add_signal_handler(signal.SIGUSR2, lambda: loop.create_task(server.restore()))
    srv = await asyncio.start_server(server.handle, host=args.address, port=args.port,
                                     backlog=args.backlog, reuse_address=True)
    print(f"eager_server: listening on {args.address}:{args.port}, {args.workers} slots x "
          f"{args.service_ms} ms{', fail-fast' if args.fail_fast else ''}", file=sys.stderr,
          flush=True)
    t0 = time.monotonic()
    try:
        await asyncio.wait_for(stop.wait(), timeout=args.duration_s)
    except asyncio.TimeoutError:
        pass
    srv.close()
    print(f"eager_server: {time.monotonic() - t0:.1f} s, {server.connections} connections, "
          f"{server.served} served, {server.rejected} answered 503, {server.polls} long polls "
          f"answered, {server.streams} streams ({server.stream_lines} lines), "
          f"{server.lost} read and lost", file=sys.stderr,
          flush=True)


if __name__ == "__main__":
    asyncio.run(main(lab_server_args.parse(__doc__.split("\n")[0])))
