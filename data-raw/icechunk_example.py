"""Writes inst/extdata/icechunk, the small Icechunk repository of the
examples of open_icechunk() and create_tag(), with icechunk-python 2.3:
a float64 array /temp (3 x 4, chunks 3 x 2) in two commits on main,
the first tagged "v1". Run from the package root:

    python data-raw/icechunk_example.py
"""

import shutil

import icechunk
import numpy as np
import zarr

path = "inst/extdata/icechunk"
shutil.rmtree(path, ignore_errors=True)
repo = icechunk.Repository.create(icechunk.local_filesystem_storage(path))
s = repo.writable_session("main")
root = zarr.group(store=s.store, attributes={"title": "an example repository"})
a = root.create_array("temp", shape=(3, 4), chunks=(3, 2), dtype="float64",
                      dimension_names=["y", "x"])
a[:] = np.arange(12.0).reshape(3, 4)
first = s.commit("first values")
repo.create_tag("v1", first)
s = repo.writable_session("main")
zarr.open_group(store=s.store)["temp"][0, :] = -1.0
s.commit("first row set to -1")
# Old repo.json versions are kept by icechunk for recovery; the example needs none.
shutil.rmtree(f"{path}/overwritten", ignore_errors=True)
