# Arrays of numcodecs' codecs for test-numcodecs.R, written and read by
# zarr-python 2.18 (Zarr v2: numcodecs ids) or 3.4 (Zarr v3: numcodecs.*
# names). argv: "write" ROOT, or "read" ROOT NAMES-JSON (prints, per array,
# whether it holds exactly DATA as "<i2").
import json, sys
import numpy as np
import zarr
import numcodecs

CODECS = {
    "crc32": lambda: numcodecs.CRC32(),
    "crc32_end": lambda: numcodecs.CRC32(location="end"),
    "adler32": lambda: numcodecs.Adler32(),
    "fletcher32": lambda: numcodecs.Fletcher32(),
    "jenkins_lookup3": lambda: numcodecs.JenkinsLookup3(initval=7),
}
V3 = {
    "crc32": lambda: zarr.codecs.numcodecs.CRC32(),
    "crc32_end": lambda: zarr.codecs.numcodecs.CRC32(location="end"),
    "adler32": lambda: zarr.codecs.numcodecs.Adler32(),
    "fletcher32": lambda: zarr.codecs.numcodecs.Fletcher32(),
    "jenkins_lookup3": lambda: zarr.codecs.numcodecs.JenkinsLookup3(initval=7),
    # Codecs the package has under zarr's own names.
    "gzip": lambda: zarr.codecs.numcodecs.GZip(),
    "zstd": lambda: zarr.codecs.numcodecs.Zstd(level=2, checksum=True),
    "blosc": lambda: zarr.codecs.numcodecs.Blosc(),
    "blosc_auto": lambda: zarr.codecs.numcodecs.Blosc(cname="zstd", clevel=3, shuffle=-1),
    "crc32c": lambda: zarr.codecs.numcodecs.CRC32C(),
}
mode, root = sys.argv[1], sys.argv[2]
data = np.arange(30, dtype="<i2").reshape(5, 6) * 3 - 40
major = int(zarr.__version__.split(".")[0])
if mode == "write":
    for name in CODECS if major == 2 else V3:
        path = "%s/%s" % (root, name)
        if major == 2:
            a = zarr.open(path, mode="w", shape=data.shape, chunks=(3, 4), dtype="<i2", compressor=CODECS[name]())
        else:
            a = zarr.create_array(path, shape=data.shape, chunks=(3, 4), dtype="<i2", compressors=[V3[name]()])
        a[...] = data
else:
    out = {}
    for name in json.loads(sys.argv[3]):
        a = zarr.open_array("%s/%s" % (root, name), mode="r")
        out[name] = bool(np.array_equal(a[...], data)) and a.dtype == np.dtype("<i2")
    print(json.dumps(out))
