"""A loopback HTTP proxy in front of an S3 server (moto, s3s-fs), for the
tests and benchmarks of the object store: it can add a delay to every
request (to model network latency), answer the first requests with 503 (to
exercise retries), and count the requests by method.

    python s3_proxy.py --port P --upstream http://127.0.0.1:Q [--delay-ms 20] [--fail-first 2]

GET /__proxy/stats answers the counts as JSON, GET /__proxy/log each
request since the last reset (seconds since the reset when it came and
when its answer was sent, method, path, Range header; for the benchmarks'
timelines), and POST /__proxy/reset sets them to zero; no S3 bucket can be
named "__proxy", so these never hide a request meant for the server.
Standard library only.

One thread and asyncio: each client connection gets its own connection to
the server, and an answer's body is relayed in large pieces as it comes,
never held whole. The earlier proxy (a thread per connection, each answer
read whole and written again) spent more CPU per read on the two cores it
shares with server and client than the clients it was there to measure.
"""

import argparse
import asyncio
import json
import socket
import time
import urllib.parse

from http_message import Closed, head_bytes, header, read_chunked, read_head

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade",
              "expect"}
# Bytes relayed per read: a 512 KiB chunk of the benchmarks in one or two.
PIECE = 1 << 20


class State:
    def __init__(self, fail_first):
        self.fail_left = fail_first
        self.reset()

    def reset(self):
        self.counts = {}
        self.failed = 0
        self.bytes_out = 0
        self.t0 = time.monotonic()
        self.log = []

    def stats(self):
        return {"requests": sum(self.counts.values()), "by_method": dict(self.counts),
                "failed": self.failed, "bytes": self.bytes_out}


def nodelay(writer):
    # Headers and body go out in separate writes: with Nagle's algorithm
    # the body would wait for the peer's (delayed, up to 40 ms) ACK of the
    # headers on a warm keep-alive connection.
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


async def request_body(reader, writer, headers):
    if header(headers, "expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    n = int(header(headers, "content-length", "0") or 0)
    if n:
        return await reader.readexactly(n)
    if header(headers, "transfer-encoding", "").lower() == "chunked":
        return await read_chunked(reader)
    return b""


async def reply(writer, method, status, body, headers=()):
    hs = list(headers) + [("Content-Length", str(len(body)))]
    writer.write(head_bytes(f"HTTP/1.1 {status}", hs))
    if method != "HEAD":
        writer.write(body)
    await writer.drain()


class Upstream:
    """One connection to the server, opened when first needed and again
    after the server closed it."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def open(self):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=4 * PIECE)
            nodelay(self.writer)
        return self.reader, self.writer

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def relay_exact(src, dst, n):
    """Copy n bytes from src to dst as they come; the count copied."""
    left = n
    while left:
        piece = await src.read(min(left, PIECE))
        if not piece:
            raise ConnectionError("the server closed the connection within an answer")
        dst.write(piece)
        left -= len(piece)
        await dst.drain()
    return n


async def relay_chunked(src, dst):
    """Copy a chunked body as it is (framing included); the payload bytes."""
    total = 0
    while True:
        line = await src.readline()
        dst.write(line)
        size = int(line.split(b";")[0].strip(), 16)
        if size == 0:
            while True:
                trailer = await src.readline()
                dst.write(trailer)
                if not trailer.strip():
                    break
            await dst.drain()
            return total
        total += await relay_exact(src, dst, size)
        dst.write(await src.readexactly(2))


async def relay_to_eof(src, dst):
    total = 0
    while True:
        piece = await src.read(PIECE)
        if not piece:
            return total
        dst.write(piece)
        total += len(piece)
        await dst.drain()


async def forward(up, method, target, headers, body, writer):
    """Send the request to the server and relay its answer to the client as
    it comes; the body bytes relayed and whether the client connection must
    close (the answer's length was its end)."""
    out = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() != "content-length"]
    out.append(("Content-Length", str(len(body))))
    request = head_bytes(f"{method} {target} HTTP/1.1", out) + body
    for attempt in range(2):
        reader, upw = await up.open()
        try:
            upw.write(request)
            await upw.drain()
            start, rheaders = await read_head(reader)
            # An interim answer (100 Continue) precedes the real one.
            while start.split(" ", 2)[1].startswith("1"):
                start, rheaders = await read_head(reader)
            break
        except (Closed, ConnectionError, asyncio.IncompleteReadError, OSError):
            # The server closed an idle connection: open a new one.
            up.close()
            if attempt:
                raise
    status = int(start.split(" ", 2)[1])
    keep = [(k, v) for k, v in rheaders if k.lower() not in HOP_BY_HOP]
    chunked = header(rheaders, "transfer-encoding", "").lower() == "chunked"
    length = header(rheaders, "content-length")
    upstream_closes = header(rheaders, "connection", "").lower() == "close"
    no_body = method == "HEAD" or status in (204, 304) or 100 <= status < 200
    close_client = False
    if chunked and not no_body:
        keep = [(k, v) for k, v in keep if k.lower() != "content-length"] + [("Transfer-Encoding", "chunked")]
    elif length is None and not no_body:
        # The body ends when the server closes: so does the answer to the
        # client.
        keep.append(("Connection", "close"))
        close_client = upstream_closes = True
    writer.write(head_bytes(start, keep))
    if no_body:
        n = 0
    elif chunked:
        n = await relay_chunked(reader, writer)
    elif length is not None:
        n = await relay_exact(reader, writer, int(length))
    else:
        n = await relay_to_eof(reader, writer)
    await writer.drain()
    if upstream_closes:
        up.close()
    return n, close_client


def make_handler(upstream, delay, state):
    up_url = urllib.parse.urlsplit(upstream)

    async def control(target, method, writer):
        if target == "/__proxy/reset":
            state.reset()
        out = list(state.log) if target == "/__proxy/log" else state.stats()
        await reply(writer, method, 200, json.dumps(out).encode(), [("Content-Type", "application/json")])

    async def one(reader, writer, up):
        """Serve one request; False when the connection is to close."""
        start, headers = await read_head(reader)
        method, target, _ = start.split(" ", 2)
        body = await request_body(reader, writer, headers)
        if target.startswith("/__proxy/"):
            await control(target, method, writer)
            return header(headers, "connection", "").lower() != "close"
        came = time.monotonic()
        t0 = state.t0
        state.counts[method] = state.counts.get(method, 0) + 1
        fail = state.fail_left > 0
        if fail:
            state.fail_left -= 1
            state.failed += 1
        close = False
        try:
            if delay:
                await asyncio.sleep(delay)
            if fail:
                await reply(writer, method, 503, b"<Error><Code>SlowDown</Code><Message>injected</Message></Error>",
                            [("Content-Type", "application/xml")])
            else:
                n, close = await forward(up, method, target, headers, body, writer)
                state.bytes_out += n
        finally:
            # A reset while this request was out starts a new log.
            if state.t0 == t0:
                state.log.append([round(came - t0, 4), round(time.monotonic() - t0, 4), method, target,
                                  header(headers, "range")])
        return not close and header(headers, "connection", "").lower() != "close"

    async def handle(reader, writer):
        nodelay(writer)
        up = Upstream(up_url.hostname, up_url.port)
        try:
            while await one(reader, writer, up):
                pass
        except (Closed, ConnectionError, asyncio.IncompleteReadError, OSError):
            pass
        finally:
            up.close()
            writer.close()

    return handle


async def serve(a):
    state = State(a.fail_first)
    handle = make_handler(a.upstream, a.delay_ms / 1000, state)
    # A client keeps up to 64 requests in flight: a small listen backlog
    # would drop connections.
    server = await asyncio.start_server(handle, "127.0.0.1", a.port, backlog=256, limit=4 * PIECE)
    async with server:
        await server.serve_forever()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--upstream", required=True)
    p.add_argument("--delay-ms", type=float, default=0.0)
    p.add_argument("--fail-first", type=int, default=0)
    asyncio.run(serve(p.parse_args()))


if __name__ == "__main__":
    main()
