"""boto3 sessions that share one botocore data loader in the process.

A new boto3 session reads the service's model and endpoint rules (large JSON files) again for its first
client: about 0.1-0.2 s each time. Exports create a client per task, so every task paid it; with the loader
shared, the files are read once per process (botocore's loader caches what it loaded). Credentials, region
and configuration stay each session's own.
"""

from __future__ import annotations

import threading

import boto3
import botocore.loaders
import botocore.session

_LOADER: botocore.loaders.Loader | None = None
_LOADER_LOCK = threading.Lock()


def _shared_loader() -> botocore.loaders.Loader:
    global _LOADER
    with _LOADER_LOCK:
        if _LOADER is None:
            _LOADER = botocore.loaders.create_loader()
        return _LOADER


def new_botocore_session(**kwargs) -> botocore.session.Session:
    """A botocore session (``kwargs``: e.g. ``profile``) reading service models through the shared loader."""
    session = botocore.session.Session(**kwargs)
    session.register_component("data_loader", _shared_loader())
    return session


def new_boto3_session(botocore_session: botocore.session.Session | None = None) -> boto3.session.Session:
    """A boto3 session over ``botocore_session`` (default: a new one with the default credentials chain)."""
    return boto3.session.Session(botocore_session=botocore_session or new_botocore_session())
