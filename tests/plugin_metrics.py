"""Badly behaved plug-in metrics (tests only), declared under ``paraeval.metrics`` by a
``.dist-info`` the plug-in tests write (see ``tests/test_metric_plugins.py``)."""

from __future__ import annotations

import os
import re
import time
from typing import ClassVar

from scoring.metrics.base import Metric, Pair


class Raising(Metric):
    name: ClassVar[str] = "test_raising"
    queue: ClassVar[str] = "example"

    def _score(self, pairs: list[Pair]) -> list[float]:
        raise RuntimeError("boom on purpose")


class Miscounting(Metric):
    name: ClassVar[str] = "test_miscounting"
    queue: ClassVar[str] = "example"

    def _score(self, pairs: list[Pair]) -> list[float]:
        return [1.0] * (len(pairs) + 1)


class Misnamed(Metric):
    name: ClassVar[str] = "not_its_entry_point_name"

    def _score(self, pairs: list[Pair]) -> list[float]:
        return [0.0] * len(pairs)


class NonFinite(Metric):
    """For the pair whose source holds the number n: NaN when n % 3 == 0, infinity when n % 3 == 1, else n."""

    name: ClassVar[str] = "test_nonfinite"
    queue: ClassVar[str] = "example"

    def _score(self, pairs: list[Pair]) -> list[float]:
        numbers = [int(re.findall(r"\d+", source)[0]) for source, _ in pairs]
        return [float("nan") if n % 3 == 0 else float("inf") if n % 3 == 1 else float(n) for n in numbers]


class NotANumber(Metric):
    name: ClassVar[str] = "test_not_a_number"
    queue: ClassVar[str] = "example"

    def _score(self, pairs: list[Pair]) -> list[float]:
        return ["high" for _ in pairs]  # type: ignore[misc]


class Exiting(Metric):
    """Ends its process, as a plug-in with a fatal native crash or a stray ``sys.exit`` in a C
    extension would: only ever computed by a worker process, never in the test process."""

    name: ClassVar[str] = "test_exiting"
    queue: ClassVar[str] = "example"

    def _score(self, pairs: list[Pair]) -> list[float]:
        os._exit(3)


class Sleeping(Metric):
    """Never answers (a plug-in waiting on a server that does not reply)."""

    name: ClassVar[str] = "test_sleeping"
    queue: ClassVar[str] = "example"

    def _score(self, pairs: list[Pair]) -> list[float]:
        time.sleep(3600)
        return [0.0] * len(pairs)
