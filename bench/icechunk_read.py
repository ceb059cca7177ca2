"""Writes the data of bench/icechunk_read.R into OUT: the same 128 MiB
float64 array (4096 x 4096, chunks 512 x 512, zstd level 1) as a plain
Zarr v3 store (OUT/plain.zarr) and in an Icechunk repository on the local
file system (OUT/repo, one commit on main), with zarr-python and
icechunk-python 2.3.

    python bench/icechunk_read.py OUT
"""

import sys

import icechunk
import numpy as np
import zarr
from zarr.codecs import ZstdCodec

out = sys.argv[1]
data = np.random.default_rng(1).standard_normal((4096, 4096))
spec = dict(shape=data.shape, chunks=(512, 512), dtype="float64", compressors=[ZstdCodec(level=1)])

plain = zarr.create_array(store=f"{out}/plain.zarr", name="x", **spec)
plain[:] = data

repo = icechunk.Repository.create(icechunk.local_filesystem_storage(f"{out}/repo"))
s = repo.writable_session("main")
a = zarr.group(store=s.store).create_array("x", **spec)
a[:] = data
s.commit("128 MiB")
