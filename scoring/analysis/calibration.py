"""Calibration of a log-odds metric (ParaPLUIE): its score read as p(paraphrase) = 1 / (1 + e^-score).

Reliability diagram over equal-width bins of p, expected calibration error
ECE = sum_b (n_b / n) |mean label_b - mean p_b| and Brier score mean (p - label)^2, against the
human binary label.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

DEFAULT_BINS = 10


@dataclass(frozen=True)
class ReliabilityBin:
    low: float
    high: float
    n: int
    mean_probability: float | None
    paraphrase_share: float | None


@dataclass(frozen=True)
class Calibration:
    n: int
    ece: float
    brier: float
    bins: list[ReliabilityBin]


def calibration(scores: NDArray[np.float64], labels: NDArray[np.bool_], bins: int = DEFAULT_BINS) -> Calibration | None:
    """Reliability, ECE and Brier of ``scores`` (log-odds, finite) against ``labels``; None when empty."""
    n = len(scores)
    if n == 0:
        return None
    p = expit(scores)
    truth = labels.astype(np.float64)
    edges = np.linspace(0.0, 1.0, bins + 1)
    # Bin b holds edges[b] <= p < edges[b+1]; p = 1 goes to the last bin.
    which = np.minimum(np.searchsorted(edges, p, side="right") - 1, bins - 1)
    rows: list[ReliabilityBin] = []
    ece = 0.0
    for b in range(bins):
        inside = which == b
        count = int(np.count_nonzero(inside))
        mean_p = float(p[inside].mean()) if count else None
        share = float(truth[inside].mean()) if count else None
        if count:
            ece += count / n * abs(share - mean_p)  # type: ignore[operator]
        rows.append(ReliabilityBin(float(edges[b]), float(edges[b + 1]), count, mean_p, share))
    return Calibration(n=n, ece=float(ece), brier=float(np.mean((p - truth) ** 2)), bins=rows)
