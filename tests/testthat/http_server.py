#!/usr/bin/env python3
"""A small HTTP/1.1 file server for the tests of zarr_httpstore.

Serves the files below a folder on 127.0.0.1 (standard library only):

* GET and HEAD, with keep-alive connections, one thread per connection;
* `Range: bytes=a-b`, `bytes=a-` and `bytes=-n` answered with 206 and a
  Content-Range header (416 with `bytes */size` when unsatisfiable);
* 404 for a missing file (or a path leaving the folder), 403 for any path
  below /__forbidden/;
* /__stats: JSON with the number of requests served, body bytes sent, GET,
  HEAD and ranged requests and the most requests in flight at once;
  /__reset sets them to zero. Neither is counted.

Options: --delay-ms N waits N ms before answering each request (to measure
concurrency), --html answers every path with a web page, --no-ranges
ignores Range headers (200 and the whole file).

On start it prints "PORT <port> PID <pid>" on one line of stdout. It exits
after --max-seconds (default 600), when the process --parent-pid ends, or,
with --watch-stdin, when its standard input is closed; so it never outlives
the test run.
"""

import argparse
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HTML_PAGE = b"<!DOCTYPE html>\n<html><head><title>Not Zarr</title></head><body>Hello</body></html>\n"


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.requests = 0
        self.bytes = 0
        self.gets = 0
        self.heads = 0
        self.ranges = 0
        self.in_flight = 0
        self.max_in_flight = 0

    def as_dict(self):
        return {
            "requests": self.requests,
            "bytes": self.bytes,
            "gets": self.gets,
            "heads": self.heads,
            "ranges": self.ranges,
            "max_in_flight": self.max_in_flight,
        }


def parse_range(spec, size):
    """(start, end) with end exclusive, "invalid" to ignore the header, or
    None when unsatisfiable."""
    spec = spec.strip()
    if not spec.startswith("bytes=") or "," in spec:
        return "invalid"
    first, sep, last = spec[len("bytes="):].partition("-")
    first, last = first.strip(), last.strip()
    if not sep or not (first.isdigit() or first == "") or not (last.isdigit() or last == ""):
        return "invalid"
    if first == "":
        if last == "":
            return "invalid"
        n = int(last)
        if n == 0 or size == 0:
            return None
        return (max(0, size - n), size)
    start = int(first)
    end = size if last == "" else min(int(last) + 1, size)
    if last != "" and int(last) < start:
        return "invalid"
    if start >= size:
        return None
    return (start, end)


def make_handler(root, stats, opts):
    class Handler(BaseHTTPRequestHandler):
        # Small answers (headers, then a short body) would wait for the
        # delayed ACK (~40 ms each) with Nagle's algorithm on.
        disable_nagle_algorithm = True
        protocol_version = "HTTP/1.1"
        server_version = "zarr-test-server/1"

        def log_message(self, format, *args):  # quiet
            pass

        def do_GET(self):
            self.serve(head=False)

        def do_HEAD(self):
            self.serve(head=True)

        def send(self, status, body, head, headers=()):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)
                with stats.lock:
                    stats.bytes += len(body)

        def serve(self, head):
            path = urllib.parse.urlsplit(self.path).path
            if path == "/__stats":
                with stats.lock:
                    body = json.dumps(stats.as_dict()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)
                return
            if path == "/__reset":
                with stats.lock:
                    stats.reset()
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            with stats.lock:
                stats.requests += 1
                stats.in_flight += 1
                stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
                if head:
                    stats.heads += 1
                else:
                    stats.gets += 1
                if self.headers.get("Range") is not None:
                    stats.ranges += 1
            try:
                if opts.delay_ms > 0:
                    time.sleep(opts.delay_ms / 1000.0)
                self.answer(path, head)
            finally:
                with stats.lock:
                    stats.in_flight -= 1

        def answer(self, path, head):
            if path.startswith("/__forbidden/"):
                return self.send(403, b"Forbidden\n", head, [("Content-Type", "text/plain")])
            if opts.html:
                return self.send(200, HTML_PAGE, head, [("Content-Type", "text/html; charset=utf-8")])
            rel = urllib.parse.unquote(path, errors="strict").lstrip("/")
            parts = rel.split("/")
            if rel == "" or any(p in ("", ".", "..") or "\\" in p or "\0" in p for p in parts):
                return self.send(404, b"Not Found\n", head)
            file = os.path.join(root, *parts)
            if not os.path.isfile(file):
                return self.send(404, b"Not Found\n", head)
            with open(file, "rb") as f:
                data = f.read()
            size = len(data)
            spec = self.headers.get("Range")
            if spec is None or opts.no_ranges or head:
                return self.send(200, data, head, [("Accept-Ranges", "bytes")])
            r = parse_range(spec, size)
            if r == "invalid":
                return self.send(200, data, head, [("Accept-Ranges", "bytes")])
            if r is None:
                return self.send(416, b"", head, [("Content-Range", "bytes */%d" % size)])
            start, end = r
            return self.send(206, data[start:end], head,
                             [("Content-Range", "bytes %d-%d/%d" % (start, end - 1, size))])

    return Handler


def parent_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", help="the folder to serve")
    ap.add_argument("--port", type=int, default=0, help="0 (default) for a free port")
    ap.add_argument("--delay-ms", type=float, default=0.0)
    ap.add_argument("--html", action="store_true")
    ap.add_argument("--no-ranges", action="store_true")
    ap.add_argument("--max-seconds", type=float, default=600.0)
    ap.add_argument("--parent-pid", type=int, default=0)
    ap.add_argument("--watch-stdin", action="store_true")
    opts = ap.parse_args()

    root = os.path.abspath(opts.root)
    stats = Stats()
    # The engine opens up to 16 connections at once; the default listen
    # backlog of 5 drops some and the client retries after a second.
    ThreadingHTTPServer.request_queue_size = 128
    server = ThreadingHTTPServer(("127.0.0.1", opts.port), make_handler(root, stats, opts))
    server.daemon_threads = True
    sys.stdout.write("PORT %d PID %d\n" % (server.server_address[1], os.getpid()))
    sys.stdout.flush()

    threading.Thread(target=server.serve_forever, daemon=True).start()

    done = threading.Event()
    if opts.watch_stdin:
        def watch_stdin():
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except OSError:
                pass
            done.set()
        threading.Thread(target=watch_stdin, daemon=True).start()

    deadline = time.monotonic() + opts.max_seconds
    while not done.is_set() and time.monotonic() < deadline:
        if opts.parent_pid and not parent_alive(opts.parent_pid):
            break
        done.wait(0.25)
    # Daemon threads (the server's) end with the process.
    os._exit(0)


if __name__ == "__main__":
    main()
