"""Ties (Deutsch, Foster & Freitag 2023, "Ties Matter"): Kendall tau_b / tau_c and acc23.

The 4-point human scale ties most pairs of items. tau_b and tau_c (SciPy) treat ties in their
own ways; acc23 counts, over all item pairs, the pairs whose order the metric gets right plus
the pairs tied in both, so a metric that predicts a tie where people tie is rewarded. A metric
with continuous scores almost never ties, hence the tie calibration: differences up to epsilon
count as a metric tie, with the epsilon that maximises acc23 (reported).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

FloatArray = NDArray[np.float64]

# Up to this many items every item pair is counted (~4.5 million pairs); above, a seeded sample
# of SAMPLE_PAIRS item pairs estimates acc23 (and says so).
EXACT_ITEMS = 3000
SAMPLE_PAIRS = 2_000_000


@dataclass(frozen=True)
class TieStatistics:
    """One metric against the graded human scale."""

    n: int
    tau_b: float | None
    tau_c: float | None
    acc23: float | None  # epsilon = 0: only exactly equal scores are metric ties
    acc23_calibrated: float | None
    epsilon: float | None  # in the metric's oriented units
    item_pairs: int  # item pairs counted
    sampled: bool  # True: item pairs are a seeded random sample
    human_tied_share: float | None  # share of item pairs tied in the human scale


@dataclass(frozen=True)
class Acc23Sweep:
    """acc23 at every candidate epsilon (0 and each distinct |difference|)."""

    epsilons: FloatArray
    accuracy: FloatArray

    @property
    def best(self) -> tuple[float, float]:
        index = int(np.argmax(self.accuracy))  # first maximum: the smallest epsilon
        return float(self.epsilons[index]), float(self.accuracy[index])


def item_pairs(n: int, seed: int = 0) -> tuple[NDArray[np.int64], NDArray[np.int64], bool]:
    """Every i < j when n <= EXACT_ITEMS, else a seeded sample of SAMPLE_PAIRS pairs i != j."""
    if n <= EXACT_ITEMS:
        first, second = np.triu_indices(n, k=1)
        return first.astype(np.int64), second.astype(np.int64), False
    rng = np.random.default_rng([seed, n, 23])
    first = rng.integers(0, n, SAMPLE_PAIRS)
    second = (first + rng.integers(1, n, SAMPLE_PAIRS)) % n  # never equal to first
    return first, second, True


def acc23_sweep(
    metric: FloatArray, human: FloatArray, first: NDArray[np.int64], second: NDArray[np.int64]
) -> Acc23Sweep:
    """acc23(eps) = (human-tied pairs with |dm| <= eps + concordant untied pairs with |dm| > eps) / pairs."""
    dm = metric[first] - metric[second]
    dh = human[first] - human[second]
    total = len(dm)
    gap = np.abs(dm)
    tied = dh == 0
    concordant = ~tied & (np.sign(dm) == np.sign(dh))
    order = np.argsort(gap, kind="stable")
    gap_sorted = gap[order]
    candidates = np.unique(gap_sorted)
    # For each candidate eps: pairs with |dm| <= eps are the first searchsorted(..., right).
    through = np.searchsorted(gap_sorted, candidates, "right")
    tied_through = np.concatenate(([0], np.cumsum(tied[order])))[through]
    concordant_through = np.concatenate(([0], np.cumsum(concordant[order])))[through]
    accuracy = (tied_through + (concordant.sum() - concordant_through)) / total
    if candidates[0] != 0:  # eps = 0 with no exactly tied scores
        candidates = np.concatenate(([0.0], candidates))
        accuracy = np.concatenate(([concordant.sum() / total], accuracy))
    return Acc23Sweep(candidates, accuracy)


def tie_statistics(metric: FloatArray, human: FloatArray, seed: int = 0) -> TieStatistics:
    """tau_b, tau_c, acc23 and calibrated acc23 of oriented ``metric`` against ``human``
    (pairs where both are finite)."""
    keep = np.isfinite(metric) & np.isfinite(human)
    x, y = metric[keep], human[keep]
    n = len(x)
    if n < 2:
        return TieStatistics(n, None, None, None, None, None, 0, False, None)
    constant = np.all(x == x[0]) or np.all(y == y[0])
    tau_b = None if constant else float(stats.kendalltau(x, y, variant="b").statistic)
    tau_c = None if constant else float(stats.kendalltau(x, y, variant="c").statistic)
    first, second, sampled = item_pairs(n, seed)
    sweep = acc23_sweep(x, y, first, second)
    epsilon, best = sweep.best
    return TieStatistics(
        n=n,
        tau_b=tau_b,
        tau_c=tau_c,
        acc23=float(sweep.accuracy[0]),
        acc23_calibrated=best,
        epsilon=epsilon,
        item_pairs=len(first),
        sampled=sampled,
        human_tied_share=float(np.mean(y[first] == y[second])),
    )
