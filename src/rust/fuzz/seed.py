"""Seed corpora of the fuzz targets.

Usage: python3 seed.py FIXTURES CORPUS. Writes CORPUS/<target>/<name> for
each target (see fuzz_targets/): the metadata documents and chunks of the
zarr-python fixtures FIXTURES (chunks and shards behind the selector bytes
their target reads first), then one valid chunk per codec chain of
codec_decode, a few shards of each layout, reference sets of each form the
fsspec spec describes and, when pyarrow is importable, Parquet reference
files. Codecs the standard library lacks (zstd, blosc, lz4) are encoded
with numcodecs when it is importable, by hand otherwise.
"""

import base64
import bz2
import gzip
import json
import os
import struct
import sys
import zlib

fixtures, corpus = sys.argv[1], sys.argv[2]

try:
    import numcodecs
except ImportError:
    numcodecs = None

# The codec_decode chain that best matches a compressor name (the low 4
# bits of the selector; see the table in fuzz_targets/codec_decode.rs).
CHAINS = {"gzip": 0, "zstd": 1, "blosc": 2, "crc32c": 5, "zlib": 6, "lz4": 7,
          "bz2": 8, "shuffle": 9, "delta": 10, "vlen-utf8": 11}
METADATA = ("zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata")


def put(target, name, data):
    folder = os.path.join(corpus, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def chunk_files(folder):
    for root, _, files in os.walk(folder):
        for f in sorted(files):
            if f not in METADATA:
                yield os.path.join(root, f)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def zstd_raw(data, checksum=False):
    """A zstd frame of one raw (stored) block; a checksum needs numcodecs."""
    if numcodecs is not None:
        return numcodecs.Zstd(level=1, checksum=checksum).encode(data)
    # Single segment, a 2-byte content size (its value less 256).
    header = b"\x28\xb5\x2f\xfd" + bytes([0x60]) + struct.pack("<H", len(data) - 256) \
        if len(data) >= 256 else b"\x28\xb5\x2f\xfd\x20" + bytes([len(data)])
    block = struct.pack("<I", 1 | (len(data) << 3))[:3]
    return header + block + data


def lz4_block(data):
    """numcodecs' LZ4: the decoded size, then one block of literals only."""
    if numcodecs is not None:
        return numcodecs.LZ4().encode(data)
    n, token, extra = len(data), b"", b""
    if n >= 15:
        token, rest = bytes([0xF0]), n - 15
        while rest >= 255:
            extra += b"\xff"
            rest -= 255
        extra += bytes([rest])
    else:
        token = bytes([n << 4])
    return struct.pack("<I", n) + token + extra + data


def blosc(data, cname, shuffle, typesize):
    if numcodecs is None:
        return None
    return numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle, typesize=typesize).encode(data)


def shuffle(data, size):
    return bytes(data[i + j * size] for i in range(size) for j in range(len(data) // size))


# Fixtures: metadata documents as they are, chunks behind their selector.
count = 0
for root, _, files in os.walk(fixtures):
    name = os.path.relpath(root, fixtures).replace(os.sep, "_")
    raw = {}
    for f in files:
        if f in METADATA:
            with open(os.path.join(root, f), "rb") as fh:
                raw[f] = fh.read()
    if "zarr.json" in raw:
        put("metadata_v3", name, raw["zarr.json"])
    if ".zarray" in raw:
        put("metadata_v2", name, b"\x00" + raw[".zarray"])
        if ".zattrs" in raw:
            put("metadata_v2", name + "_attrs", b"\x01" + raw[".zarray"] + b"\x00" + raw[".zattrs"])
    if ".zgroup" in raw:
        put("metadata_v2", name + "_group", b"\x04" + raw[".zgroup"])
    if ".zmetadata" in raw:
        put("metadata_v2", name + "_consolidated", b"\x06" + raw[".zmetadata"])
    meta = (raw.get("zarr.json") or raw.get(".zarray") or b"").decode("utf-8", "replace")
    if not meta or '"node_type": "group"' in meta:
        continue
    for i, path in enumerate(chunk_files(root)):
        with open(path, "rb") as fh:
            data = fh.read(65536)
        if "sharding_indexed" in meta:
            flags = (1 if '"start"' in meta else 0) | (2 if "crc32c" in meta else 0) \
                | (4 if "gzip" in meta else 0) | (8 if '"string"' in meta else 0)
            put("shard_index", f"{name}_{i}", bytes([flags, 0x55]) + data)
        else:
            chain = next((c for k, c in CHAINS.items() if f'"{k}"' in meta), 14)
            put("codec_decode", f"{name}_{i}", bytes([chain, 63]) + data)
        count += 1
        if i >= 3:
            break

# One valid chunk of 64 elements per codec_decode chain.
N = 64
i32 = struct.pack("<64i", *range(-32, 32))
f64 = struct.pack("<64d", *(x / 3 for x in range(N)))
f32 = struct.pack("<64f", *(x / 7 for x in range(N)))
i64 = struct.pack("<64q", *(x * 1000003 for x in range(N)))
c64 = struct.pack("<128f", *range(2 * N))
words = [("é" * (i % 4) + str(i)) for i in range(N)]
vlen = struct.pack("<I", N) + b"".join(struct.pack("<I", len(w.encode())) + w.encode() for w in words)
delta = struct.pack("<64h", -32, *([1] * 63))
synthetic = {
    0: gzip.compress(f64),
    1: zstd_raw(i32, checksum=True),
    2: blosc(i32, "lz4", numcodecs and numcodecs.Blosc.SHUFFLE, 4),
    3: blosc(f64, "zstd", numcodecs and numcodecs.Blosc.BITSHUFFLE, 8),
    4: blosc(bytes(range(N)), "blosclz", numcodecs and numcodecs.Blosc.NOSHUFFLE, 1),
    5: struct.pack("<64h", *range(N)) + struct.pack("<I", crc32c(struct.pack("<64h", *range(N)))),
    6: zlib.compress(i32),
    7: lz4_block(i64),
    8: bz2.compress(f32),
    9: shuffle(i32, 4),
    10: delta,
    11: zstd_raw(vlen),
    12: b"".join((w[:3].ljust(3, "\0")).encode("utf-32-le") for w in words),
    13: b"".join(w.encode()[:3].ljust(3, b"\0") for w in words),
    14: struct.pack(">64i", *range(N)),
    15: blosc(c64, "lz4hc", numcodecs and numcodecs.Blosc.SHUFFLE, 8),
}
# The variant (high 4 bits of the selector) these chunks were written for:
# shuffle of 4-byte elements, "<U3", "|S3", big-endian bytes.
VARIANT = {9: 3, 12: 4, 13: 2, 14: 1}
for chain, data in synthetic.items():
    if data is not None:
        selector = chain | VARIANT.get(chain, 0) << 4
        put("codec_decode", f"chain{chain}", bytes([selector, N - 1]) + data)


# Shards of 2 x 2 inner chunks of 2 x 2 (shape byte 0x55), of each layout.
def shard(flags):
    strings, compress = flags & 8, flags & 4
    parts = []
    for k in range(4):
        if k == 2:
            parts.append(None)  # an inner chunk that is not stored
            continue
        if strings:
            items = [f"s{k}{j}".encode() for j in range(4)]
            body = struct.pack("<I", 4) + b"".join(struct.pack("<I", len(s)) + s for s in items)
        else:
            body = struct.pack("<4h", *(10 * k + j for j in range(4)))
        parts.append(gzip.compress(body) if compress else body)
    index_len = 4 * 16 + (4 if flags & 2 else 0)
    at = index_len if flags & 1 else 0
    entries, data = b"", b""
    for p in parts:
        if p is None:
            entries += struct.pack("<QQ", 2**64 - 1, 2**64 - 1)
        else:
            entries += struct.pack("<QQ", at + len(data), len(p))
            data += p
    if flags & 2:
        entries += struct.pack("<I", crc32c(entries))
    return entries + data if flags & 1 else data + entries


for flags in range(16):
    put("shard_index", f"layout{flags}", bytes([flags, 0x55]) + shard(flags))

# Zarr v3 documents with the codecs the fixtures lack.
for i, codecs in enumerate([
    [{"name": "bytes", "configuration": {"endian": "little"}},
     {"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}],
    [{"name": "bytes", "configuration": {"endian": "big"}},
     {"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
     {"name": "numcodecs.bz2", "configuration": {"level": 1}}],
    [{"name": "bytes", "configuration": {"endian": "little"}},
     {"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i2"}},
     {"name": "numcodecs.zlib", "configuration": {"level": 1}}],
]):
    doc = {"zarr_format": 3, "node_type": "array", "shape": [10, 20], "data_type": "int32",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 5]}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": 0, "codecs": codecs, "attributes": {"i": i}}
    put("metadata_v3", f"codecs{i}", json.dumps(doc).encode())
put("metadata_v3", "fixed_string", json.dumps({
    "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "string",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
    "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}},
    "fill_value": "", "codecs": [{"name": "numpy.fixed_string", "configuration": {"dtype": "<U3"}}],
    "dimension_names": ["x"]}).encode())

# Reference sets (references-spec.rst): version 0, version 1 with
# templates, gen with each dimension form, inline and base64 values.
refs = [
    {"a/.zarray": "{}", "a/0": "base64:AAAAAA==", "b": ["data.bin", 0, 4]},
    {"version": 1, "templates": {"u": "data.bin"}, "refs": {
        ".zgroup": "{\"zarr_format\": 2}", "x/0": ["{{u}}", 8, 16], "x/1": ["{{u}}"]}},
    {"version": 1, "templates": {}, "gen": [{"key": "g/{{i}}.{{j}}", "url": "f{{i}}.nc",
        "offset": "{{(i + 1) * 100}}", "length": "10",
        "dimensions": {"i": 4, "j": {"start": 0, "stop": 6, "step": 2}}}], "refs": {}},
    {"version": 1, "refs": {"z/zarr.json": json.dumps({"zarr_format": 3, "node_type": "group"}),
        "z/c/0": "base64:" + base64.b64encode(b"\x01\x02\x03").decode()}},
    {"version": 1, "templates": {"a": "part", "b": "{{a}}-x"}, "gen": [
        {"key": "v/{{c}}", "url": "{{b}}/{{c|string}}.bin", "offset": "{{c * 8}}",
         "length": "8", "dimensions": {"c": [1, 3, 5]}}],
     "refs": {"v/.zarray": json.dumps({"zarr_format": 2, "shape": [6], "chunks": [1],
                                       "dtype": "<i8", "compressor": None, "fill_value": 0,
                                       "filters": None, "order": "C"})}},
    {"refs": {"k": "inline", "t": ["file:///nowhere/x.bin", 0, 1], "h": ["https://example.invalid/x"]}},
]
for i, r in enumerate(refs):
    put("reference_json", f"set{i}", json.dumps(r).encode())

# Parquet reference files (fsspec's LazyReferenceMapper layout) of the
# array the reference_parquet target declares (10 chunks, records of 10).
try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError:
    pa = None
if pa is not None:
    import io
    rows = [
        ("data.bin", 0, 8, None), (None, 0, 0, b"\x00" * 8), ("data.bin", 8, 8, None),
        (None, 0, 0, None), ("sub/part.bin", 0, 0, None), (None, 0, 0, b"abc"),
        ("data.bin", 16, 4, None), (None, 0, 0, None), ("data.bin", 0, 1, None),
        (None, 0, 0, b"\x01"),
    ]
    table = pa.table({
        "path": pa.array([r[0] for r in rows], pa.string()),
        "offset": pa.array([r[1] for r in rows], pa.int64()),
        "size": pa.array([r[2] for r in rows], pa.int64()),
        "raw": pa.array([r[3] for r in rows], pa.binary()),
    })
    for compression in ("none", "snappy", "zstd"):
        for groups in (10, 3):
            buf = io.BytesIO()
            pq.write_table(table, buf, compression=compression, row_group_size=groups)
            put("reference_parquet", f"{compression}_{groups}", buf.getvalue())

print(f"seeded {count} fixture chunks and shards from {fixtures}")
