"""Icechunk repositories for tests/testthat/test-icechunk.R, written and
read back with icechunk-python 2.3 (the venv of helper-icechunk.R).

    python icechunk_repos.py make OUT HTTP_URL
        OUT/files/data.bin    float64 0, 1, ..., 63 (little-endian), the
                              target of the virtual chunks
        OUT/repo/             the repository (below); HTTP_URL is a server
                              serving OUT/files/ ("http://127.0.0.1:PORT/")
        prints JSON: the snapshot ids of the commits and refs

      main, commit 1 "first":  group /, int32 array /temp (6 x 4, chunks
                               3 x 2) = 0..23 in C order; tag v1 here
      dev (from commit 1):     /temp * 10, commit "dev work"
      main, commit 2 "second": /temp + 100, array /sharded (int16 8 x 8,
                               shards 4 x 8 of 2 x 2 chunks) = 0..63,
                               /virt (float64 16, chunks 4) whose chunks
                               are byte ranges of data.bin (file://),
                               /virt_http (float64 8, chunks 4) of
                               data.bin through HTTP_URL

    python icechunk_repos.py write URL
        the repository of "make" without virtual chunks at URL: a folder,
        s3://BUCKET/PREFIX (the endpoint and keys from the environment, as
        the S3 tests set them: moto), az://CONTAINER/PREFIX (Azurite, the
        environment of helper-azure.R) or gs://BUCKET/PREFIX (the service
        account file of GOOGLE_SERVICE_ACCOUNT); prints JSON as "make"

    python icechunk_repos.py read URL BRANCH PATH
        prints JSON: the branch's history (id, message), the branches and
        tags, and the array at PATH (shape, values in C order); URL as for
        "write"
"""

import json
import os
import sys

import icechunk
import numpy as np
import zarr


def containers_config(out, http_url):
    config = icechunk.RepositoryConfig.default()
    config.set_virtual_chunk_container(
        icechunk.VirtualChunkContainer(
            f"file://{out}/files/", icechunk.local_filesystem_store(f"{out}/files/")
        )
    )
    config.set_virtual_chunk_container(
        icechunk.VirtualChunkContainer(http_url, icechunk.http_store())
    )
    return config


def make(out, http_url):
    import os

    os.makedirs(f"{out}/files", exist_ok=True)
    np.arange(64, dtype="<f8").tofile(f"{out}/files/data.bin")
    storage = icechunk.local_filesystem_storage(f"{out}/repo")
    repo = icechunk.Repository.create(storage, config=containers_config(out, http_url))
    ids = {}

    s = repo.writable_session("main")
    root = zarr.group(store=s.store)
    a = root.create_array("temp", shape=(6, 4), chunks=(3, 2), dtype="int32", fill_value=-1)
    a[:] = np.arange(24, dtype="int32").reshape(6, 4)
    ids["first"] = s.commit("first")
    repo.create_tag("v1", ids["first"])

    repo.create_branch("dev", ids["first"])
    s = repo.writable_session("dev")
    a = zarr.open_group(store=s.store)["temp"]
    a[:] = np.arange(24, dtype="int32").reshape(6, 4) * 10
    ids["dev"] = s.commit("dev work")

    s = repo.writable_session("main")
    root = zarr.open_group(store=s.store)
    root["temp"][:] = np.arange(24, dtype="int32").reshape(6, 4) + 100
    sh = root.create_array("sharded", shape=(8, 8), shards=(4, 8), chunks=(2, 2), dtype="int16",
                           fill_value=-1)
    sh[:] = np.arange(64, dtype="int16").reshape(8, 8)
    root.create_array("virt", shape=(16,), chunks=(4,), dtype="<f8", compressors=None,
                      fill_value=-1.0)
    # chunk i holds data.bin's values 10 + 4 i ... 13 + 4 i
    for i in range(4):
        s.store.set_virtual_ref(f"virt/c/{i}", f"file://{out}/files/data.bin",
                                offset=(10 + 4 * i) * 8, length=32)
    root.create_array("virt_http", shape=(8,), chunks=(4,), dtype="<f8", compressors=None)
    for i in range(2):
        s.store.set_virtual_ref(f"virt_http/c/{i}", f"{http_url}data.bin",
                                offset=(40 + 4 * i) * 8, length=32)
    ids["second"] = s.commit("second")
    print(json.dumps(ids))


def storage_of(url):
    """The icechunk storage of a folder or an s3://, az:// or gs:// URL."""
    scheme, _, rest = url.partition("://")
    if not rest:
        return icechunk.local_filesystem_storage(url)
    bucket, _, prefix = rest.partition("/")
    env = os.environ.get
    if scheme == "s3":
        return icechunk.s3_storage(bucket=bucket, prefix=prefix, endpoint_url=env("AWS_ENDPOINT_URL"),
                                   allow_http=True, region="us-east-1", force_path_style=True,
                                   access_key_id=env("AWS_ACCESS_KEY_ID", "testing"),
                                   secret_access_key=env("AWS_SECRET_ACCESS_KEY", "testing"))
    if scheme == "az":
        # Azurite's account and key; its address from AZURITE_BLOB_STORAGE_URL
        return icechunk.azure_storage(account="devstoreaccount1", container=bucket, prefix=prefix,
                                      access_key=os.environ["ZARR_TEST_AZURITE_KEY"],
                                      config={"azure_storage_use_emulator": "true"})
    if scheme == "gs":
        return icechunk.gcs_storage(bucket=bucket, prefix=prefix,
                                    service_account_file=os.environ["GOOGLE_SERVICE_ACCOUNT"],
                                    config={"allow_http": "true"})
    raise ValueError(f"unknown storage {url}")


def write(url):
    repo = icechunk.Repository.create(storage_of(url))
    ids = {}
    s = repo.writable_session("main")
    root = zarr.group(store=s.store)
    a = root.create_array("temp", shape=(6, 4), chunks=(3, 2), dtype="int32", fill_value=-1)
    a[:] = np.arange(24, dtype="int32").reshape(6, 4)
    ids["first"] = s.commit("first")
    repo.create_tag("v1", ids["first"])
    repo.create_branch("dev", ids["first"])
    s = repo.writable_session("dev")
    zarr.open_group(store=s.store)["temp"][:] = np.arange(24, dtype="int32").reshape(6, 4) * 10
    ids["dev"] = s.commit("dev work")
    s = repo.writable_session("main")
    zarr.open_group(store=s.store)["temp"][:] = np.arange(24, dtype="int32").reshape(6, 4) + 100
    ids["second"] = s.commit("second")
    print(json.dumps(ids))


def read(url, branch, array):
    repo = icechunk.Repository.open(storage_of(url))
    history = [{"id": s.id, "message": s.message} for s in repo.ancestry(branch=branch)]
    s = repo.readonly_session(branch=branch)
    a = zarr.open_array(store=s.store, path=array, mode="r")
    print(json.dumps({
        "history": history,
        "branches": sorted(repo.list_branches()),
        "tags": sorted(repo.list_tags()),
        "shape": list(a.shape),
        "values": a[...].ravel().tolist(),
    }))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        read(sys.argv[2], sys.argv[3], sys.argv[4])
