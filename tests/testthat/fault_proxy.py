"""A loopback HTTP proxy that fails requests the way networks, servers and
middleboxes do, for the tests of the network stores' retries. Standard
library only.

    python fault_proxy.py --upstream http://127.0.0.1:Q [--port 0]
        [--parent-pid P] [--max-seconds 300] [--latency-ms 0]

It prints "PORT <port> PID <pid>" once it listens. Each request is relayed
to the upstream server (the test HTTP server, moto) on a connection of its
own, unless the fault drawn for it says otherwise:

  503, 500  answer that status without asking upstream
  429       answer 429 with "Retry-After: <retry_after>" (seconds)
  close     close the connection before any answer
  short     relay the answer's headers and half of its body, then close
  stall     wait stall_ms, then close (longer than the client's timeout)
  range     shift a 206 answer's Content-Range by one byte (bytes intact)
  drop      a PUT: apply it upstream, then close without the answer; any
            other request: as close

Every request (failed or not, control paths excepted) is answered no sooner
than --latency-ms after it arrived, as over a network with that round trip;
concurrent requests wait side by side.

Whether a request fails, and how, is drawn from a hash of the seed, the
method, the path, the Range header and how many times this proxy has seen
that same request: the same seed fails the same requests whatever order
concurrent requests arrive in, and a retried request draws anew.

Control paths (never failed, never relayed):
  GET /__faults/set?rate=0.15&faults=503,close&seed=1&stall_ms=1500
      &retry_after=1&methods=GET,HEAD&latency_ms=20   set the faults (and
      the latency, else the one of the command line), zero the counts
  GET /__faults/stats    the counts as JSON: requests, relayed, faults by
                         kind, early_retries (a request repeated before the
                         Retry-After of its 429 had passed)
  GET /__faults/race?path=/b/k&value=text   the next PUT of path is applied,
      then `value` (if given) is PUT there upstream as another writer would,
      then the connection is closed without an answer (a lost answer to a
      write).
"""

import argparse
import asyncio
import hashlib
import json
import os
import sys
import time
import urllib.parse

from proxy.http_message import Closed, head_bytes, header, read_chunked, read_head

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te",
              "upgrade", "expect", "content-length"}
KINDS = ("503", "500", "429", "close", "short", "stall", "range", "drop")


class State:
    def __init__(self, latency_ms=0.0):
        self.default_latency_ms = latency_ms
        self.configure({})

    def configure(self, q):
        self.rate = float(q.get("rate", "0"))
        faults = [f for f in q.get("faults", "").split(",") if f]
        bad = [f for f in faults if f not in KINDS]
        if bad:
            raise ValueError("unknown faults: " + ",".join(bad))
        self.faults = faults
        self.seed = q.get("seed", "0")
        self.stall = float(q.get("stall_ms", "1500")) / 1000
        self.retry_after = int(q.get("retry_after", "1"))
        self.latency = float(q.get("latency_ms", self.default_latency_ms)) / 1000
        methods = q.get("methods", "")
        self.methods = set(methods.split(",")) if methods else None
        self.seen = {}
        self.blocked_until = {}
        self.race = None
        self.counts = {"requests": 0, "relayed": 0, "early_retries": 0,
                       "faults": {k: 0 for k in KINDS}}

    def draw(self, method, path, rng):
        """The fault of this request, or None."""
        ident = "%s %s %s" % (method, path, rng)
        n = self.seen.get(ident, 0)
        self.seen[ident] = n + 1
        until = self.blocked_until.pop(ident, None)
        if until is not None and time.monotonic() < until:
            self.counts["early_retries"] += 1
        if not self.faults or (self.methods is not None and method not in self.methods):
            return None
        h = hashlib.sha256(("%s|%s|%d" % (self.seed, ident, n)).encode()).digest()
        u = int.from_bytes(h[:8], "big") / 2.0 ** 64
        if u >= self.rate:
            return None
        kind = self.faults[int.from_bytes(h[8:12], "big") % len(self.faults)]
        if kind == "429":
            self.blocked_until[ident] = time.monotonic() + self.retry_after
        return kind


async def read_body(reader, headers, until_eof):
    if header(headers, "transfer-encoding", "").lower() == "chunked":
        return await read_chunked(reader)
    n = header(headers, "content-length")
    if n is not None:
        return await reader.readexactly(int(n))
    return await reader.read() if until_eof else b""


async def upstream_request(up, method, target, headers, body):
    """(status line, headers, body) of the request sent upstream."""
    reader, writer = await asyncio.open_connection(up.hostname, up.port)
    try:
        out = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP]
        out += [("Content-Length", str(len(body))), ("Connection", "close")]
        writer.write(head_bytes("%s %s HTTP/1.1" % (method, target), out) + body)
        await writer.drain()
        status, rheaders = await read_head(reader)
        code = int(status.split()[1])
        no_body = method == "HEAD" or code in (204, 304) or 100 <= code < 200
        rbody = b"" if no_body else await read_body(reader, rheaders, True)
        return status, rheaders, rbody
    finally:
        writer.close()


def answer(status, headers, body, head_only=False, length=None):
    out = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP]
    out.append(("Content-Length", str(len(body) if length is None else length)))
    return head_bytes(status, out) + (b"" if head_only else body)


def shift_range(headers):
    out = []
    for k, v in headers:
        if k.lower() == "content-range" and v.startswith("bytes ") and "-" in v:
            span, total = v[6:].split("/", 1)
            a, b = span.split("-", 1)
            v = "bytes %d-%d/%s" % (int(a) + 1, int(b) + 1, total)
        out.append((k, v))
    return out


async def control(state, path, query):
    q = {k: v[-1] for k, v in urllib.parse.parse_qs(query).items()}
    if path == "/__faults/set":
        state.configure(q)
    elif path == "/__faults/race":
        value = q.get("value")
        state.race = (q["path"], None if value is None else value.encode())
    return json.dumps(state.counts).encode()


async def handle(state, up, reader, writer):
    try:
        while True:
            try:
                start, headers = await read_head(reader)
            except (Closed, ConnectionError, asyncio.IncompleteReadError):
                return
            method, target = start.split()[0], start.split()[1]
            body = await read_body(reader, headers, False)
            parsed = urllib.parse.urlsplit(target)
            last = header(headers, "connection", "").lower() == "close"
            if parsed.path.startswith("/__faults/"):
                out = await control(state, parsed.path, parsed.query)
                writer.write(answer("HTTP/1.1 200 OK", [("Content-Type", "application/json")], out))
                await writer.drain()
                if last:
                    return
                continue
            state.counts["requests"] += 1
            if state.latency > 0:
                await asyncio.sleep(state.latency)
            if state.race is not None and method == "PUT" and parsed.path == state.race[0]:
                _, other = state.race
                state.race = None
                await upstream_request(up, method, target, headers, body)
                if other is not None:
                    # The client's headers (moto wants an S3-looking request;
                    # it does not check signatures) without its condition.
                    theirs = [(k, v) for k, v in headers
                              if k.lower() not in ("if-match", "if-none-match", "content-md5",
                                                   "x-amz-content-sha256")]
                    theirs.append(("x-amz-content-sha256", "UNSIGNED-PAYLOAD"))
                    got = await upstream_request(up, "PUT", parsed.path, theirs, other)
                    state.counts["race_status"] = int(got[0].split()[1])
                state.counts["faults"]["drop"] += 1
                return
            kind = state.draw(method, parsed.path, header(headers, "range") or "")
            if kind is not None:
                state.counts["faults"][kind] += 1
            if kind in ("503", "500", "429"):
                reason = {"503": "Service Unavailable", "500": "Internal Server Error",
                          "429": "Too Many Requests"}[kind]
                extra = [("Retry-After", str(state.retry_after))] if kind == "429" else []
                msg = b"injected fault"
                writer.write(answer("HTTP/1.1 %s %s" % (kind, reason),
                                    [("Content-Type", "text/plain")] + extra, msg, method == "HEAD"))
                await writer.drain()
                if last:
                    return
                continue
            if kind == "close" or (kind == "drop" and method != "PUT"):
                return
            if kind == "stall":
                await asyncio.sleep(state.stall)
                return
            status, rheaders, rbody = await upstream_request(up, method, target, headers, body)
            # Kept alive whatever the upstream's HTTP version: the answer has
            # its length.
            status = "HTTP/1.1 " + status.split(" ", 1)[1]
            state.counts["relayed"] += 1
            if kind == "drop":
                return
            if kind == "short" and len(rbody) >= 2:
                writer.write(answer(status, rheaders, rbody[: len(rbody) // 2], length=len(rbody)))
                await writer.drain()
                return
            if kind == "range" and status.split()[1] == "206":
                rheaders = shift_range(rheaders)
            length = header(rheaders, "content-length") if method == "HEAD" else None
            writer.write(answer(status, rheaders, rbody, method == "HEAD",
                                int(length) if length is not None else None))
            await writer.drain()
            if last:
                return
    except (ConnectionError, asyncio.IncompleteReadError):
        return
    finally:
        writer.close()


async def watchdog(parent_pid, max_seconds):
    t0 = time.monotonic()
    while time.monotonic() - t0 < max_seconds:
        if parent_pid:
            try:
                os.kill(parent_pid, 0)
            except OSError:
                break
        await asyncio.sleep(1)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--parent-pid", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=300)
    ap.add_argument("--latency-ms", type=float, default=0)
    args = ap.parse_args()
    up = urllib.parse.urlsplit(args.upstream)
    state = State(args.latency_ms)
    server = await asyncio.start_server(lambda r, w: handle(state, up, r, w), "127.0.0.1", args.port)
    port = server.sockets[0].getsockname()[1]
    print("PORT %d PID %d" % (port, os.getpid()), flush=True)
    async with server:
        await watchdog(args.parent_pid, args.max_seconds)
    sys.exit(0)


if __name__ == "__main__":
    asyncio.run(main())
