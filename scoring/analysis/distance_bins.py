"""Agreement within bins of lexical distance (Shen et al., EMNLP 2022, section 3.1, figures 1-2).

The pairs with a human reference (a graded value or a binary label) are sorted by their
normalised edit distance between source and hypothesis (character Levenshtein distance divided
by the longer length, the paper's NED of appendix C on characters) and cut into ``bins`` groups
of equal size (the paper uses four; pairs with equal distance at a boundary are split by pair
order so the counts stay equal, sizes differing by at most one). Inside each bin: each metric's Pearson and Spearman
correlation with the graded human scale and its ROC AUC against the binary label, with the
number of pairs each is computed on. The paper's finding: metrics agree less with people when
the hypothesis is lexically far from the source (the last bin).

Read a bin's figure with its count: a correlation over 20 pairs has a wide interval. A
correlation inside a bin can be lower than over all pairs even when every bin agrees well
(Simpson's paradox, as the paper notes: the distance itself carries part of the signal).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from scoring.analysis.binary import rank, roc_auc

DEFAULT_BINS = 4
MAX_BINS = 20
MIN_CORRELATION_PAIRS = 3


@dataclass(frozen=True)
class DistanceBin:
    index: int  # 1-based, from the closest hypotheses
    low: float  # smallest and largest distance in the bin
    high: float
    pairs: int  # pairs with a human reference in the bin


@dataclass(frozen=True)
class BinValue:
    graded_pairs: int  # pairs with a score and a graded value (correlations)
    pearson: float | None
    spearman: float | None
    labelled_pairs: int  # pairs with a score and a binary label (AUC)
    auc: float | None


@dataclass(frozen=True)
class BinMetric:
    metric: int
    values: list[BinValue]  # one per bin


@dataclass(frozen=True)
class DistanceBins:
    requested: int
    bins: list[DistanceBin]
    metrics: list[BinMetric]
    note: str = ""


def equal_count_bins(distance: NDArray[np.float64], bins: int) -> list[NDArray[np.int64]]:
    """Indices of each bin: pairs ranked by distance (ties by position, 1..n), cut at the
    quantiles 1 + (n - 1) k / bins of the ranks, right-closed (``pandas.qcut`` on the ranks)."""
    order = np.argsort(distance, kind="stable")
    n = len(order)
    positions = np.arange(1, n + 1, dtype=np.float64)
    cuts = 1 + (n - 1) * np.arange(1, bins) / bins
    which = np.searchsorted(cuts, positions, side="left")
    return [order[which == k].astype(np.int64) for k in range(bins)]


def _correlations(x: NDArray[np.float64], y: NDArray[np.float64]) -> tuple[float | None, float | None]:
    if len(x) < MIN_CORRELATION_PAIRS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None, None
    return float(stats.pearsonr(x, y).statistic), float(stats.spearmanr(x, y).statistic)


def distance_bins(
    edit_distance: NDArray[np.float64],
    binary: NDArray[np.int8],
    graded: NDArray[np.float64],
    metric_ids: list[int],
    oriented: NDArray[np.float64],
    bins: int = DEFAULT_BINS,
) -> DistanceBins:
    """Per equal-count bin of edit distance: each metric's Pearson, Spearman (graded) and AUC (binary).

    ``oriented``: metrics x pairs, higher = closer (LEV negated), NaN where not scored."""
    if not 2 <= bins <= MAX_BINS:
        raise ValueError(f"bins must be between 2 and {MAX_BINS}, got {bins}")
    referenced = np.flatnonzero(np.isfinite(edit_distance) & (np.isfinite(graded) | (binary >= 0)))
    if len(referenced) < bins:
        note = f"{len(referenced)} pairs with a human reference and an edit distance: too few for {bins} bins."
        return DistanceBins(bins, [], [], note)
    parts = [referenced[part] for part in equal_count_bins(edit_distance[referenced], bins)]
    edges = [
        DistanceBin(index + 1, float(edit_distance[part].min()), float(edit_distance[part].max()), len(part))
        for index, part in enumerate(parts)
    ]
    metrics: list[BinMetric] = []
    for row, metric in enumerate(metric_ids):
        values: list[BinValue] = []
        for part in parts:
            x = oriented[row][part]
            h = graded[part]
            both = np.isfinite(x) & np.isfinite(h)
            pearson, spearman = _correlations(x[both], h[both])
            labelled = np.isfinite(x) & (binary[part] >= 0)
            auc = roc_auc(rank(x[labelled], binary[part][labelled] == 1)) if np.any(labelled) else None
            values.append(
                BinValue(
                    int(np.count_nonzero(both)),
                    pearson,
                    spearman,
                    int(np.count_nonzero(labelled)),
                    None if auc is None or not math.isfinite(auc) else auc,
                )
            )
        metrics.append(BinMetric(metric, values))
    return DistanceBins(bins, edges, metrics)
