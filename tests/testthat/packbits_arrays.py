"""The registry's packbits codec as zarrs writes and reads it, through
zarrista (zarrs' Python binding), for test-packbits.R.

    packbits_arrays.py write ROOT   one array per case under ROOT
    packbits_arrays.py read ROOT [CASE...]   the values of each case's
                                             array in ROOT (or of those named)

Both print JSON: {case: [values...]}. (zarrista takes no complex arrays
from NumPy: the Rust tests check complex numbers.)
"""

import json
import os
import sys

import numpy as np
from zarrista import Array, ArrayBuilder, ChunkGrid, DataType, FillValue, codec
from zarrista.store import FilesystemStore

# name: data type, packbits configuration, fill value, values (7 or 10 of
# them, in chunks of 3, so that the last chunk is an edge chunk).
CASES = {
    "u8_bits0to3": ("uint8", {"last_bit": 3}, 99, [1, 2, 3, 15, 0, 9, 4]),
    "i8_bits0to2": ("int8", {"padding_encoding": "first_byte", "last_bit": 2}, 100, [-1, 3, -4, 2, 0, 1, -2]),
    "i16_bits1to4": ("int16", {"padding_encoding": "last_byte", "first_bit": 1, "last_bit": 4}, 1000,
                     [2, -2, 6, -16, 30, 0, -32]),
    "u16_bits0to11": ("uint16", {"last_bit": 11}, 4000, [0, 1, 4095, 2048, 77, 3000, 12]),
    "i64_bits0to40": ("int64", {"padding_encoding": "first_byte", "last_bit": 40}, 12345,
                      [-1, 5, -(2**40), 2**40 - 1, 0, 7, -9]),
    "bool": ("bool", {"padding_encoding": "last_byte"}, False,
             [True, False, True, True, False, False, False, True, True, True]),
    "f64_all": ("float64", {"padding_encoding": "first_byte"}, 0.5, [1.5, -2.25, 3e100, -0.0, 7, 1e-300, 2]),
}


def fill_bytes(dtype, fill):
    return np.array([fill], dtype=np.dtype(dtype).newbyteorder("<")).tobytes()


def as_json(values):
    return values.tolist()


def write(root):
    store = FilesystemStore(root)
    with open(os.path.join(root, "zarr.json"), "w") as f:
        json.dump({"zarr_format": 3, "node_type": "group", "attributes": {}}, f)
    for name, (dtype, config, fill, values) in CASES.items():
        grid = ChunkGrid.regular([len(values)], chunk_shape=[3])
        serializer = codec.ArrayToBytesCodec.from_config({"name": "packbits", "configuration": config})
        builder = ArrayBuilder(grid, DataType.from_string(dtype), FillValue(fill_bytes(dtype, fill)))
        array = builder.serializer(serializer).create(store, "/" + name)
        array.store_metadata()
        array.store_array_subset(slice(0, len(values)), np.array(values, dtype=dtype))


def read(root, names):
    store = FilesystemStore(root)
    out = {}
    for name in names:
        dtype, _, _, values = CASES[name]
        array = Array.open(store, "/" + name)
        got = np.asarray(array.retrieve_array_subset(slice(0, len(values))))
        out[name] = as_json(got.astype(dtype))
    return out


if __name__ == "__main__":
    command, root = sys.argv[1], sys.argv[2]
    if command == "write":
        write(root)
        print(json.dumps({name: as_json(np.array(case[3], dtype=case[0])) for name, case in CASES.items()}))
    else:
        print(json.dumps(read(root, sys.argv[3:] or list(CASES))))
