"""The parts of an HTTP/1.1 message that the test proxies (proxy/s3_proxy.py
and fault_proxy.py) read and write alike. Standard library only."""

import asyncio


class Closed(Exception):
    """The peer closed the connection between messages."""


async def read_head(reader):
    """The start line and the headers (name, value) of a message."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial.strip():
            raise Closed() from None
        raise
    lines = raw.decode("latin-1").split("\r\n")
    headers = []
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers.append((k.strip(), v.strip()))
    return lines[0], headers


def header(headers, name, default=None):
    """The value of the header `name` (lowercase), matched in any case."""
    for k, v in headers:
        if k.lower() == name:
            return v
    return default


async def read_chunked(reader):
    """A body sent with "Transfer-Encoding: chunked", trailers skipped."""
    parts = []
    while True:
        size = int((await reader.readline()).split(b";")[0].strip(), 16)
        if size == 0:
            while (await reader.readline()).strip():
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readline()


def head_bytes(start, headers):
    """A message head from its start line and (name, value) headers."""
    return (start + "\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n").encode("latin-1")
