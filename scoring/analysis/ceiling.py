"""The human ceiling: is a metric as good as one more volunteer?

On pairs with two or more judges, each judgement is compared with the majority of the *other*
judges of its pair (leave one judge out; compared only where they have a strict majority). The
metric's decision on the same pair is compared with the same majority, on the same comparisons,
so both agreements have the same denominator. Intervals: percentile bootstrap over pairs
(a pair's comparisons are drawn together).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scoring.analysis.agreement import leave_one_out_agreement
from scoring.analysis.paired import Interval, count_blocks, percentile_interval


@dataclass(frozen=True)
class CeilingRow:
    """One metric beside the volunteers, on the comparisons where the metric decided."""

    metric: int
    comparisons: int
    pairs: int
    judge_agreement: float | None
    judge_interval: Interval | None
    metric_agreement: float | None
    metric_interval: Interval | None


def human_ceiling(
    pair_index: NDArray[np.int64],
    binary: NDArray[np.int8],
    n_pairs: int,
    metric_ids: list[int],
    predictions: NDArray[np.float64],
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[CeilingRow]:
    """``binary``: each judgement 1/0 (-1 Don't know); ``predictions``: metrics x pairs 1/0/NaN."""
    loo = leave_one_out_agreement(pair_index, binary, n_pairs)
    yes = np.bincount(pair_index[binary == 1], minlength=n_pairs)
    no = np.bincount(pair_index[binary == 0], minlength=n_pairs)
    others_yes = yes[pair_index] - (binary == 1)
    others_no = no[pair_index] - (binary == 0)
    majority = others_yes > others_no
    rows: list[CeilingRow] = []
    for row, metric in enumerate(metric_ids):
        decided = np.isfinite(predictions[row])[pair_index]
        use = loo.compared & decided
        pairs = pair_index[use]
        metric_agrees = (predictions[row][pairs] == 1) == majority[use]
        judge_agrees = loo.agrees[use]
        if not len(pairs):
            rows.append(CeilingRow(metric, 0, 0, None, None, None, None))
            continue
        # Per pair: comparisons, judge agreements, metric agreements (cluster bootstrap unit).
        units, unit_of = np.unique(pairs, return_inverse=True)
        per_pair = np.stack(
            [
                np.bincount(unit_of, minlength=len(units)),
                np.bincount(unit_of, weights=judge_agrees, minlength=len(units)),
                np.bincount(unit_of, weights=metric_agrees, minlength=len(units)),
            ],
            axis=1,
        ).astype(np.float64)
        judge_draws: list[NDArray[np.float64]] = []
        metric_draws: list[NDArray[np.float64]] = []
        for counts in count_blocks(len(units), resamples, seed, salt=7):
            sums = counts @ per_pair
            with np.errstate(divide="ignore", invalid="ignore"):
                judge_draws.append(sums[:, 1] / sums[:, 0])
                metric_draws.append(sums[:, 2] / sums[:, 0])
        rows.append(
            CeilingRow(
                metric=metric,
                comparisons=len(pairs),
                pairs=len(units),
                judge_agreement=float(judge_agrees.mean()),
                judge_interval=percentile_interval(np.concatenate(judge_draws), confidence),
                metric_agreement=float(metric_agrees.mean()),
                metric_interval=percentile_interval(np.concatenate(metric_draws), confidence),
            )
        )
    return rows
