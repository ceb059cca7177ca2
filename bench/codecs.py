"""numcodecs' decode speed for bench/codecs.R, on the data that script
decodes with this package's codecs.

    python codecs.py DIR REPS

For each case: makes its data (1e6 elements), encodes it with numcodecs,
writes DIR/<case>.in (the encoded bytes), DIR/<case>.out (numcodecs'
decode of them) and DIR/cases.json (each case's v3 codec name,
configuration, data type, shape and kind: a filter, which zarr-python 3
puts before `bytes`, a compressor after it, or a serializer in its
place), then times numcodecs' decode of a fresh copy of the encoded
bytes: CPU seconds of this thread per decode, the median of REPS. Prints
{case: seconds}.
"""
import json
import statistics
import sys
import time

import numpy as np
import numcodecs
import numcodecs.blosc
from numcodecs.compat import ensure_bytes
from numcodecs.pcodec import PCodec
from numcodecs.zfpy import ZFPY

N = 1_000_000
i = np.arange(N)
smooth = np.sin(i / 1000.0) * 1000 + 2000
ints = smooth.astype("<i4")
# One thread, as this package's decode of one chunk.
numcodecs.blosc.use_threads = False
numcodecs.blosc.set_nthreads(1)
# Each case: codec, data, data type, kind (see above).
CASES = {
    "zlib": (numcodecs.Zlib(level=1), ints, "int32", "compressor"),
    "gzip": (numcodecs.GZip(level=1), ints, "int32", "compressor"),
    "bz2": (numcodecs.BZ2(level=1), ints, "int32", "compressor"),
    "lzma": (numcodecs.LZMA(preset=1), ints, "int32", "compressor"),
    "lz4": (numcodecs.LZ4(), ints, "int32", "compressor"),
    "zstd": (numcodecs.Zstd(level=3, checksum=True), ints, "int32", "compressor"),
    "blosc_lz4": (numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE), ints, "int32", "compressor"),
    "blosc_zstd": (numcodecs.Blosc("zstd", 3, numcodecs.Blosc.BITSHUFFLE), ints, "int32", "compressor"),
    "shuffle": (numcodecs.Shuffle(elementsize=4), ints, "int32", "compressor"),
    "crc32": (numcodecs.CRC32(), ints, "int32", "compressor"),
    "crc32c": (numcodecs.CRC32C(), ints, "int32", "compressor"),
    "adler32": (numcodecs.Adler32(), ints, "int32", "compressor"),
    "fletcher32": (numcodecs.Fletcher32(), ints, "int32", "compressor"),
    "jenkins_lookup3": (numcodecs.JenkinsLookup3(), ints, "int32", "compressor"),
    "delta": (numcodecs.Delta(dtype="<i4"), ints, "int32", "filter"),
    "fixedscaleoffset": (
        numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<u2"),
        smooth,
        "float64",
        "filter",
    ),
    "quantize": (numcodecs.Quantize(digits=3, dtype="<f8"), smooth, "float64", "filter"),
    "bitround": (numcodecs.BitRound(keepbits=7), smooth.astype("<f4"), "float32", "filter"),
    "packbits": (numcodecs.PackBits(), (i % 3 == 0), "bool", "filter"),
    "astype": (numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8"), smooth, "float64", "filter"),
    "pcodec_int32": (PCodec(level=8), ints, "int32", "serializer"),
    "pcodec_float64": (PCodec(level=8), np.round(smooth, 2), "float64", "serializer"),
    # zfp compresses fields: 1000 x 1000, C order (zfpy's header holds it).
    "zfpy_accuracy": (ZFPY(mode=4, tolerance=0.01), smooth.reshape(1000, 1000), "float64", "serializer"),
    "zfpy_rate": (ZFPY(mode=2, rate=12), smooth.astype("<f4").reshape(1000, 1000), "float32", "serializer"),
    "zfpy_reversible": (ZFPY(), smooth.reshape(1000, 1000), "float64", "serializer"),
}


def main(out, reps):
    cases, times = {}, {}
    for name, (codec, data, dtype, kind) in CASES.items():
        enc = ensure_bytes(codec.encode(data))
        dec = np.asarray(codec.decode(enc))
        open("%s/%s.in" % (out, name), "wb").write(enc)
        open("%s/%s.out" % (out, name), "wb").write(dec.tobytes())
        cfg = codec.get_config()
        cfg.pop("id")
        cfg.pop("compression_kwargs", None)  # zfpy's own copy of its member
        cases[name] = {
            "name": "numcodecs." + codec.codec_id,
            "configuration": cfg,
            "data_type": dtype,
            "shape": list(data.shape),
            "kind": kind,
        }
        t = []
        for _ in range(reps):
            # A fresh copy, off the clock, as a read decodes bytes it has
            # just fetched and as bench/codecs.R's side decodes one (the
            # engine's decode takes its bytes): the copy's writes still in
            # the cache slow the decode after it (astype: 0.15 ms from the
            # same bytes each time, 0.20-0.22 ms from a fresh copy).
            fresh = bytes(memoryview(enc))
            c0 = time.thread_time()
            codec.decode(fresh)
            t.append(time.thread_time() - c0)
            del fresh
        times[name] = statistics.median(t)
    json.dump(cases, open("%s/cases.json" % out, "w"))
    print(json.dumps(times))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
