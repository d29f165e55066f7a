"""Test-only metrics, loaded by the tests AND by the worker processes they start.

A worker imports this module because its environment names it in ``PARAEVAL_METRIC_PLUGINS``
(the same mechanism an operator uses for an extra metric); production code has no test switch.

* ``test_slow`` sleeps ``PARAEVAL_TEST_SLOW_SECONDS`` per pair (so a worker can be caught busy)
  and, when ``PARAEVAL_TEST_MARKER_DIR`` is set, writes a file naming the pairs of each batch
  before it starts sleeping.
* ``test_picky`` refuses any pair whose source contains ``FAIL`` (a per-pair error).
* ``test_unavailable`` cannot run at all (``MetricUnavailable``).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any, ClassVar

from scoring.metrics.base import Metric, MetricUnavailable, Pair


class SlowMetric(Metric):
    name: ClassVar[str] = "test_slow"
    queue = "llm"
    description = "Length difference, slowly (tests only)."

    def __init__(self) -> None:
        self.seconds = float(os.environ.get("PARAEVAL_TEST_SLOW_SECONDS", "0.05"))

    def config(self) -> dict[str, Any]:
        return {"seconds_per_pair": self.seconds}

    def _score(self, pairs: list[Pair]) -> list[float]:
        marker_dir = os.environ.get("PARAEVAL_TEST_MARKER_DIR")
        if marker_dir:
            marker = {"pid": os.getpid(), "sources": [source for source, _ in pairs], "started": time.time()}
            Path(marker_dir, f"{uuid.uuid4().hex}.json").write_text(json.dumps(marker))
        time.sleep(self.seconds * len(pairs))
        return [float(len(hypothesis) - len(source)) for source, hypothesis in pairs]


class PickyMetric(Metric):
    name: ClassVar[str] = "test_picky"
    description = "Word count of the hypothesis; refuses sources containing FAIL (tests only)."

    def _score(self, pairs: list[Pair]) -> list[float]:
        for source, _ in pairs:
            if "FAIL" in source:
                raise ValueError(f"cannot score {source!r}")
        return [float(len(hypothesis.split())) for _, hypothesis in pairs]


class NeverAvailableMetric(Metric):
    name: ClassVar[str] = "test_unavailable"
    queue = "llm"
    description = "Always unavailable (tests only)."

    def check_available(self) -> None:
        raise MetricUnavailable("model file /nowhere/model.gguf is missing")

    def _score(self, pairs: list[Pair]) -> list[float]:  # pragma: no cover - never reached
        raise AssertionError("unavailable metrics are never asked to score")


METRICS = {"test_slow": SlowMetric, "test_picky": PickyMetric, "test_unavailable": NeverAvailableMetric}
