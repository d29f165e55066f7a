"""The human ceiling: is a metric as good as one more volunteer?

On pairs with two or more judges, each judgement is compared with the majority of the *other*
judges of its pair (leave one judge out; compared only where they have a strict majority). The
metric's decision on the same pair is compared with the same majority, on the same comparisons,
so both agreements have the same denominator. Intervals: percentile bootstrap over pairs
(a pair's comparisons are drawn together) and, when the judge of each judgement is given, over
judges as well (a crossed bootstrap: pairs and judges drawn independently with replacement,
each comparison weighted by how often its pair times how often its judge was drawn; the
majority of the others stays as observed). Resampling judges says how much the figures depend
on who happened to volunteer, not only on which pairs were drawn.
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
    judge: NDArray[np.int64] | None = None,
) -> list[CeilingRow]:
    """``binary``: each judgement 1/0 (-1 Don't know); ``predictions``: metrics x pairs 1/0/NaN;
    ``judge``: the volunteer of each judgement (None: the interval resamples pairs only)."""
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
        if judge is not None:
            judge_draws, metric_draws = _crossed_draws(
                unit_of, judge[use], judge_agrees, metric_agrees, len(units), resamples, seed
            )
        else:
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


def _crossed_draws(
    unit_of: NDArray[np.int64],
    judges: NDArray[np.int64],
    judge_agrees: NDArray[np.bool_],
    metric_agrees: NDArray[np.bool_],
    n_units: int,
    resamples: int,
    seed: int,
) -> tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]:
    """Bootstrap agreements with pairs and judges drawn independently (weights = product of counts)."""
    _, judge_of = np.unique(judges, return_inverse=True)
    n_judges = int(judge_of.max()) + 1
    judge_values = judge_agrees.astype(np.float64)
    metric_values = metric_agrees.astype(np.float64)
    judge_draws: list[NDArray[np.float64]] = []
    metric_draws: list[NDArray[np.float64]] = []
    for block, counts in enumerate(count_blocks(n_units, resamples, seed, salt=7)):
        rng = np.random.default_rng([seed, n_judges, 7, block, 2])
        judge_counts = rng.multinomial(n_judges, np.full(n_judges, 1 / n_judges), size=len(counts)).astype(np.float64)
        weights = counts[:, unit_of] * judge_counts[:, judge_of]
        total = weights.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            judge_draws.append(weights @ judge_values / total)
            metric_draws.append(weights @ metric_values / total)
    return judge_draws, metric_draws
