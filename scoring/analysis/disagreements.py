"""A metric's worst disagreements with the people: the pairs a researcher should read first.

A paraphrase the metric places among the farthest pairs, or a non-paraphrase it places among
the closest, is a disagreement. The place is the score's **closeness rank** among the scored
pairs: 0 the farthest, 1 the closest, by the metric's own direction (a distance such as LEV or
WER is read the other way round), so every metric's scale will do. Equal scores share their
mean rank. The disagreement is ``1 - rank`` for a paraphrase and ``rank`` for a
non-paraphrase: 1 is the worst.

Used by the pair list (``scoring.reports.pair_pages``) and the dashboard's report (``report``), so
both list the same pairs in the same order for the same labels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import rankdata


@dataclass(frozen=True)
class Disagreement:
    """One pair, by its position in the arrays given."""

    index: int
    paraphrase: bool  # the people's verdict
    score: float
    rank: float  # closeness rank among the scored pairs: 0 the farthest, 1 the closest
    disagreement: float  # 1 - rank for a paraphrase, rank for a non-paraphrase


def closeness_ranks(scores: NDArray[np.float64], higher_is_closer: bool) -> NDArray[np.float64]:
    """Each finite score's closeness rank in [0, 1] (NaN where the score is not finite).

    Mean ranks for ties; a single scored pair has rank 1 when higher is closer (0 otherwise),
    as it is at once the lowest and the highest.
    """
    ranks = np.full(len(scores), np.nan)
    scored = np.isfinite(scores)
    count = int(np.count_nonzero(scored))
    if count:
        ascending = (rankdata(scores[scored], method="average") - 1) / max(1, count - 1)
        ranks[scored] = ascending if higher_is_closer else 1 - ascending
    return ranks


def worst_disagreements(
    scores: NDArray[np.float64],
    binary: NDArray[np.int8],
    higher_is_closer: bool,
    limit: int,
) -> list[Disagreement]:
    """The ``limit`` pairs that disagree most, worst first (ties by position).

    ``binary`` is the people's verdict per pair: 1 paraphrase, 0 not, -1 none (a tie, Don't
    know only, no judgement: left out). Pairs without a finite score are left out, and the ranks
    are taken among every scored pair, labelled or not.
    """
    ranks = closeness_ranks(scores, higher_is_closer)
    candidates = np.flatnonzero(np.isfinite(ranks) & (binary >= 0))
    if not len(candidates) or limit <= 0:
        return []
    paraphrase = binary[candidates] == 1
    values = np.where(paraphrase, 1 - ranks[candidates], ranks[candidates])
    order = np.lexsort((candidates, -values))[:limit]  # worst first, then by position
    return [
        Disagreement(
            index=int(candidates[i]),
            paraphrase=bool(paraphrase[i]),
            score=float(scores[candidates[i]]),
            rank=float(ranks[candidates[i]]),
            disagreement=float(values[i]),
        )
        for i in order
    ]


__all__ = ["Disagreement", "closeness_ranks", "worst_disagreements"]
