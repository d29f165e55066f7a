"""A file cache shared by every web process, whose counters are exact across processes.

Rate limits need one counter per client address that all gunicorn workers see: Redis when
``REDIS_URL`` is set, otherwise this cache in the data folder. Django's ``FileBasedCache``
is shared but its ``add``/``incr`` read then write, so two processes can lose an increment;
here both hold an exclusive ``flock`` on one lock file (hand-written: no maintained package
offers a cross-process file cache, and the lock is a few lines).
"""

from __future__ import annotations

import fcntl
import os
import pickle
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.filebased import FileBasedCache


class SharedFileCache(FileBasedCache):
    """``FileBasedCache`` with ``add`` and ``incr`` atomic across processes."""

    # Private helpers of Django's FileBasedCache that this subclass builds on (not in the stubs).
    _dir: str
    _createdir: Any
    _key_to_file: Any

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self._createdir()
        with open(os.path.join(self._dir, "counters.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def add(self, key: str, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        with self._locked():
            return super().add(key, value, timeout, version)

    def incr(self, key: str, delta: int = 1, version: int | None = None) -> int:
        # BaseCache.incr re-sets the entry with the cache's default timeout: a rate-limit
        # window would then end early whenever no request came for that long. Keep the expiry.
        with self._locked():
            fname = self._key_to_file(key, version)
            try:
                with open(fname, "rb") as handle:
                    expiry = pickle.load(handle)
                    if expiry is not None and expiry < time.time():
                        raise FileNotFoundError
                    value = pickle.loads(zlib.decompress(handle.read())) + delta
            except FileNotFoundError:
                raise ValueError(f"Key '{key}' not found") from None
            timeout = None if expiry is None else max(expiry - time.time(), 0.001)
            self.set(key, value, timeout, version)
            return int(value)
