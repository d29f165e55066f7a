"""The human reference of every pair: the volunteers' verdict or an imported gold label.

Volunteers: :func:`annotate.aggregation.verdict` summarises the campaign judgements of a pair
(the caller leaves training answers out). Very different / Slightly similar are
non-paraphrases, Mostly similar / Same meaning paraphrases, Don't know carries no label; with
several judges the majority decides, a tie gives no binary label (reported, and excluded from
the binary analyses), and the mean of the ordinal 1-4 scale is kept for correlations.

Gold: ``Pair.gold_label`` (MRPC, PAWS) as the binary label and ``Pair.gold_score`` (e.g. STS
0-5) as the graded value, so the same analyses reproduce the paper's corpus tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray

from annotate.aggregation import verdict
from annotate.labels import LABEL_ORDER, Label

# Label codes used in the arrays: the position in LABEL_ORDER (Don't know = 4).
LABEL_CODES: dict[str, int] = {label.value: index for index, label in enumerate(LABEL_ORDER)}
DONT_KNOW_CODE = LABEL_CODES[Label.DONT_KNOW.value]
# Ordinal value (1-4) of each code, 0 for Don't know; binary reading (1/0, -1 Don't know).
ORDINAL_OF_CODE = np.array([1, 2, 3, 4, 0], dtype=np.int64)
BINARY_OF_CODE = np.array([0, 0, 1, 1, -1], dtype=np.int8)


class Reference(StrEnum):
    """Where the pair labels come from."""

    VOLUNTEERS = "volunteers"
    GOLD = "gold"


@dataclass(frozen=True)
class HumanLabels:
    """Per pair: binary label (1 paraphrase, 0 not, -1 none), tie flag and graded value."""

    binary: NDArray[np.int8]
    tie: NDArray[np.bool_]
    graded: NDArray[np.float64]  # mean ordinal 1-4 (volunteers) or gold score; NaN when none
    judgements: NDArray[np.int64]  # counted judgements of the pair, Don't know included
    dont_know: NDArray[np.int64]

    @property
    def labelled(self) -> NDArray[np.bool_]:
        return self.binary >= 0

    def counts(self, subset: NDArray[np.bool_] | None = None) -> LabelCounts:
        """How many pairs are paraphrases, non-paraphrases, ties, Don't know only, unjudged."""
        keep = np.ones(len(self.binary), dtype=bool) if subset is None else subset
        judged = self.judgements > 0
        return LabelCounts(
            pairs=int(np.count_nonzero(keep)),
            labelled=int(np.count_nonzero(keep & (self.binary >= 0))),
            paraphrases=int(np.count_nonzero(keep & (self.binary == 1))),
            non_paraphrases=int(np.count_nonzero(keep & (self.binary == 0))),
            ties=int(np.count_nonzero(keep & self.tie)),
            dont_know_only=int(np.count_nonzero(keep & judged & (self.judgements == self.dont_know))),
            unjudged=int(np.count_nonzero(keep & ~judged)),
        )


@dataclass(frozen=True)
class LabelCounts:
    """Pairs by their reference label (a pair is in one of the last five at most)."""

    pairs: int
    labelled: int
    paraphrases: int
    non_paraphrases: int
    ties: int
    dont_know_only: int
    unjudged: int


def volunteer_labels(
    n_pairs: int, pair_index: Sequence[int] | NDArray[np.int64], codes: Sequence[int] | NDArray[np.int64]
) -> HumanLabels:
    """Labels from campaign judgements given as (pair index, label code) rows.

    A pair's verdict depends only on how many judges gave each answer, so
    :func:`annotate.aggregation.verdict` is called once per distinct combination of counts
    (a few dozen at most) rather than once per pair, and its answer spread to every pair
    with those counts.
    """
    index = np.asarray(pair_index, dtype=np.int64)
    code = np.asarray(codes, dtype=np.int64)
    counts = np.bincount(index * len(LABEL_ORDER) + code, minlength=n_pairs * len(LABEL_ORDER)).reshape(
        n_pairs, len(LABEL_ORDER)
    )
    binary = np.full(n_pairs, -1, dtype=np.int8)
    tie = np.zeros(n_pairs, dtype=bool)
    graded = np.full(n_pairs, np.nan)
    judged = counts.sum(axis=1) > 0
    if np.any(judged):
        combinations, which = np.unique(counts[judged], axis=0, return_inverse=True)
        names = [label.value for label in LABEL_ORDER]
        outcome_binary = np.full(len(combinations), -1, dtype=np.int8)
        outcome_tie = np.zeros(len(combinations), dtype=bool)
        outcome_graded = np.full(len(combinations), np.nan)
        for row, combination in enumerate(combinations.tolist()):
            summary = verdict(name for name, count in zip(names, combination, strict=True) for _ in range(count))
            if summary.is_paraphrase is not None:
                outcome_binary[row] = 1 if summary.is_paraphrase else 0
            outcome_tie[row] = summary.binary_tie
            if summary.mean_ordinal is not None:
                outcome_graded[row] = summary.mean_ordinal
        which = which.ravel()
        binary[judged] = outcome_binary[which]
        tie[judged] = outcome_tie[which]
        graded[judged] = outcome_graded[which]
    return HumanLabels(
        binary=binary,
        tie=tie,
        graded=graded,
        judgements=counts.sum(axis=1).astype(np.int64),
        dont_know=counts[:, DONT_KNOW_CODE].astype(np.int64),
    )


def gold_labels(
    gold_label: NDArray[np.float64],
    gold_score: NDArray[np.float64],
    judgements: NDArray[np.int64],
    dont_know: NDArray[np.int64],
) -> HumanLabels:
    """Labels from imported gold: ``gold_label`` 1/0/NaN, ``gold_score`` graded or NaN."""
    label = np.asarray(gold_label, dtype=np.float64)
    binary = np.where(np.isnan(label), -1, label).astype(np.int8)
    return HumanLabels(
        binary=binary,
        tie=np.zeros(len(binary), dtype=bool),
        graded=np.asarray(gold_score, dtype=np.float64),
        judgements=np.asarray(judgements, dtype=np.int64),
        dont_know=np.asarray(dont_know, dtype=np.int64),
    )
