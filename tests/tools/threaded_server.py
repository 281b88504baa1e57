#!/usr/bin/env python3
"""threaded_server: a thread-per-connection HTTP/1.1 server that accepts at
once and queues inside (Python's ThreadingHTTPServer, the shape of many
Java, Ruby and Python services).

The listening thread accepts every connection as it arrives (listen backlog
--backlog) and gives it a thread of its own; each request then waits for one
of --workers slots (a threading.BoundedSemaphore, standing for a backend
pool), holds it for --service-ms (a sleep) and gets "200 ok\\n". Keep-alive
is honoured (HTTP/1.1; "Connection: close" ends the connection).

--fail-fast: a request that finds all slots busy gets "503" at once.
Capacity step: SIGUSR1 takes half the slots away, SIGUSR2 gives them back.
Exits after --duration-s or on SIGTERM/SIGINT, with one line of counts on
stderr, among them the requests it read and could not answer ("read and
lost": the connection was reset while the request was in service).
"""
import http.server
import signal
import socketserver
import sys
import threading
import time

import lab_server_args

args = None
slots = None
held = []
step_lock = threading.Lock()
counts = {"served": 0, "rejected": 0, "lost": 0}
counts_lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10  # an idle connection goes after this; main() sets --idle-timeout-s
    # Head and body in one segment at the handler's flush, and no Nagle: with
    # separate small writes, the body waited for the client's delayed ACK
    # (p50 130 ms at 0.7x with keep-alive).
    wbufsize = -1
    disable_nagle_algorithm = True

    def do_GET(self):
        if args.fail_fast:
            if not slots.acquire(blocking=False):
                with counts_lock:
                    counts["rejected"] += 1
                self.answer(503, b"busy\n")
                return
        else:
            slots.acquire()
        try:
            time.sleep(lab_server_args.service_s(args))
        finally:
            slots.release()
        with counts_lock:
            counts["served"] += 1
        self.answer(200, b"ok\n")

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.write(body)
            self.wfile.flush()
        except ConnectionError:
            with counts_lock:
                counts["lost"] += 1
            self.close_connection = True

    def log_message(self, *a):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self, addr, backlog):
        self.request_queue_size = backlog
        super().__init__(addr, Handler)


def halve():
    with step_lock:
        if held:
            return
        for _ in range(args.workers // 2):
            slots.acquire()
            held.append(1)
    print(f"threaded_server: capacity step: {args.workers - len(held)} slots", file=sys.stderr,
          flush=True)


def restore():
    with step_lock:
        while held:
            held.pop()
            slots.release()
    print(f"threaded_server: capacity step: {args.workers} slots", file=sys.stderr, flush=True)


def main():
    global args, slots
    args = lab_server_args.parse(__doc__.split("\n")[0])
    slots = threading.BoundedSemaphore(args.workers)
    Handler.timeout = args.idle_timeout_s
    # Thousands of waiting threads at 5x: small stacks.
    threading.stack_size(256 * 1024)
    server = Server((args.address, args.port), args.backlog)
    stop = threading.Event()
    # Signal handlers run in the main thread, which waits on `stop`; the
    # server loop runs in a thread of its own.
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGUSR1, lambda *_: threading.Thread(target=halve, daemon=True).start())
    signal.signal(signal.SIGUSR2, lambda *_: threading.Thread(target=restore, daemon=True).start())
    loop = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    loop.start()
    print(f"threaded_server: listening on {args.address}:{args.port}, {args.workers} slots x "
          f"{args.service_ms} ms{', fail-fast' if args.fail_fast else ''}", file=sys.stderr,
          flush=True)
    t0 = time.monotonic()
    # Short waits: the kernel may deliver SIGTERM to another thread, and
    # Python runs its handler only when the main thread wakes; one long wait
    # kept a stopped server alive for its whole --duration-s.
    while not stop.is_set() and time.monotonic() - t0 < args.duration_s:
        stop.wait(0.2)
    server.shutdown()
    server.server_close()
    print(f"threaded_server: {time.monotonic() - t0:.1f} s, {counts['served']} served, "
          f"{counts['rejected']} answered 503, {counts['lost']} read and lost", file=sys.stderr,
          flush=True)


if __name__ == "__main__":
    main()
