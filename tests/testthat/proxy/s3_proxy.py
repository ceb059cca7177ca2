"""A loopback HTTP proxy in front of an S3 server (moto), for the tests and
benchmarks of the object store: it can add a delay to every request (to
model network latency), answer the first requests with 503 (to exercise
retries), and count the requests by method.

    python s3_proxy.py --port P --upstream http://127.0.0.1:Q [--delay-ms 20] [--fail-first 2]

GET /__proxy/stats answers the counts as JSON, GET /__proxy/log each
request since the last reset (seconds since the reset when it came and
when its answer was sent, method, path, Range header; for the benchmarks'
timelines), and POST /__proxy/reset sets them to zero; no S3 bucket can be named "__proxy", so these never hide a
request meant for the server. Standard library only.
"""

import argparse
import http.client
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade"}


class State:
    def __init__(self, fail_first):
        self.lock = threading.Lock()
        self.fail_left = fail_first
        self.reset()

    def reset(self):
        self.counts = {}
        self.failed = 0
        self.bytes_out = 0
        self.t0 = time.monotonic()
        self.log = []

    def stats(self):
        with self.lock:
            return {"requests": sum(self.counts.values()), "by_method": dict(self.counts),
                    "failed": self.failed, "bytes": self.bytes_out}


def make_handler(upstream, delay, state):
    up = urllib.parse.urlsplit(upstream)
    local = threading.local()

    def connection():
        # One connection to the server per proxy thread (one per client
        # connection), as a client's pool would keep.
        if getattr(local, "conn", None) is None:
            local.conn = http.client.HTTPConnection(up.hostname, up.port, timeout=120)
        return local.conn

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body of an answer go out in two writes: with
        # Nagle's algorithm the body waited for the client's ACK of the
        # headers, which a client on a warm keep-alive connection delays by
        # up to 40 ms. Each small answer (metadata, a shard index) then
        # cost 40 ms more than the server takes, for a client reusing its
        # connections across opens and not for one opening new ones.
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def reply(self, status, body, headers=()):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def read_body(self):
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                return self.rfile.read(n)
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                parts = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    parts.append(self.rfile.read(size))
                    self.rfile.readline()
                return b"".join(parts)
            return b""

        def handle_any(self):
            body = self.read_body()
            if self.path.startswith("/__proxy/"):
                if self.path == "/__proxy/reset":
                    with state.lock:
                        state.reset()
                if self.path == "/__proxy/log":
                    with state.lock:
                        out = list(state.log)
                else:
                    out = state.stats()
                return self.reply(200, json.dumps(out).encode(), [("Content-Type", "application/json")])
            came = time.monotonic()
            try:
                return self.forward(body)
            finally:
                with state.lock:
                    state.log.append([round(came - state.t0, 4), round(time.monotonic() - state.t0, 4),
                                      self.command, self.path, self.headers.get("Range")])

        def forward(self, body):
            with state.lock:
                state.counts[self.command] = state.counts.get(self.command, 0) + 1
                fail = state.fail_left > 0
                if fail:
                    state.fail_left -= 1
                    state.failed += 1
            if delay:
                time.sleep(delay)
            if fail:
                return self.reply(503, b"<Error><Code>SlowDown</Code><Message>injected</Message></Error>",
                                  [("Content-Type", "application/xml")])
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            headers["Content-Length"] = str(len(body))
            for attempt in range(2):
                conn = connection()
                try:
                    conn.request(self.command, self.path, body=body, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    break
                except (http.client.HTTPException, OSError):
                    # The server closed an idle connection: open a new one.
                    conn.close()
                    local.conn = None
                    if attempt:
                        raise
            out = [(k, v) for k, v in resp.getheaders()
                   if k.lower() not in HOP_BY_HOP and k.lower() != "content-length"]
            if self.command == "HEAD":
                self.send_response(resp.status)
                for k, v in out:
                    self.send_header(k, v)
                self.send_header("Content-Length", resp.getheader("Content-Length", "0"))
                self.end_headers()
                return
            with state.lock:
                state.bytes_out += len(data)
            self.reply(resp.status, data, out)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    return Handler


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--upstream", required=True)
    p.add_argument("--delay-ms", type=float, default=0.0)
    p.add_argument("--fail-first", type=int, default=0)
    a = p.parse_args()
    state = State(a.fail_first)
    # A client keeps up to 64 requests in flight: the default listen
    # backlog of 5 would drop connections.
    ThreadingHTTPServer.request_queue_size = 256
    server = ThreadingHTTPServer(("127.0.0.1", a.port), make_handler(a.upstream, a.delay_ms / 1000, state))
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
