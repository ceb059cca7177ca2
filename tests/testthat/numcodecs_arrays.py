# Arrays of numcodecs' codecs for test-numcodecs.R, written and read by
# zarr-python 2.18 (Zarr v2: numcodecs ids) or 3.4 (Zarr v3: numcodecs.*
# names). argv: "write" ROOT (writes one array per case and prints, per
# array, the values zarr-python reads back from it in C order), or "read"
# ROOT NAMES-JSON (prints, per array, whether it holds exactly what
# zarr-python reads from the same data written with the same codecs).
import json, sys, tempfile, warnings

# Only the JSON line goes to the output (R reads stdout and stderr as one).
warnings.simplefilter("ignore")
import numpy as np
import zarr
import numcodecs

major = int(zarr.__version__.split(".")[0])
nc = numcodecs if major == 2 else zarr.codecs.numcodecs

I2 = np.arange(30, dtype="<i2").reshape(5, 6) * 3 - 40
F8 = np.arange(30, dtype="<f8").reshape(5, 6) / 7 + 1000
F4 = ((np.arange(30).reshape(5, 6) - 11.5) / 3).astype("<f4")
B1 = (np.arange(30).reshape(5, 6) % 3 == 0)
S = np.array(["a", "bb", "", "ccc", "a", "bb"] * 5, dtype=object).reshape(5, 6)


def fso():
    return nc.FixedScaleOffset(offset=1000, scale=10, dtype="<f8", astype="|u1")


# name -> (data, filters, compressor): the codecs of both versions.
CASES = {
    "crc32": (I2, [], lambda: nc.CRC32()),
    "crc32_end": (I2, [], lambda: nc.CRC32(location="end")),
    "adler32": (I2, [], lambda: nc.Adler32()),
    "fletcher32": (I2, [], lambda: nc.Fletcher32()),
    "jenkins_lookup3": (I2, [], lambda: nc.JenkinsLookup3(initval=7)),
    "lzma": (I2, [], lambda: nc.LZMA()),
    "lzma_alone": (I2, [], lambda: nc.LZMA(format=2, preset=1)),
    "fixedscaleoffset": (F8, [fso], lambda: nc.Zlib(level=1)),
    "quantize": (F8, [lambda: nc.Quantize(digits=2, dtype="<f8")], None),
    "bitround": (F4, [lambda: nc.BitRound(keepbits=5)], lambda: nc.Zlib(level=1)),
    "packbits": (B1, [lambda: nc.PackBits()], None),
    "astype": (F8, [lambda: nc.AsType(encode_dtype="<f4", decode_dtype="<f8")], None),
    "delta": (I2, [lambda: nc.Delta(dtype="<i2")], lambda: nc.Zlib(level=1)),
    # The compressor of Zarr v2, the serializer (in place of bytes) of v3;
    # numcodecs 0.15 takes pcodec 0.3, whose format pco 1 does not write.
    "pcodec": (I2, [], lambda: nc.PCodec(level=3)),
}
SERIALIZERS = {"pcodec"}
if major == 2:
    del CASES["pcodec"]
    # Object arrays of strings; zarr-python 3 wants vlen-utf8 for them.
    CASES["categorize"] = (S, [lambda: nc.Categorize(["a", "bb", "ccc"], dtype=object)], lambda: nc.Zlib(level=1))
# What zarr-python 3.4 also writes under `numcodecs.*` names of codecs the
# package has under zarr's own names (read, written back under those).
V3_ONLY = {
    "gzip": (I2, [], lambda: nc.GZip()),
    "zstd": (I2, [], lambda: nc.Zstd(level=2, checksum=True)),
    "blosc": (I2, [], lambda: nc.Blosc()),
    "blosc_auto": (I2, [], lambda: nc.Blosc(cname="zstd", clevel=3, shuffle=-1)),
    "crc32c": (I2, [], lambda: nc.CRC32C()),
}
cases = dict(CASES, **(V3_ONLY if major == 3 else {}))


def write(path, name, case):
    data, filters, compressor = case
    filters = [f() for f in filters]
    comp = compressor() if compressor else None
    if major == 2:
        a = zarr.open(path, mode="w", shape=data.shape, chunks=(3, 4), dtype=data.dtype,
                      filters=filters or None, compressor=comp)
    elif name in SERIALIZERS:
        a = zarr.create_array(path, shape=data.shape, chunks=(3, 4), dtype=data.dtype,
                              serializer=comp, compressors=None)
    else:
        a = zarr.create_array(path, shape=data.shape, chunks=(3, 4), dtype=data.dtype,
                              filters=filters or None, compressors=[comp] if comp else None)
    a[...] = data
    return a


mode, root = sys.argv[1], sys.argv[2]
if mode == "write":
    out = {}
    for name, case in cases.items():
        write("%s/%s" % (root, name), name, case)
        out[name] = zarr.open_array("%s/%s" % (root, name), mode="r")[...].ravel().tolist()
    print(json.dumps(out))
else:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in json.loads(sys.argv[3]):
            want = write("%s/%s" % (tmp, name), name, cases[name])[...]
            a = zarr.open_array("%s/%s" % (root, name), mode="r")
            got = a[...]
            out[name] = bool(np.array_equal(got, want)) and got.dtype == want.dtype
    print(json.dumps(out))
