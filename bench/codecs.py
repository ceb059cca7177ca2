"""numcodecs' decode speed for bench/codecs.R, on the data that script
decodes with this package's codecs.

    python codecs.py DIR REPS

For each case: makes its data (1e6 elements), encodes it with numcodecs,
writes DIR/<case>.in (the encoded bytes), DIR/<case>.out (numcodecs'
decode of them) and DIR/cases.json (each case's v3 codec name,
configuration and data type), then times numcodecs' decode: CPU seconds
of this process per decode, the median of REPS. Prints {case: seconds}.
"""
import json
import statistics
import sys
import time

import numpy as np
import numcodecs
from numcodecs.compat import ensure_bytes
from numcodecs.pcodec import PCodec
from numcodecs.zfpy import ZFPY

N = 1_000_000
i = np.arange(N)
smooth = np.sin(i / 1000.0) * 1000 + 2000
CASES = {
    "lzma": (numcodecs.LZMA(preset=1), smooth.astype("<i4"), "int32"),
    "fixedscaleoffset": (
        numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="<u2"),
        smooth,
        "float64",
    ),
    "quantize": (numcodecs.Quantize(digits=3, dtype="<f8"), smooth, "float64"),
    "bitround": (numcodecs.BitRound(keepbits=7), smooth.astype("<f4"), "float32"),
    "packbits": (numcodecs.PackBits(), (i % 3 == 0), "bool"),
    "astype": (numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8"), smooth, "float64"),
    "pcodec_int32": (PCodec(level=8), smooth.astype("<i4"), "int32"),
    "pcodec_float64": (PCodec(level=8), np.round(smooth, 2), "float64"),
    # zfp compresses fields: 1000 x 1000, C order (zfpy's header holds it).
    "zfpy_accuracy": (ZFPY(mode=4, tolerance=0.01), smooth.reshape(1000, 1000), "float64"),
    "zfpy_rate": (ZFPY(mode=2, rate=12), smooth.astype("<f4").reshape(1000, 1000), "float32"),
    "zfpy_reversible": (ZFPY(), smooth.reshape(1000, 1000), "float64"),
}


def main(out, reps):
    cases, times = {}, {}
    for name, (codec, data, dtype) in CASES.items():
        enc = ensure_bytes(codec.encode(data))
        dec = np.asarray(codec.decode(enc))
        open("%s/%s.in" % (out, name), "wb").write(enc)
        open("%s/%s.out" % (out, name), "wb").write(dec.tobytes())
        cfg = codec.get_config()
        cfg.pop("id")
        cfg.pop("compression_kwargs", None)  # zfpy's own copy of its member
        cases[name] = {"name": "numcodecs." + codec.codec_id, "configuration": cfg, "data_type": dtype}
        t = []
        for _ in range(reps):
            c0 = time.process_time()
            codec.decode(enc)
            t.append(time.process_time() - c0)
        times[name] = statistics.median(t)
    json.dump(cases, open("%s/cases.json" % out, "w"))
    print(json.dumps(times))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
