"""Intervals that resample the volunteers as well as the pairs (a two-way bootstrap).

The pairs-only bootstrap (:mod:`.bootstrap`) answers: how much would a figure move with other
pairs judged by *these* volunteers? It treats every pair's human label as fixed. When the
conclusion is about volunteers *like them* (another campaign, another crowd), who happened to
volunteer is a second source of chance: a volunteer swayed by word overlap, say, pulls the
labels of every pair they judged the same way.

The scheme: the two-way random-effects ("pigeonhole", or "double") bootstrap, pairs and volunteers
drawn independently as in the human ceiling (:mod:`.ceiling`, which weights each comparison by the
product of the draws; here the volunteer draws weight the judgements *inside* each pair's label,
and the pair draws weight the pairs). The pairs a replicate draws from are those with a graded
judgement (a tie may become a label, and the reverse). Each replicate draws

1. the pairs, with replacement (as in the pairs-only bootstrap), and, independently,
2. the volunteers, with replacement;

then recomputes every pair's human label and graded score from its judgements, each weighted by
how many times its volunteer was drawn (the same aggregation as the dashboard,
:func:`annotate.aggregation.verdict`: the majority of the yes / no answers, a tie gives no
label, Don't know carries none, the graded score is the mean of the 1-4 answers), and recomputes
the statistic on the drawn pairs with those labels. A pair none of whose volunteers was drawn
keeps its observed label: the pair draw decides whether a pair counts, the volunteer draw only
whose opinion its label follows. So with one judgement per pair the labels never change and the
two variants coincide: a volunteer's effect cannot be told apart from the pair's there (a nested
design; such a campaign says nothing about rater effects, and this variant does not invent them).

Known conservativeness: no bootstrap reproduces the variance of a crossed random-effects design
exactly (McCullagh 2000); resampling both factors counts the judgement-level noise twice, once
through the pairs and once through the volunteers (Owen 2007, "The pigeonhole bootstrap"), so
the interval is somewhat too wide, the more so the fewer judgements per pair. It is the safe side
for a claim about volunteers in general.

Vectorised: a block of replicates is a (replicates x pairs) matrix of pair counts and a
(replicates x volunteers) matrix of volunteer counts; the weighted yes / no / graded sums of every
pair are one sparse matrix product, and each metric's statistics are cumulative sums along its
score order (tie groups merged, as in :mod:`.bootstrap`). Random numbers are drawn replicate by
replicate, pairs then volunteers, from one generator: the stream does not depend on the block
size, and the pairs-only variant of this module (``volunteers=False``) draws the very same pairs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from scoring.analysis.bootstrap import sweep_eer
from scoring.analysis.labels import BINARY_OF_CODE, ORDINAL_OF_CODE

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

BLOCK_ROWS = 16
# Salt of the generator: these draws never coincide with another bootstrap's.
_SALT = 41

# What the dashboard, the API and the docs say about the two variants (shown to users verbatim).
PAIRS_ONLY = "pairs only"
PAIRS_AND_VOLUNTEERS = "pairs and volunteers"
WHEN_PAIRS_ONLY = "Pairs only: for conclusions about these volunteers (their labels taken as fixed)."
WHEN_PAIRS_AND_VOLUNTEERS = (
    "Pairs and volunteers: for conclusions about volunteers like them (who happened to volunteer is "
    "resampled too; a little wide on purpose)."
)
GOLD_REASON = "the gold labels do not come from volunteers: there is no volunteer to resample"
NOT_ASKED_REASON = "not computed here: the two-way intervals were not asked for (two_way=1)"
GOLD_SENTENCE = "Gold labels: only the pairs are resampled (no volunteers stand behind the labels)."
# Figures with no human judgement in them: no volunteer to resample (see the docs' "Where it does
# not apply"). The robustness card's probes are built by rule, their expected answers fixed by
# construction; the PARAPHRASUS objectives rest on imported gold labels and on objectives fixed per
# corpus. Inventing a volunteer draw there would only copy the pairs' chance.
PROBES_SENTENCE = (
    "Intervals over source pairs only: no volunteer judged the probes (their expected answers are fixed "
    "by construction), so there is no volunteer to resample."
)
OBJECTIVES_SENTENCE = (
    "No interval over volunteers: the objectives rest on the corpora's imported gold labels and on answers "
    "fixed by construction (no pair / every pair a paraphrase), not on volunteers' judgements."
)


def when_each(volunteers: bool) -> str:
    """The sentence shown beside a pair of intervals on when each is the right one to quote (or,
    on gold labels, why there is no second one)."""
    return f"{WHEN_PAIRS_ONLY} {WHEN_PAIRS_AND_VOLUNTEERS}" if volunteers else GOLD_SENTENCE


@dataclass(frozen=True)
class JudgementTable:
    """The judgements of one set of pairs: pair 0..pairs-1, volunteer 0..volunteers-1, label code."""

    pair: IntArray
    volunteer: IntArray
    code: IntArray
    pairs: int
    volunteers: int

    @classmethod
    def build(cls, pair: IntArray, volunteer: IntArray, code: IntArray, pairs: int) -> JudgementTable:
        """Volunteers renumbered 0.. in order of their ids (only those with a judgement here)."""
        ids, number = np.unique(np.asarray(volunteer, dtype=np.int64), return_inverse=True)
        return cls(
            np.asarray(pair, dtype=np.int64),
            number.astype(np.int64).ravel(),
            np.asarray(code, dtype=np.int64),
            pairs,
            len(ids),
        )


class Replicates:
    """A block of replicates: pair counts, and each pair's binary label (1 / 0 / -1 none) and
    graded score (NaN none) under the replicate's volunteers (rows x pairs). The weighted arrays
    every metric reads are computed once per block, on first use."""

    def __init__(self, counts: FloatArray, binary: NDArray[np.int8], graded: FloatArray, fixed: bool = False) -> None:
        self.counts = counts
        self.binary = binary
        self.graded = graded
        self.fixed = fixed  # the same labels in every row (pairs only): levels computed on one row
        self.rank_cache: dict[bytes, tuple[FloatArray, FloatArray, FloatArray]] = {}

    @cached_property
    def positive(self) -> FloatArray:
        """Draws of each pair where it is a paraphrase in the replicate (else 0)."""
        return np.where(self.binary == 1, self.counts, 0.0)

    @cached_property
    def negative(self) -> FloatArray:
        return np.where(self.binary == 0, self.counts, 0.0)

    @cached_property
    def graded_weight(self) -> FloatArray:
        """Draws of each pair that has a graded score in the replicate."""
        return np.where(np.isfinite(self.graded), self.counts, 0.0)

    @cached_property
    def graded_value(self) -> FloatArray:
        return np.where(np.isfinite(self.graded), self.graded, 0.0)

    @cached_property
    def graded_moments(self) -> tuple[FloatArray, FloatArray]:
        """Weight x (score - 2.5) and weight x (score - 2.5)^2 (centred: fewer lost digits)."""
        centred = np.where(self.graded_weight > 0, self.graded_value - 2.5, 0.0)
        first = self.graded_weight * centred
        return first, first * centred

    @cached_property
    def graded_level(self) -> tuple[IntArray, int]:
        """Each graded score's rank among the block's distinct scores (for Spearman), and how many."""
        values = self.graded_value[:1] if self.fixed else self.graded_value
        levels, inverse = np.unique(values, return_inverse=True)
        level = inverse.reshape(values.shape).astype(np.int64)
        return np.broadcast_to(level, self.graded.shape) if self.fixed else level, len(levels)

    @cached_property
    def level_histogram(self) -> FloatArray:
        """Rows x levels: the drawn weight of every graded level."""
        level, levels = self.graded_level
        return _histogram(level, self.graded_weight, levels)


def _histogram(level: IntArray, weight: FloatArray, levels: int) -> FloatArray:
    """Rows x levels: the sum of ``weight`` over the columns of each level, per row."""
    rows = weight.shape[0]
    index = (np.arange(rows) * levels)[:, None] + level
    counts = np.bincount(index.ravel(), weights=weight.ravel(), minlength=rows * levels)
    return np.asarray(counts, dtype=np.float64).reshape(rows, levels)


def observed_labels(table: JudgementTable) -> tuple[NDArray[np.int8], FloatArray]:
    """Each pair's binary label and graded score from all its judgements (every volunteer once)."""
    replicate = _labels(_sums(table), np.ones((1, table.volunteers)))
    return replicate[0][0], replicate[1][0]


def _sums(table: JudgementTable) -> list[sparse.csr_matrix]:
    """Pairs x volunteers: yes answers, no answers, sum of the 1-4 answers, graded answers."""
    binary = BINARY_OF_CODE[table.code]
    ordinal = ORDINAL_OF_CODE[table.code].astype(np.float64)
    shape = (table.pairs, table.volunteers)

    def matrix(values: FloatArray) -> sparse.csr_matrix:
        return sparse.csr_matrix((values, (table.pair, table.volunteer)), shape=shape)

    return [
        matrix((binary == 1).astype(np.float64)),
        matrix((binary == 0).astype(np.float64)),
        matrix(ordinal),
        matrix((binary >= 0).astype(np.float64)),
    ]


def _labels(sums: list[sparse.csr_matrix], volunteer_counts: FloatArray) -> tuple[NDArray[np.int8], FloatArray]:
    """Binary labels and graded scores (rows x pairs) with the judgements weighted by
    ``volunteer_counts`` (rows x volunteers); a pair with no drawn graded judgement keeps its
    observed values (all weights 1)."""
    yes, no, ordinal, graded = (np.asarray((matrix @ volunteer_counts.T).T) for matrix in sums)
    unseen = graded == 0
    if np.any(unseen):
        observed = [np.asarray(matrix.sum(axis=1)).ravel() for matrix in sums]
        rows, columns = np.nonzero(unseen)
        for weighted, full in zip((yes, no, ordinal, graded), observed, strict=True):
            weighted[rows, columns] = full[columns]
    binary = np.where(yes > no, 1, np.where(no > yes, 0, -1)).astype(np.int8)
    binary[graded == 0] = -1
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(graded > 0, ordinal / graded, np.nan)
    return binary, score


class TwoWayResampler:
    """Draws the replicates of one set of pairs (fixed seed), a block at a time."""

    def __init__(self, resamples: int, seed: int) -> None:
        if resamples < 1:
            raise ValueError(f"resamples must be at least 1, got {resamples}")
        self.resamples = resamples
        self.seed = seed

    def draws(self, pairs: int, volunteers: int, rows: int = BLOCK_ROWS) -> Iterator[tuple[FloatArray, FloatArray]]:
        """Blocks of (pair counts rows x pairs, volunteer counts rows x volunteers). Per replicate:
        ``pairs`` indices drawn uniformly, then ``volunteers`` indices, from one generator."""
        rng = np.random.default_rng([self.seed, pairs, volunteers, _SALT])
        for first in range(0, self.resamples, rows):
            size = min(rows, self.resamples - first)
            pair_counts = np.empty((size, pairs))
            volunteer_counts = np.empty((size, volunteers))
            for row in range(size):
                pair_counts[row] = np.bincount(rng.integers(0, pairs, size=pairs), minlength=pairs)
                volunteer_counts[row] = np.bincount(
                    rng.integers(0, max(volunteers, 1), size=volunteers), minlength=volunteers
                )
            yield pair_counts, volunteer_counts

    def replicates(
        self,
        table: JudgementTable | None,
        labels: tuple[NDArray[np.int8], FloatArray],
        volunteers: bool,
        rows: int = BLOCK_ROWS,
    ) -> Iterator[Replicates]:
        """The replicates' labels: recomputed from the drawn volunteers (``volunteers`` True, a
        ``table`` needed), else the given ``labels`` (observed or gold) in every replicate."""
        if volunteers and table is None:
            raise ValueError("resampling volunteers needs their judgements")
        binary, graded = labels
        pairs = len(binary)
        sums = _sums(table) if volunteers and table is not None else None
        count = table.volunteers if table is not None else 0
        for pair_counts, volunteer_counts in self.draws(pairs, count, rows):
            if sums is None:
                size = len(pair_counts)
                yield Replicates(
                    pair_counts,
                    np.broadcast_to(binary, (size, pairs)),
                    np.broadcast_to(graded, (size, pairs)),
                    fixed=True,
                )
            else:
                drawn_binary, drawn_graded = _labels(sums, volunteer_counts)
                yield Replicates(pair_counts, drawn_binary, drawn_graded)


# --- statistics of a block of replicates ---------------------------------------------------------


@dataclass(frozen=True)
class ScoreOrder:
    """A metric's oriented scores sorted high to low: the order and where each tie group ends."""

    order: IntArray  # positions of the scored pairs, best first
    starts: IntArray  # first position (in ``order``) of every tie group
    values: FloatArray  # sorted scores

    @classmethod
    def of(cls, oriented: FloatArray) -> ScoreOrder:
        scored = np.flatnonzero(np.isfinite(oriented))
        order = scored[np.argsort(-oriented[scored], kind="stable")]
        values = oriented[order]
        starts = (
            np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
            if len(values)
            else np.zeros(0, dtype=np.int64)
        )
        return cls(order, starts.astype(np.int64), values)


def binary_statistics(order: ScoreOrder, block: Replicates) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Best accuracy (threshold re-optimised per replicate), ROC AUC and interpolated EER of every
    replicate (NaN where a replicate has one class only or no labelled pair)."""
    rows = block.counts.shape[0]
    if len(order.order) == 0:
        nan = np.full(rows, np.nan)
        return nan, nan.copy(), nan.copy()
    # Tie groups: one point per group.
    positives_through, positive = group_sums(block.positive[:, order.order], order.starts)
    negatives_through, negative = group_sums(block.negative[:, order.order], order.starts)
    pos_total = positives_through[:, -1]
    neg_total = negatives_through[:, -1]
    drawn = pos_total + neg_total
    # Calling the groups through g paraphrases: correct = P_g + (N - N_g); the empty call gives N.
    best = np.maximum(np.max(positives_through - negatives_through, axis=1), 0.0)
    # Mann-Whitney: each non-paraphrase counts the paraphrases above it and half of those tied.
    area = np.einsum("ij,ij->i", negative, positives_through) - 0.5 * np.einsum("ij,ij->i", negative, positive)
    defined = (pos_total > 0) & (neg_total > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        accuracy = np.where(drawn > 0, (best + neg_total) / np.maximum(drawn, 1), np.nan)
        auc = np.where(defined, area / (pos_total * neg_total), np.nan)
    eer = sweep_eer(positives_through, positives_through + negatives_through, pos_total, neg_total, defined)
    return accuracy, auc, eer


def _pearson_from_sums(
    total: FloatArray, sx: FloatArray, sy: FloatArray, sxx: FloatArray, syy: FloatArray, sxy: FloatArray
) -> FloatArray:
    """Pearson's r of weighted points from their sums (undefined below three drawn points or
    where a variable is constant, as :mod:`.correlation`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        vx = sxx - sx * sx / total
        vy = syy - sy * sy / total
        value = (sxy - sx * sy / total) / np.sqrt(vx * vy)
        scale_x = sxx / total
        scale_y = syy / total
        keep = (
            (total >= 3)
            & (vx > 1e-12 * np.maximum(scale_x, 1e-300) * total)
            & (vy > 1e-12 * np.maximum(scale_y, 1e-300) * total)
        )
    return np.where(keep, np.clip(value, -1.0, 1.0), np.nan)


@dataclass(frozen=True)
class PearsonColumns:
    """The per-pair columns every metric's Pearson reads (pairs x metrics): scored or not, and the
    centred oriented score and its square (0 where unscored). One matrix product per block then
    gives the weighted sums of all metrics at once."""

    scored: FloatArray
    x: FloatArray
    xx: FloatArray

    @classmethod
    def of(cls, oriented: FloatArray, orders: Sequence[ScoreOrder]) -> PearsonColumns:
        """``oriented``: metrics x pairs."""
        metrics, pairs = oriented.shape
        scored = np.zeros((pairs, metrics))
        x = np.zeros((pairs, metrics))
        for index, order in enumerate(orders):
            scored[order.order, index] = 1.0
            # Centred first: sums of squares of large offsets would lose digits.
            centre = float(np.mean(oriented[index][order.order])) if len(order.order) else 0.0
            x[order.order, index] = oriented[index][order.order] - centre
        return cls(scored, x, x * x)


def pearson_sums(columns: PearsonColumns, block: Replicates) -> tuple[FloatArray, FloatArray]:
    """Pearson's r of every metric (rows x metrics) and the drawn weight of the pairs each metric
    scored that have a graded score (rows x metrics: Spearman's count)."""
    weight = block.graded_weight
    wy, wyy = block.graded_moments
    total = weight @ columns.scored
    pearson = _pearson_from_sums(
        total,
        weight @ columns.x,
        wy @ columns.scored,
        weight @ columns.xx,
        wyy @ columns.scored,
        wy @ columns.x,
    )
    return pearson, total


def correlations(
    oriented: FloatArray, block: Replicates, order: ScoreOrder | None = None
) -> tuple[FloatArray, FloatArray]:
    """Pearson and Spearman (average ranks for ties) between the oriented score and the graded
    human scale in every replicate, over the drawn pairs that have both."""
    order = order or ScoreOrder.of(oriented)
    columns = PearsonColumns.of(oriented[None, :], [order])
    pearson, total = pearson_sums(columns, block)
    return pearson[:, 0], spearman(order, block, columns.scored[:, 0], total[:, 0])


def group_sums(values: FloatArray, starts: IntArray) -> tuple[FloatArray, FloatArray]:
    """Running totals through the end of each tie group and each group's own sum (rows x groups;
    ``starts``: each group's first column), by one cumulative sum read at the group ends (several
    times faster than ``np.add.reduceat`` along rows). Exact on counts and half-integer ranks."""
    through = np.cumsum(values, axis=1)
    if len(starts) == values.shape[1]:
        return through, values
    through = through[:, np.append(starts[1:], values.shape[1]) - 1]
    return through, _differences(through)


def group_totals(values: FloatArray, starts: IntArray) -> FloatArray:
    """Each tie group's own sum (rows x groups): the columns themselves when there is no tie."""
    if len(starts) == values.shape[1]:
        return values
    return _differences(np.cumsum(values, axis=1)[:, np.append(starts[1:], values.shape[1]) - 1])


def _differences(through: FloatArray) -> FloatArray:
    grouped = np.empty_like(through)
    grouped[:, :1] = through[:, :1]
    np.subtract(through[:, 1:], through[:, :-1], out=grouped[:, 1:])
    return grouped


def _human_ranks(block: Replicates, scored: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The graded scale's average ranks among the drawn copies of the pairs a metric scored, as
    weight x rank per pair (rows x pairs), with the sum and the sum of squares of the ranks
    (per row). The ranks come from the weighted histogram of the graded levels, the unscored
    pairs' weight taken out; cached on the block per set of unscored pairs (most metrics share
    one), since they do not depend on the metric's order."""
    unscored = np.flatnonzero(scored == 0)
    key = unscored.tobytes()
    cached = block.rank_cache.get(key)
    if cached is not None:
        return cached
    weight = block.graded_weight
    level, levels = block.graded_level
    histogram = block.level_histogram
    if len(unscored):
        histogram = histogram - _histogram(level[:, unscored], weight[:, unscored], levels)
    level_rank = np.cumsum(histogram, axis=1) - (histogram - 1.0) / 2.0
    sum_y = np.einsum("ij,ij->i", histogram, level_rank)
    sum_yy = np.einsum("ij,ij->i", histogram * level_rank, level_rank)
    rank_y = np.take_along_axis(level_rank, level, axis=1) if not block.fixed else level_rank[:, level[0]]
    out = (weight * rank_y, sum_y, sum_yy)
    block.rank_cache[key] = out
    return out


def spearman(order: ScoreOrder, block: Replicates, scored: FloatArray, total: FloatArray) -> FloatArray:
    """Spearman = Pearson of the average ranks among the drawn copies. The score's ranks follow its
    fixed order (best first: ranks counted from the top, which flips the sign), summed per tie
    group along that order; the human scale's come from :func:`_human_ranks`."""
    weighted_rank_y, sum_y, sum_yy = _human_ranks(block, scored)
    through, grouped = group_sums(block.graded_weight[:, order.order], order.starts)
    cross = group_totals(weighted_rank_y[:, order.order], order.starts)
    group_rank = through - (grouped - 1.0) / 2.0
    sum_x = np.einsum("ij,ij->i", grouped, group_rank)
    sum_xx = np.einsum("ij,ij->i", grouped * group_rank, group_rank)
    sum_xy = np.einsum("ij,ij->i", cross, group_rank)
    return -_pearson_from_sums(total, sum_x, sum_y, sum_xx, sum_yy, sum_xy)


def auc_only(order: ScoreOrder, block: Replicates) -> FloatArray:
    """ROC AUC of every replicate alone (as :func:`binary_statistics` computes it, without the
    accuracy and EER sweeps): NaN where a replicate has one class only."""
    if len(order.order) == 0:
        return np.full(block.counts.shape[0], np.nan)
    positives_through, positive = group_sums(block.positive[:, order.order], order.starts)
    negatives_through, negative = group_sums(block.negative[:, order.order], order.starts)
    pos_total = positives_through[:, -1]
    neg_total = negatives_through[:, -1]
    area = np.einsum("ij,ij->i", negative, positives_through - 0.5 * positive)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((pos_total > 0) & (neg_total > 0), area / (pos_total * neg_total), np.nan)


def auc_difference(first: ScoreOrder, second: ScoreOrder, block: Replicates) -> FloatArray:
    """AUC of the first metric minus that of the second in every replicate (paired: the same
    drawn pairs and labels; each order must hold the pairs both metrics scored)."""
    return auc_only(first, block) - auc_only(second, block)


def percentile(values: FloatArray, confidence: float) -> tuple[float, float] | None:
    """The percentile interval of the finite replicates (None when there is none)."""
    finite = values[np.isfinite(values)]
    if len(finite) == 0:
        return None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


# --- the dashboard's intervals ---------------------------------------------------------------------

IntervalPair = tuple[float, float] | None


@dataclass(frozen=True)
class RaterIntervals:
    """One metric on one subset: the correlations' pairs-only intervals and every interval of the
    two-way (pairs and volunteers) bootstrap; ``two_way`` None with ``reason`` when it does not
    apply (gold labels)."""

    pearson: IntervalPair
    spearman: IntervalPair
    two_way: TwoWayIntervals | None
    reason: str | None
    resamples: int


@dataclass(frozen=True)
class TwoWayIntervals:
    accuracy: IntervalPair
    auc: IntervalPair
    eer: IntervalPair
    pearson: IntervalPair
    spearman: IntervalPair
    volunteers: int  # volunteers resampled (those with a judgement on the subset's pairs)


@dataclass(frozen=True)
class RaterInput:
    """What the two-way intervals need, as arrays (no Django, no report types)."""

    judgement_pair: IntArray  # per judgement: position of its pair
    judgement_volunteer: IntArray
    judgement_code: IntArray
    metric_ids: list[int]
    oriented: FloatArray  # metrics x pairs, higher = closer, NaN unscored
    # Fixed labels (gold reference): binary 1/0/-1 and graded per pair; None: the volunteers'.
    fixed: tuple[NDArray[np.int8], FloatArray] | None = None
    # Metrics x pairs: the natural threshold's call (1 paraphrase / 0 not; NaN no threshold or no
    # score), for the paired accuracy at the natural threshold; None: not asked.
    natural: FloatArray | None = None
    # Metrics x pairs: the fold of every pair in the metric's cross-validation (-1: not in it), for
    # the paired cross-validated accuracy; None: not asked.
    cv_fold: IntArray | None = None


def rater_intervals(
    data: RaterInput,
    subsets: Sequence[tuple[str, BoolArray]],
    resamples: int,
    seed: int,
    confidence: float = 0.95,
    two_way: bool = True,
) -> dict[int, dict[str, RaterIntervals]]:
    """Per metric id and subset key: the correlations' pairs-only intervals and the two-way
    intervals (accuracy, AUC, EER, Pearson, Spearman) beside the dashboard's pairs-only ones.
    ``two_way`` False: the pairs-only ones alone (the costly two-way pass skipped, the reason said)."""
    out: dict[int, dict[str, RaterIntervals]] = {metric: {} for metric in data.metric_ids}
    resampler = TwoWayResampler(resamples, seed)
    for key, mask in subsets:
        table, labels, positions = _subset(data, mask)
        orders = [ScoreOrder.of(row[positions]) for row in data.oriented]
        pairs_only = _collect(resampler, table, labels, orders, data.oriented[:, positions], volunteers=False)
        drawn = (
            None
            if data.fixed is not None or not two_way
            else _collect(resampler, table, labels, orders, data.oriented[:, positions], volunteers=True)
        )
        for index, metric in enumerate(data.metric_ids):
            out[metric][key] = RaterIntervals(
                pearson=percentile(pairs_only[index][3], confidence),
                spearman=percentile(pairs_only[index][4], confidence),
                two_way=None
                if drawn is None or table is None
                else _two_way_intervals(drawn[index], confidence, table.volunteers),
                reason=GOLD_REASON if data.fixed is not None else (None if two_way else NOT_ASKED_REASON),
                resamples=resamples,
            )
    return out


def _two_way_intervals(values: list[FloatArray], confidence: float, volunteers: int) -> TwoWayIntervals:
    accuracy, auc, eer, pearson, spearman = (percentile(column, confidence) for column in values)
    return TwoWayIntervals(accuracy, auc, eer, pearson, spearman, volunteers)


def _subset(
    data: RaterInput, mask: BoolArray
) -> tuple[JudgementTable | None, tuple[NDArray[np.int8], FloatArray], IntArray]:
    """The pairs a replicate draws from (labelled or graded), their judgements and labels."""
    if data.fixed is not None:
        binary, graded = data.fixed
        positions = np.flatnonzero(mask & ((binary >= 0) | np.isfinite(graded)))
        return None, (binary[positions], graded[positions]), positions
    graded_judgement = BINARY_OF_CODE[data.judgement_code] >= 0
    judged = np.zeros(len(mask), dtype=bool)
    judged[data.judgement_pair[graded_judgement]] = True
    positions = np.flatnonzero(mask & judged)
    local = np.full(len(mask), -1, dtype=np.int64)
    local[positions] = np.arange(len(positions))
    keep = local[data.judgement_pair] >= 0
    table = JudgementTable.build(
        local[data.judgement_pair[keep]], data.judgement_volunteer[keep], data.judgement_code[keep], len(positions)
    )
    return table, observed_labels(table), positions


def _collect(
    resampler: TwoWayResampler,
    table: JudgementTable | None,
    labels: tuple[NDArray[np.int8], FloatArray],
    orders: list[ScoreOrder],
    oriented: FloatArray,
    volunteers: bool,
) -> list[list[FloatArray]]:
    """Per metric, of every replicate: accuracy, AUC, EER (two-way only: the pairs-only ones are
    :mod:`.bootstrap`'s), Pearson, Spearman. Pearson of all metrics is one matrix product per block."""
    empty = np.zeros(0)
    parts: list[list[list[FloatArray]]] = [[[] for _ in range(5)] for _ in orders]
    if len(labels[0]) == 0:
        return [[empty for _ in range(5)] for _ in orders]
    columns = PearsonColumns.of(oriented, orders)
    for block in resampler.replicates(table, labels, volunteers):
        pearson, total = pearson_sums(columns, block)
        for index, order in enumerate(orders):
            binary = binary_statistics(order, block) if volunteers else (empty, empty, empty)
            rho = spearman(order, block, columns.scored[:, index], total[:, index])
            values = (*binary, pearson[:, index], rho)
            for target, value in zip(parts[index], values, strict=True):
                target.append(value)
    return [[np.concatenate(column) for column in metric] for metric in parts]


# --- paired differences and relabelling for other figures -----------------------------------------


@dataclass(frozen=True)
class TwoWayDifference:
    """The two-way interval of a statistic of metric A minus that of metric B: the same pair and
    volunteer draws for both metrics."""

    interval: IntervalPair
    pairs: int  # pairs drawn from (a graded judgement, both metrics scored)
    volunteers: int  # volunteers resampled
    resamples: int


# The paired statistics with a two-way interval (the values of :class:`.paired.Statistic`).
PairedKind = Literal["auc", "accuracy_natural", "accuracy_cv", "pearson", "spearman", "kendall"]
PAIRED_KINDS: tuple[PairedKind, ...] = ("auc", "accuracy_natural", "accuracy_cv", "pearson", "spearman", "kendall")


def paired_auc_intervals(
    data: RaterInput,
    jobs: Sequence[tuple[int, int]],
    resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> dict[tuple[int, int], TwoWayDifference]:
    """Per (row a, row b) of ``data.oriented``: the two-way interval of AUC(a) - AUC(b) (see
    :func:`paired_intervals`)."""
    found = paired_intervals(data, [("auc", a, b) for a, b in jobs], resamples, seed, confidence)
    return {(a, b): difference for (_, a, b), difference in found.items()}


def paired_intervals(
    data: RaterInput,
    jobs: Sequence[tuple[PairedKind, int, int]],
    resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> dict[tuple[PairedKind, int, int], TwoWayDifference]:
    """Per (statistic, row a, row b) of ``data.oriented``: the two-way interval of the statistic of
    a minus that of b over the pairs both scored that have a graded judgement. In every replicate
    both metrics meet the same drawn pairs and the same relabelled pairs (one volunteer draw);
    the statistic is that of :func:`rater_intervals` (ROC AUC, Pearson, Spearman with average
    ranks among the drawn copies), Kendall's tau_b (the drawn copies of a pair tied with each
    other), or, for ``accuracy_natural``, the share of the drawn pairs with a label in the
    replicate on which the natural threshold's call (``data.natural``) agrees with it; for
    ``accuracy_cv`` the same share with the calls of the cross-validation refitted in the
    replicate (:func:`cv_hits`). Jobs on the same pairs share their replicates (each metric's
    statistic computed once per block); the draws are those of :func:`rater_intervals` on these
    pairs. Empty for fixed (gold) labels: no volunteer stands behind them."""
    if data.fixed is not None or resamples <= 0:
        return {}
    if any(kind == "accuracy_natural" for kind, _, _ in jobs) and data.natural is None:
        raise ValueError("the accuracy at the natural threshold needs the natural threshold's calls")
    if any(kind == "accuracy_cv" for kind, _, _ in jobs) and data.cv_fold is None:
        raise ValueError("the cross-validated accuracy needs the folds of the cross-validation")
    resampler = TwoWayResampler(resamples, seed)
    scored = np.isfinite(data.oriented)
    groups: dict[bytes, list[tuple[PairedKind, int, int]]] = {}
    for job in jobs:
        groups.setdefault((scored[job[1]] & scored[job[2]]).tobytes(), []).append(job)
    out: dict[tuple[PairedKind, int, int], TwoWayDifference] = {}
    for group in groups.values():
        _, a0, b0 = group[0]
        table, labels, positions = _subset(data, scored[a0] & scored[b0])
        if table is None or len(positions) == 0:
            continue
        values = _paired_values(data, group, resampler, table, labels, positions)
        for kind, a, b in group:
            out[(kind, a, b)] = TwoWayDifference(
                percentile(values[(kind, a)] - values[(kind, b)], confidence),
                len(positions),
                table.volunteers,
                resamples,
            )
    return out


def _paired_values(
    data: RaterInput,
    group: Sequence[tuple[PairedKind, int, int]],
    resampler: TwoWayResampler,
    table: JudgementTable,
    labels: tuple[NDArray[np.int8], FloatArray],
    positions: IntArray,
) -> dict[tuple[PairedKind, int], FloatArray]:
    """Per (statistic, row): its value in every replicate on these pairs."""
    wanted = sorted({(kind, row) for kind, a, b in group for row in (a, b)})
    rows = sorted({row for _, row in wanted})
    orders = {row: ScoreOrder.of(data.oriented[row][positions]) for row in rows}
    correlated = sorted({row for kind, row in wanted if kind in ("pearson", "spearman")})
    columns = PearsonColumns.of(data.oriented[correlated][:, positions], [orders[row] for row in correlated])
    column_of = {row: index for index, row in enumerate(correlated)}
    calls = {
        row: np.nan_to_num(data.natural[row][positions])
        for kind, row in wanted
        if kind == "accuracy_natural" and data.natural is not None
    }
    folds = {
        row: _all_folds(data.cv_fold[row][positions], resampler.seed)
        for kind, row in wanted
        if kind == "accuracy_cv" and data.cv_fold is not None
    }
    parts: dict[tuple[PairedKind, int], list[FloatArray]] = {key: [] for key in wanted}
    for block in resampler.replicates(table, labels, volunteers=True):
        pearson, total = pearson_sums(columns, block) if correlated else (np.zeros(0), np.zeros(0))
        labelled = (block.positive + block.negative).sum(axis=1)
        for kind, row in wanted:
            if kind == "auc":
                value = auc_only(orders[row], block)
            elif kind == "accuracy_natural":
                call = calls[row]
                correct = block.positive @ call + block.negative @ (1.0 - call)
                with np.errstate(divide="ignore", invalid="ignore"):
                    value = np.where(labelled > 0, correct / labelled, np.nan)
            elif kind == "accuracy_cv":
                hits = cv_hits(orders[row], folds[row], block)
                correct = np.einsum("ij,ij->i", block.counts, hits)
                with np.errstate(divide="ignore", invalid="ignore"):
                    value = np.where(labelled > 0, correct / labelled, np.nan)
            elif kind == "kendall":
                value = kendall_tau_b(orders[row], block)
            elif kind == "pearson":
                value = pearson[:, column_of[row]]
            else:
                index = column_of[row]
                value = spearman(orders[row], block, columns.scored[:, index], total[:, index])
            parts[(kind, row)].append(value)
    return {key: np.concatenate(value) for key, value in parts.items()}


def _all_folds(fold: IntArray, seed: int) -> IntArray:
    """Every pair's fold: its own in the observed cross-validation, or, for a pair that was not
    in it (no label: a tie that a replicate may break), one drawn at random (fixed seed), so that
    it is held out once like every other pair."""
    fold = np.asarray(fold, dtype=np.int64).copy()
    folds = int(fold.max()) + 1 if len(fold) and fold.max() >= 0 else 0
    outside = fold < 0
    if folds and np.any(outside):
        rng = np.random.default_rng([seed, len(fold), _SALT, 2])
        fold[outside] = rng.integers(0, folds, size=int(np.count_nonzero(outside)))
    return fold


def cv_hits(order: ScoreOrder, fold: IntArray, block: Replicates) -> FloatArray:
    """Rows x pairs: 1 where the cross-validation's call on a pair is right in the replicate (0
    wrong or no label). Every fold's threshold is refitted on the other folds' pairs with the
    replicate's labels (each pair once: the pair draw weighs the held-out calls, as in the
    pairs-only interval, whose calls are the observed cross-validation's), the best accuracy,
    the highest threshold among ties (:func:`.thresholds.cross_validated`): one cumulative count
    along the score order per fold, all replicates at once."""
    positive = (block.binary == 1)[:, order.order].astype(np.float64)
    negative = (block.binary == 0)[:, order.order].astype(np.float64)
    ordered_fold = fold[order.order]
    group = np.cumsum(np.isin(np.arange(len(order.order)), order.starts)) - 1
    hits = np.zeros_like(positive)
    for held_out in range(int(ordered_fold.max()) + 1 if len(ordered_fold) else 0):
        train = ordered_fold != held_out
        tp = np.cumsum(np.add.reduceat(positive * train, order.starts, axis=1), axis=1)
        fp = np.cumsum(np.add.reduceat(negative * train, order.starts, axis=1), axis=1)
        negatives = fp[:, -1:]
        # Point k calls the first k tie groups a paraphrase (0: none); the first best is the highest.
        correct = np.concatenate((negatives, tp + negatives - fp), axis=1)
        best = np.argmax(correct, axis=1)
        called = group[None, :] < best[:, None]
        test = ordered_fold == held_out
        hits[:, test] = np.where(called[:, test], positive[:, test], negative[:, test])
    out: FloatArray = np.zeros_like(hits)
    out[:, order.order] = hits
    return out


def kendall_tau_b(order: ScoreOrder, block: Replicates) -> FloatArray:
    """Kendall's tau_b of the metric against every replicate's graded scores, each pair counted as
    often as it was drawn (copies tie on both sides), as :func:`.paired.boot_kendall` does with
    fixed scores. The metric's tie groups are the same in every replicate and the human scores
    take few distinct levels, so every replicate is a table of drawn weight per (tie group, level)
    counted with cumulative sums: O(groups x levels) per replicate (:func:`_signed_dominance`); when
    that table is much larger than the pairs, O(n log levels) radix passes (:func:`_radix_dominance`)."""
    rows = block.counts.shape[0]
    if len(order.order) < 2:
        return np.full(rows, np.nan)
    level, levels = block.graded_level
    sizes = np.diff(np.append(order.starts, len(order.order)))
    groups = len(sizes)
    # x_group: each scored pair's tie group, 0 for the highest scores (``order`` is best first).
    x_group = np.repeat(np.arange(groups), sizes)
    weight = block.graded_weight[:, order.order]
    y_level = np.asarray(level)[:, order.order]
    if groups * max(levels, 1) <= _TABLE_PER_PAIR * len(order.order):
        doubled = _signed_dominance(x_group, y_level, weight, max(levels, 1), groups)
    else:
        doubled = _chunked_dominance(order, x_group, y_level, weight, max(levels, 1))
    total = weight.sum(axis=1)
    x_counts = _histogram(np.broadcast_to(x_group, weight.shape), weight, groups)
    y_counts = _histogram(y_level, weight, max(levels, 1))
    pairs = total * (total - 1) / 2
    x_ties = (x_counts * (x_counts - 1) / 2).sum(axis=1)
    y_ties = (y_counts * (y_counts - 1) / 2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = np.sqrt((pairs - x_ties) * (pairs - y_ties))
        return np.where(denominator > 0, doubled / np.where(denominator > 0, denominator, 1), np.nan)


# The table is used while it has at most this many cells per scored pair (measured: a cell costs
# about 1/40 of a pair's radix passes at 10,000 pairs); a metric with few tie groups, or scores of
# few levels, qualifies, a continuous metric against ~100 levels does not.
_TABLE_PER_PAIR = 16
# Cells (rows x tie groups x levels) of one contingency table chunk: bounds the memory.
_TABLE_CELLS = 1 << 21


def _signed_dominance(x_group: IntArray, y_level: IntArray, weight: FloatArray, levels: int, groups: int) -> FloatArray:
    """Per row: the sum over all pairs i, j of w_i w_j sign(x_i - x_j) sign(y_i - y_j) over i < j
    (concordant minus discordant weight), ``x_group`` descending in x (group 0 the highest).

    A row's weights are summed into a table T (tie group x level); with P the weight of the
    earlier (higher-x) groups and Q its cumulative sum over the levels (up to and including the
    cell's), a cell meets P's total - Q higher levels (concordant) and Q - P lower ones
    (discordant): the sum of T (total - 2Q + P). The weights are counts, so every sum is an
    exact integer in float64, whatever the order of the additions."""
    rows = weight.shape[0]
    cells = groups * levels
    chunk = max(1, _TABLE_CELLS // max(cells, 1))
    column = x_group[None, :] * np.int64(levels) + y_level
    signed = np.empty(rows)
    for first in range(0, rows, chunk):
        last = min(rows, first + chunk)
        index = (np.arange(last - first) * cells)[:, None] + column[first:last]
        flat = np.bincount(index.ravel(), weights=weight[first:last].ravel(), minlength=(last - first) * cells)
        table = flat.reshape(last - first, groups, levels)
        earlier = np.cumsum(table, axis=1)
        earlier -= table
        below = np.cumsum(earlier, axis=2)
        total = below[:, :, -1:]
        signed[first:last] = np.einsum("rgl,rgl->r", table, total - 2 * below + earlier)
    return signed


def _chunked_dominance(
    order: ScoreOrder, x_group: IntArray, y_level: IntArray, weight: FloatArray, levels: int
) -> FloatArray:
    """:func:`_signed_dominance` for many tie groups and many levels: the score order is cut into
    chunks of whole tie groups (about 2 sqrt(levels) pairs each: the fastest measured). Pairs in
    different chunks differ in x: the table of (chunk, level) counts them; pairs within a chunk
    are compared directly (chunk size squared per chunk). O(n (levels / size + size)) per
    replicate. A tie group much larger than a chunk would make the chunks large: then the radix
    passes."""
    n = len(order.order)
    size = max(4, int(2 * np.sqrt(levels)))
    chunk_of_group = order.starts // size
    chunk = chunk_of_group[x_group]
    chunks = int(chunk[-1]) + 1
    chunk_start = np.searchsorted(chunk, np.arange(chunks))
    slot = np.arange(n) - chunk_start[chunk]
    width = int(slot.max()) + 1
    if width > 4 * size:
        # Ascending x for the radix method: reverse the order and the group numbers.
        return _radix_dominance(int(x_group[-1]) - x_group[::-1], y_level[:, ::-1], weight[:, ::-1], levels)
    across = _signed_dominance(chunk, y_level, weight, levels, chunks)
    rows = weight.shape[0]
    padded_weight = np.zeros((rows, chunks, width))
    padded_weight[:, chunk, slot] = weight
    padded_level = np.zeros((rows, chunks, width))
    padded_level[:, chunk, slot] = y_level
    padded_group = np.full((chunks, width), -1, dtype=np.int64)
    padded_group[chunk, slot] = x_group
    # a before b in the chunk and in a later (lower-x) tie group; padding has no weight.
    later = (padded_group[:, :, None] < padded_group[:, None, :]).astype(np.float64)
    within = np.empty(rows)
    step = max(1, _TABLE_CELLS // max(chunks * width * width, 1))
    for first in range(0, rows, step):
        last = min(rows, first + step)
        level = padded_level[first:last]
        sign = np.sign(level[:, :, :, None] - level[:, :, None, :])
        sign *= later
        inner = np.matmul(sign, padded_weight[first:last, :, :, None])[..., 0]
        within[first:last] = np.einsum("rka,rka->r", padded_weight[first:last], inner)
    return across + within


def _radix_dominance(x_group: IntArray, y_level: IntArray, weight: FloatArray, levels: int) -> FloatArray:
    """Per row: the sum over all pairs i, j (j before i by x) of w_i w_j sign(x_i - x_j) sign(y_i - y_j),
    i.e. concordant minus discordant weight.

    Each row is sorted by (x, y); then every element's signed count of the earlier elements by y
    is built bit by bit of the y level (a radix split: at each bit, the elements sharing the higher
    bits, kept in (x, y) order, are counted with cumulative sums and split stably by the bit), log2
    of the levels passes of O(n). Earlier elements in the same x tie group have a lower or equal
    y; those with a lower one are counted as concordant by the passes and taken off at the end."""
    rows, n = weight.shape
    key = x_group[None, :] * np.int64(max(levels, 1)) + y_level
    arrangement = np.argsort(key, axis=1, kind="stable")
    w = np.take_along_axis(weight, arrangement, axis=1)
    y = np.take_along_axis(y_level, arrangement, axis=1)
    x = x_group[arrangement]
    index = np.broadcast_to(np.arange(n), (rows, n))
    # Same x group and earlier with a strictly lower y: the passes count them, a tie in x does not.
    before = np.cumsum(w, axis=1) - w
    x_start = np.maximum.accumulate(np.where(_changes(x), index, 0), axis=1)
    xy_start = np.maximum.accumulate(np.where(_changes(x) | _changes(y), index, 0), axis=1)
    start_value = np.take_along_axis(before, x_start, axis=1)
    same_x_lower_y = np.take_along_axis(before, xy_start, axis=1) - start_value
    signed: FloatArray = -np.einsum("ij,ij->i", w, same_x_lower_y)
    group = np.zeros((rows, n), dtype=np.int64)  # the higher bits shared, in arrangement order
    for bit in range(max(int(levels - 1).bit_length(), 1) - 1, -1, -1):
        high = (y >> bit) & 1
        start = np.maximum.accumulate(np.where(_changes(group), index, 0), axis=1)
        ones = w * high
        ones_before = np.cumsum(ones, axis=1) - ones
        zeros_before = before - ones_before
        earlier_ones = ones_before - np.take_along_axis(ones_before, start, axis=1)
        earlier_zeros = zeros_before - np.take_along_axis(zeros_before, start, axis=1)
        signed += np.einsum("ij,ij->i", w, np.where(high == 1, earlier_zeros, -earlier_ones))
        # Stable split of every group by this bit: its zeros first, then its ones.
        count_one = np.cumsum(high, axis=1)
        count_zero = index + 1 - count_one
        zeros_at_start = np.take_along_axis(count_zero - (1 - high), start, axis=1)
        ones_at_start = np.take_along_axis(count_one - high, start, axis=1)
        group_end = _group_end(group, index)
        zeros_in_group = np.take_along_axis(count_zero, group_end, axis=1) - zeros_at_start
        position = np.where(
            high == 0,
            start + (count_zero - 1 - zeros_at_start),
            start + zeros_in_group + (count_one - 1 - ones_at_start),
        )
        new_group = group * 2 + high
        for values in (w, y, new_group):
            moved = np.empty_like(values)
            np.put_along_axis(moved, position, values, axis=1)
            values[...] = moved
        group = new_group
        before = np.cumsum(w, axis=1) - w
    return signed


def _changes(values: NDArray[np.int64]) -> BoolArray:
    """Rows x n: True where a value differs from the one before it (and at the first column)."""
    out = np.ones(values.shape, dtype=bool)
    out[:, 1:] = values[:, 1:] != values[:, :-1]
    return out


def _group_end(group: IntArray, index: IntArray) -> IntArray:
    """Rows x n: the last column of every element's run of equal ``group``."""
    last = np.ones(group.shape, dtype=bool)
    last[:, :-1] = group[:, 1:] != group[:, :-1]
    n = group.shape[1]
    ends = np.where(last, index, n)
    return np.minimum.accumulate(ends[:, ::-1], axis=1)[:, ::-1]


class VolunteerRelabeller:
    """Every pair's labels under a fresh draw of the volunteers (with replacement), one replicate at
    a time, by the aggregation of :class:`TwoWayResampler` (a pair none of whose volunteers was drawn
    keeps its observed labels). For figures whose own resampling draws the pairs (SPA's sources):
    its generator is apart, so that figure's pair draws are the same with and without it."""

    def __init__(self, table: JudgementTable, seed: int) -> None:
        self.table = table
        self._sums = _sums(table)
        self._rng = np.random.default_rng([seed, table.pairs, table.volunteers, _SALT, 1])

    def draw(self) -> tuple[NDArray[np.int8], FloatArray]:
        """Binary labels and graded scores of every pair (0..pairs-1) for one volunteer draw."""
        volunteers = self.table.volunteers
        counts = np.bincount(self._rng.integers(0, max(volunteers, 1), size=volunteers), minlength=volunteers)
        binary, graded = _labels(self._sums, counts[None, :].astype(np.float64))
        return binary[0], graded[0]
