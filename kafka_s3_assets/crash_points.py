"""Named points where the fault-injection tests kill an export with SIGKILL.

The exactly-once promise is "crash anywhere, rerun, same result"; proving it needs a crash at each
step of the commit protocol, at exactly that step, in a real process talking to the real servers.
Setting ``KAFKA_S3_ASSETS_CRASH_AT=<point>[:<n>]`` in an export process's environment makes it kill
itself (SIGKILL: no cleanup, no ``finally``) the ``n``-th time (default: first) it reaches ``<point>``.
Unset, a crash point costs one dictionary lookup; code that would pass a point once per record asks
``armed(point)`` once per batch instead, and takes the record-by-record way only when it is armed.

With ``KAFKA_S3_ASSETS_PAUSE_FILE=<path>`` set as well, the process pauses there instead of dying: it
creates ``<path>.reached`` and waits until ``<path>`` is removed. The concurrency tests use this to
stop one export at a known step while another one starts.

Points, in the order an export meets them:

* ``before_lease``: where to resume was looked up, the topic-partition's lease is not taken yet (another export may
  commit in between);
* ``record_read``: a record was read from Kafka (before it is written);
* ``part_uploaded``: a multipart upload's part is stored, the upload is not complete;
* ``object_completing``: the request that makes an object visible (its PutObject or
  CompleteMultipartUpload) is about to be sent, the export's lease just checked;
* ``object_stored``: an object is complete in S3 (more objects of the batch may follow);
* ``before_manifest``: every object of a batch is stored, its manifest is not written;
* ``after_manifest``: the manifest is written; the pointer to it (``ledger.pointer``) is not
  updated and the consumer-group offset is not committed;
* ``before_release``: everything is committed, the export's lease on the partition is not released;
* ``before_table_commit``: on the driver, after the export's manifests: the Iceberg table's commit
  registering them is built, not committed (``iceberg.sync``).
"""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path

CRASH_AT_ENV = "KAFKA_S3_ASSETS_CRASH_AT"
PAUSE_FILE_ENV = "KAFKA_S3_ASSETS_PAUSE_FILE"
POINTS = (
    "before_lease",
    "record_read",
    "part_uploaded",
    "object_completing",
    "object_stored",
    "before_manifest",
    "after_manifest",
    "before_release",
    "before_table_commit",
)

_reached: Counter[str] = Counter()


def armed(point: str) -> bool:
    """Whether ``point`` is the one this process is set to crash (or pause) at."""
    spec = os.environ.get(CRASH_AT_ENV)
    if not spec:
        return False
    return spec.partition(":")[0] == point


def crash_point(point: str) -> None:
    spec = os.environ.get(CRASH_AT_ENV)
    if not spec:
        return
    target, _, nth = spec.partition(":")
    if target != point:
        return
    _reached[point] += 1
    if _reached[point] != int(nth or 1):
        return
    pause_file = os.environ.get(PAUSE_FILE_ENV)
    if not pause_file:
        os.kill(os.getpid(), signal.SIGKILL)
        return
    Path(pause_file + ".reached").touch()
    while Path(pause_file).exists():  # released by the test removing the file
        time.sleep(0.01)
