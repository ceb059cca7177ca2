"""Writes the data of bench/icechunk_read.R into OUT: the same 128 MiB
float64 array (4096 x 4096, chunks 512 x 512, zstd level 1) as a plain
Zarr v3 store (OUT/plain.zarr) and in an Icechunk repository on the local
file system (OUT/repo, one commit on main), with zarr-python and
icechunk-python 2.3. With ENDPOINT and BUCKET, the repository is also
written to s3://BUCKET/repo on that S3 server (moto, keys "testing"); the
plain store is copied there by bench/icechunk_read.R.

    python bench/icechunk_read.py OUT [ENDPOINT BUCKET]
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


def write_repo(storage):
    repo = icechunk.Repository.create(storage)
    s = repo.writable_session("main")
    a = zarr.group(store=s.store).create_array("x", **spec)
    a[:] = data
    s.commit("128 MiB")


write_repo(icechunk.local_filesystem_storage(f"{out}/repo"))
if len(sys.argv) > 3:
    write_repo(icechunk.s3_storage(bucket=sys.argv[3], prefix="repo", endpoint_url=sys.argv[2],
                                   allow_http=True, region="us-east-1", force_path_style=True,
                                   access_key_id="testing", secret_access_key="testing"))
