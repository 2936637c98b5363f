"""A pytest plugin that keeps one shard of the collected tests, so that a
test file too long for one run (Thunder's test_ops.py on a GPU machine
lent in runs of minutes, tools/gpu_thunder.sh) runs in several:

    PYTEST_SHARD=k/n python3 -m pytest -p pytest_shard ...   (tools/ on
                                                              PYTHONPATH)

keeps the tests whose node id hashes (CRC-32) to k modulo n, 0 <= k < n:
the same tests in every run, on every executor (the node id names the
test, not the executor's module). Without PYTEST_SHARD it keeps all."""

import os
import zlib


def shard_of(nodeid, count):
    return zlib.crc32(nodeid.encode()) % count


def parse_shard(text):
    """(k, n) from "k/n"; a ValueError names what is wrong."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"PYTEST_SHARD must be k/n (e.g. 0/3); got {text!r}") from None
    if n < 1 or not 0 <= k < n:
        raise ValueError(f"PYTEST_SHARD k/n needs 0 <= k < n; got {text!r}")
    return k, n


def pytest_collection_modifyitems(config, items):
    text = os.environ.get("PYTEST_SHARD")
    if not text:
        return
    k, n = parse_shard(text)
    kept = [item for item in items if shard_of(item.nodeid, n) == k]
    dropped = [item for item in items if shard_of(item.nodeid, n) != k]
    items[:] = kept
    if dropped:
        config.hook.pytest_deselected(items=dropped)
