# Arrays of the scale_offset and cast_value codecs for test-scale_offset.R,
# written and read by zarr-python 3.4. argv: "write" ROOT (one array per
# case below, and next to it NAME.bin: the values zarr-python reads back,
# float64, C order, NaN where they are NaN), or "read" ROOT NAMES-JSON
# (writes NAME.bin of each array R wrote, and prints each one's codecs).
import json, sys
import numpy as np
import zarr
from zarr.codecs import BytesCodec, ScaleOffset, CastValue, ShardingCodec


def data(dtype, lo, hi, shape=(5, 6)):
    return (np.linspace(lo, hi, num=int(np.prod(shape))).reshape(shape)).astype(dtype)


def nan_field():
    x = data("float64", 0, 2540, (7, 6))
    x[1, 2] = np.nan
    x[6, :] = np.nan
    return x


# name: (values, fill value, chunks, array -> array codecs, shards)
CASES = {
    "f32_scale_offset": (data("float32", -3, 40), 0, (3, 4),
                         [ScaleOffset(offset=5, scale=0.1)], None),
    "u16_offset_cast_u8": (data("uint16", 1000, 1255), 1000, (3, 4),
                           [ScaleOffset(offset=1000), CastValue(data_type="uint8")], None),
    "f64_nan_u8": (nan_field(), np.nan, (3, 4),
                   [ScaleOffset(offset=-10, scale=0.1),
                    CastValue(data_type="uint8", rounding="nearest-even",
                              scalar_map={"encode": [("NaN", 0)], "decode": [(0, "NaN")]})], None),
    "f64_i8_towards_zero_wrap": (data("float64", -300.5, 300.5), 0, (3, 4),
                                 [CastValue(data_type="int8", rounding="towards-zero", out_of_range="wrap")], None),
    "f64_u8_clamp_away": (data("float64", -20.5, 280.5), 0, (3, 4),
                          [CastValue(data_type="uint8", rounding="nearest-away", out_of_range="clamp")], None),
    "f64_f32_towards_positive": (data("float64", -1, 1) / 3, 0, (3, 4),
                                 [CastValue(data_type="float32", rounding="towards-positive")], None),
    "i32_scale_cast_i16": (data("int32", -1000, 1000) * 4, 0, (3, 4),
                           [ScaleOffset(offset=8, scale=2), CastValue(data_type="int16")], None),
    "f64_sharded_u16": (data("float64", 0, 65.5, (8, 6)), 0, (4, 6),
                        [ScaleOffset(scale=1000), CastValue(data_type="uint16")], (2, 3)),
}

mode, root = sys.argv[1], sys.argv[2]
if mode == "write":
    for name, (x, fill, chunks, filters, inner) in CASES.items():
        path = "%s/%s" % (root, name)
        if inner is None:
            a = zarr.create_array(path, shape=x.shape, chunks=chunks, dtype=x.dtype,
                                  fill_value=fill, filters=filters, compressors=None)
        else:
            a = zarr.create_array(path, shape=x.shape, chunks=inner, shards=chunks, dtype=x.dtype,
                                  fill_value=fill, filters=filters, compressors=None)
        a[...] = x
        np.ascontiguousarray(a[...], dtype="<f8").tofile(path + ".bin")
else:
    out = {}
    for name in json.loads(sys.argv[3]):
        a = zarr.open_array("%s/%s" % (root, name), mode="r")
        np.ascontiguousarray(a[...], dtype="<f8").tofile("%s/%s.bin" % (root, name))
        out[name] = [c.to_dict()["name"] for c in a.metadata.codecs]
    print(json.dumps(out))
