"""Badly behaved plug-in metrics (tests only), declared under ``paraeval.metrics`` by a
``.dist-info`` the plug-in tests write (see ``tests/test_metric_plugins.py``)."""

from __future__ import annotations

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
