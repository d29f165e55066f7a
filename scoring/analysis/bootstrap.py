"""Percentile bootstrap intervals for accuracy, ROC AUC and EER, vectorised over resamples.

A resample draws n labelled pairs with replacement, so it is a vector of counts (how many
times each pair was drawn) from a uniform multinomial. The statistics are recomputed on
every resample; for accuracy the best threshold is **re-optimised per resample** (using the
full-sample threshold would make the interval too narrow, since the threshold was itself
chosen on the data).

Speed comes from three facts:

1. Pairs are exchangeable in the resampling scheme, so counts can be drawn directly over
   the *sorted* positions of a metric: one cumulative count matrix per corpus serves every
   metric (each metric's interval is a valid bootstrap; metrics are not paired). Labelled
   pairs a metric could not score sit after its scored ones; draws on them are dropped.
2. Along the sorted scores, a run of tie groups of one class can be merged into a single
   segment: accuracy is monotone inside such a run, and the ROC points inside it lie on a
   straight line, so the best accuracy, the AUC and the interpolated EER are unchanged.
   A tie group holding both classes stays its own segment (paraphrases sorted first in it).
3. Resamples are processed in small chunks so the temporaries stay in the CPU cache.
4. The counts are drawn chunk by chunk too (``Resampler.chunks``), and every metric of a
   sample size reads a chunk before the next is drawn (:func:`bootstrap_many`): memory holds
   one chunk (``CHUNK_ROWS`` x n counts), not the whole resamples x n table, so it grows with n
   only, and time grows linearly with resamples x n.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.analysis.binary import Ranked

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 20250101
_CHUNK = 16
# Resamples drawn at once: 64 x 100,000 pairs x 4 bytes = 25.6 MB of counts per chunk.
CHUNK_ROWS = 64


@dataclass(frozen=True)
class Interval:
    """A two-sided percentile interval."""

    low: float
    high: float


@dataclass(frozen=True)
class BootstrapResult:
    """Intervals of one metric on one set of pairs; None where a statistic is undefined."""

    accuracy: Interval | None
    auc: Interval | None
    eer: Interval | None
    resamples: int
    # Resamples that drew one class only: AUC and EER are undefined there and left out.
    single_class_resamples: int


class Resampler:
    """Draws the bootstrap counts of a sample size (fixed seed), one chunk of resamples at a time."""

    def __init__(self, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> None:
        if resamples < 1:
            raise ValueError(f"resamples must be at least 1, got {resamples}")
        self.resamples = resamples
        self.seed = seed

    def chunks(self, n: int, rows: int = CHUNK_ROWS) -> Iterator[NDArray[np.int32]]:
        """Blocks of at most ``rows`` resamples (rows x n+1): column p+1 = draws that fell on
        positions 0..p; column 0 = 0. The same stream whatever ``rows``: only memory changes."""
        # The seed depends on n only, so a result does not depend on the order of computation.
        rng = np.random.default_rng([self.seed, n])
        for first in range(0, self.resamples, rows):
            size = min(rows, self.resamples - first)
            block = np.zeros((size, n + 1), dtype=np.int32)
            for row in range(size):
                # One row at a time: bincount into a small, cache-resident array is ~10x faster
                # than one bincount over rows * n scattered slots.
                block[row, 1:] = np.bincount(rng.integers(0, n, size=n, dtype=np.int32), minlength=n)
            np.cumsum(block, axis=1, out=block)
            yield block

    def cumulative_counts(self, n: int) -> NDArray[np.int32]:
        """The whole table (resamples x n+1) at once: for small samples and for checking."""
        return np.concatenate(list(self.chunks(n)), axis=0)


@dataclass(frozen=True)
class _Segments:
    end: NDArray[np.int64]  # last position of each segment
    start: NDArray[np.int64]  # first position
    positive_end: NDArray[np.int64]  # last paraphrase position (start - 1 when none)


def _segments(r: Ranked) -> _Segments:
    size = np.diff(np.concatenate(([-1], r.group_end)))
    positives = np.diff(np.concatenate(([0], r.tp)))
    # 1: only paraphrases, 0: only non-paraphrases, 2: both (a mixed tie group).
    kind = np.where(positives == size, 1, np.where(positives == 0, 0, 2))
    following = np.append(kind[1:], -1)
    closes = (kind != following) | (kind == 2)
    end = r.group_end[closes]
    start = np.concatenate(([0], end[:-1] + 1))
    cumulative_labels = np.concatenate(([0], np.cumsum(r.labels, dtype=np.int64)))
    segment_positives = cumulative_labels[end + 1] - cumulative_labels[start]
    return _Segments(end=end, start=start, positive_end=start + segment_positives - 1)


def _resample_statistics(
    cumulative: NDArray[np.int32], segments: _Segments, used: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Best accuracy, AUC and EER for every resample (row of ``cumulative``).

    Positions ``0 .. used-1`` are the metric's scored pairs in score order; draws that fall
    on later positions (labelled pairs whose score failed or is missing) are left out, so a
    resample keeps the pairs it drew that the metric could score.

    Counts stay in int32 (every value is at most 2n) to halve the memory traffic; rows are
    processed in small chunks so the temporaries stay in the CPU cache.
    """
    rows = cumulative.shape[0]
    width = len(segments.end)
    # Drawn pairs through the end of each segment, and paraphrases among them.
    total = np.empty((rows, width), dtype=np.int32)
    positives = np.empty((rows, width), dtype=np.int32)
    best = np.empty(rows, dtype=np.int64)
    pairs = np.empty(rows, dtype=np.float64)
    ends = segments.end + 1
    positive_ends = segments.positive_end + 1
    for first in range(0, rows, _CHUNK):
        chunk = slice(first, first + _CHUNK)
        block = cumulative[chunk]
        t = total[chunk]
        np.take(block, ends, axis=1, out=t)
        negatives = t - np.take(block, positive_ends, axis=1)  # non-paraphrases in each segment
        negatives_through = np.cumsum(negatives, axis=1, dtype=np.int32)
        p = positives[chunk]
        np.subtract(t, negatives_through, out=p)
        # correct = P + (Ntot - (T - P)) = (P - N) + Ntot; the empty point gives Ntot.
        np.subtract(p, negatives_through, out=negatives_through)
        best[chunk] = np.maximum(np.max(negatives_through, axis=1), 0)
        # Mann-Whitney form of the trapezoidal AUC: each non-paraphrase counts the paraphrases
        # above it plus one half of those tied with it, i.e. (P_before + P_through) / 2.
        pairs[chunk] = np.einsum("ij,ij->i", negatives, p, dtype=np.float64, casting="unsafe") + np.einsum(
            "ij,ij->i", negatives[:, 1:], p[:, :-1], dtype=np.float64, casting="unsafe"
        )
    drawn = cumulative[:, used].astype(np.int64)
    pos_total = positives[:, -1].astype(np.int64) if width else np.zeros(rows, dtype=np.int64)
    neg_total = drawn - pos_total
    defined = (pos_total > 0) & (neg_total > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        accuracy = np.where(drawn > 0, (best + neg_total) / np.maximum(drawn, 1), np.nan)
        auc = np.where(defined, pairs / (2.0 * pos_total * neg_total), np.nan)
    eer = sweep_eer(positives, total, pos_total, neg_total, defined)
    return accuracy, auc, eer


def sweep_eer(
    pos: NDArray[Any],
    total: NDArray[Any],
    pos_total: NDArray[Any],
    neg_total: NDArray[Any],
    defined: NDArray[np.bool_],
) -> NDArray[np.float64]:
    """Interpolated EER of every resample, by one vectorised binary search over all rows.

    ``pos`` and ``total``: paraphrases and pairs drawn through the end of each segment along the
    score order (rows x segments, counts or weights); also used by :mod:`.rater_bootstrap`."""
    rows = np.arange(pos.shape[0])
    p_total = np.where(defined, pos_total, 1).astype(np.float64)
    n_total = np.where(defined, neg_total, 1).astype(np.float64)

    def rates(index: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        # index -1 is the point where nothing is called a paraphrase: FAR 0, FRR 1.
        safe = np.maximum(index, 0)
        p = np.where(index >= 0, pos[rows, safe], 0)
        t = np.where(index >= 0, total[rows, safe], 0)
        return (t - p) / n_total, 1.0 - p / p_total

    # FRR - FAR never increases along the sweep: search for its first point <= 0.
    low = np.full(len(rows), -1, dtype=np.int64)
    high = np.full(len(rows), pos.shape[1] - 1, dtype=np.int64)
    while np.any(high - low > 1):
        middle = (low + high) // 2
        far, frr = rates(middle)
        crossed = frr - far <= 0
        high = np.where(crossed, middle, high)
        low = np.where(crossed, low, middle)
    far_a, frr_a = rates(low)
    far_b, frr_b = rates(high)
    gap_a, gap_b = frr_a - far_a, frr_b - far_b
    # The search keeps gap_a > 0 >= gap_b, so the denominator is positive on defined rows.
    spread = gap_a - gap_b
    weight = gap_a / np.where(spread > 0, spread, 1.0)
    eer = far_a + weight * (far_b - far_a)
    return np.where(defined, eer, np.nan)


def _interval(values: NDArray[np.float64], confidence: float) -> Interval | None:
    finite = values[np.isfinite(values)]
    if len(finite) == 0:
        return None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return Interval(float(low), float(high))


def bootstrap(
    r: Ranked, resampler: Resampler, confidence: float = 0.95, drawn_from: int | None = None
) -> BootstrapResult | None:
    """Percentile intervals of the best accuracy (threshold re-optimised in every resample),
    the ROC AUC and the EER; None when there are fewer than two scored pairs.

    ``drawn_from``: how many labelled pairs a resample draws from (default ``r.n``). When it
    is larger than ``r.n``, the extra pairs are those the metric could not score: a resample
    draws from all of them and keeps the ones with a score, so every metric of a corpus
    shares one set of resamples (and the missing scores' randomness is in the interval).
    """
    return bootstrap_many([(r, drawn_from)], resampler, confidence)[0]


def bootstrap_many(
    jobs: Sequence[tuple[Ranked, int | None]], resampler: Resampler, confidence: float = 0.95
) -> list[BootstrapResult | None]:
    """:func:`bootstrap` of several (ranked metric, ``drawn_from``) jobs, one result each.

    Jobs of the same sample size read each chunk of counts before the next one is drawn, so
    the counts are drawn once per sample size and never held whole.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    statistics = _statistics_many(jobs, resampler)
    results: list[BootstrapResult | None] = []
    for (r, _), values in zip(jobs, statistics, strict=True):
        if values is None:
            results.append(None)
            continue
        accuracy, auc, eer = values
        results.append(
            BootstrapResult(
                accuracy=_interval(accuracy, confidence),
                auc=_interval(auc, confidence) if r.both_classes else None,
                eer=_interval(eer, confidence) if r.both_classes else None,
                resamples=resampler.resamples,
                single_class_resamples=int(np.count_nonzero(~np.isfinite(auc))),
            )
        )
    return results


_Statistics = tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]


def _statistics_many(jobs: Sequence[tuple[Ranked, int | None]], resampler: Resampler) -> list[_Statistics | None]:
    """Per job: accuracy, AUC and EER of every resample (None below two scored pairs)."""
    out: list[_Statistics | None] = [None] * len(jobs)
    by_population: dict[int, list[int]] = {}
    for index, (r, drawn_from) in enumerate(jobs):
        population = r.n if drawn_from is None else drawn_from
        if population < r.n:
            raise ValueError(f"drawn_from ({population}) is smaller than the {r.n} scored pairs")
        if r.n >= 2:
            by_population.setdefault(population, []).append(index)
    for population, members in by_population.items():
        segments = [_segments(jobs[index][0]) for index in members]
        columns = [tuple(np.empty(resampler.resamples) for _ in range(3)) for _ in members]
        first = 0
        for block in resampler.chunks(population):
            rows = slice(first, first + block.shape[0])
            for job, index in enumerate(members):
                for target, values in zip(
                    columns[job], _resample_statistics(block, segments[job], jobs[index][0].n), strict=True
                ):
                    target[rows] = values
            first += block.shape[0]
        for job, index in enumerate(members):
            out[index] = (columns[job][0], columns[job][1], columns[job][2])
    return out


def resample_statistics(r: Ranked, resampler: Resampler, drawn_from: int | None = None) -> _Statistics:
    """Best accuracy, AUC and EER of every resample (NaN where one class is missing)."""
    population = r.n if drawn_from is None else drawn_from
    if population < r.n:
        raise ValueError(f"drawn_from ({population}) is smaller than the {r.n} scored pairs")
    segments = _segments(r)
    parts = [_resample_statistics(block, segments, r.n) for block in resampler.chunks(population)]
    accuracy, auc, eer = (np.concatenate([part[k] for part in parts]) for k in range(3))
    return accuracy, auc, eer


def full_sample_statistics(r: Ranked) -> tuple[float, float, float]:
    """The three statistics computed by the resampling code on the sample itself (every pair
    drawn once): equal to the direct computation, which the tests check."""
    cumulative = np.arange(r.n + 1, dtype=np.int32)[None, :]
    accuracy, auc, eer = _resample_statistics(cumulative, _segments(r), r.n)
    return float(accuracy[0]), float(auc[0]), float(eer[0])
