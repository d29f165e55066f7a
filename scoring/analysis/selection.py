"""Adaptive selection of the next pairs: which pairs a campaign serves first, and with what
probability each pair ends up judged.

The researcher asks which metric agrees with people (the paired ΔAUC of two metrics, or the
significance clusters of all of them). Each answer moves every ΔAUC by the pair's *influence*:
its DeLong placement value minus the AUC, over the size of its class, for one metric minus the
other. A pair both metrics rank alike barely moves it; a pair they rank far apart moves it most,
and a paraphrase in a pool with few paraphrases more than a non-paraphrase. Poisson sampling
with inclusion probabilities proportional to the size of the influence is the design of least
variance for a given number of judgements (Neyman allocation). The labels are not known when
the order is planned, so :func:`expected_influence` takes each pair's expected squared
influence, a paraphrase with probability ``p`` read from the metrics' scores
(:func:`paraphrase_probability`), on every compared ΔAUC scaled by its standard error, and
each pair gets the *draw weight*

    q = floor + (1 - floor) * size / max(size),

``size`` the root of the sum of those squares. The floor (:data:`FLOOR`) keeps every pair
possible, so the weighted statistics cover the whole pool, not only the disputed part.
:func:`disagreement` (the spread of the rank-normalised scores) is the draw used before.

The order is *sequential Poisson sampling* (Ohlsson 1998; order sampling, Rosén 1997): each
pair draws ``u`` uniform in (0, 1) from the project seed and its id (SHA-256: the same in every
process) and gets the key ``u / q``; pairs are served by increasing key. When the campaign has
served every pair whose key is below ``t``, the served set is exactly a Poisson sample with
inclusion probability ``min(1, t q)`` per pair (u < t q). The statistics weight each judged pair
by ``1 / min(1, t q)`` with ``t`` the largest key served (:func:`inclusion_probabilities`); the
Hájek estimators of :mod:`.weighted` make the common factor ``t`` cancel except where a pair is
certain (``t q >= 1``). Once the whole pool is judged every probability is 1 and the weighted
figures equal the unweighted ones.

Plain Python over arrays: no Django (``scoring.selection`` reads the scores and writes the order).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from scoring.analysis.weighted import weighted_components

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

# The smallest draw weight, relative to the most influential pair: a pair that can barely move
# any ΔAUC is still drawn a tenth as often, so no part of the pool is left out and no weight
# exceeds ten times the smallest. Weights that vary more make the weighted figures noisy, and
# the ratio estimators (Pearson, Spearman) biased by order 1 / (effective sample size): with a
# floor of 0.05 the weighted Pearson of 120 pairs drawn from 600 was off by 4 Monte-Carlo
# standard errors (tests/test_analysis_weighted.py), for no clear saving in the benchmark.
FLOOR = 0.1


def rank_normalise(values: FloatArray) -> FloatArray:
    """Mid-ranks scaled to [0, 1] (0 = the lowest score of the pool); NaN stays NaN."""
    out = np.full(len(values), np.nan)
    finite = np.isfinite(values)
    n = int(np.count_nonzero(finite))
    if n == 1:
        out[finite] = 0.5
    elif n > 1:
        out[finite] = (stats.rankdata(values[finite]) - 1) / (n - 1)
    return out


def disagreement(oriented: FloatArray) -> FloatArray:
    """Per pair: the spread (largest minus smallest) of its rank-normalised scores across the
    metrics (rows of ``oriented``, each oriented so that higher means closer in meaning).

    NaN where fewer than two metrics scored the pair (nothing to compare yet).
    """
    if oriented.ndim != 2 or oriented.shape[0] < 2:
        raise ValueError("disagreement needs the scores of at least two metrics (metrics x pairs)")
    ranks = np.vstack([rank_normalise(row) for row in oriented])
    finite = np.isfinite(ranks)
    counted = finite.sum(axis=0)
    high = np.where(finite, ranks, -np.inf).max(axis=0)
    low = np.where(finite, ranks, np.inf).min(axis=0)
    spread = np.where(counted >= 2, high - low, np.nan)
    return np.asarray(spread, dtype=np.float64)


def paraphrase_probability(oriented: FloatArray) -> FloatArray:
    """Per pair, a label-free guess of the chance that people call it a paraphrase: the mean of its
    rank-normalised scores over the metrics that scored it (0.5 where none did), kept in
    [0.02, 0.98] so that every pair can fall in either class."""
    ranks = np.vstack([rank_normalise(row) for row in oriented])
    finite = np.isfinite(ranks)
    counted = finite.sum(axis=0)
    total = np.where(finite, ranks, 0.0).sum(axis=0)
    mean = np.where(counted > 0, total / np.maximum(counted, 1), 0.5)
    return np.asarray(np.clip(mean, 0.02, 0.98), dtype=np.float64)


def expected_influence(oriented: FloatArray, probability: FloatArray | None = None) -> FloatArray:
    """Per pair, the norm of its expected influence on every paired ΔAUC of the metrics (rows of
    ``oriented``, higher = closer in meaning), each ΔAUC scaled by its own standard error.

    A pair's influence on the (Hájek) AUC of a metric is its DeLong placement value minus the
    AUC, over the size of its class: ``(V10_i - A) / n_pos`` for a paraphrase, ``(V01_i - A) /
    n_neg`` for a non-paraphrase; on a ΔAUC, the difference of the two metrics' influences. The
    labels are unknown when the order is planned, so each pair counts as a paraphrase with the
    probability ``p`` (:func:`paraphrase_probability` unless given) and as a non-paraphrase with
    ``1 - p``: the placement values come from the pool weighted by ``p`` and ``1 - p``, and the
    squared influence is its expectation ``p u_pos² + (1 - p) u_neg²``. Dividing each ΔAUC's
    influences by the root of their sum (its standard error) makes every comparison count by how
    much a pair moves its test statistic. The result ``sqrt(Σ_k E[u_ik²] / SE_k²)`` is the size
    for which Poisson inclusion probabilities ``π_i ∝ size_i`` minimise the summed variance of
    all the standardised ΔAUCs (Neyman allocation: minimise ``Σ (1/π_i - 1) z_i²`` subject to
    ``Σ π_i = n``).

    Pairs not scored by every metric get NaN (:func:`draw_weights` serves them early).
    """
    if oriented.ndim != 2 or oriented.shape[0] < 2:
        raise ValueError("the influence needs the scores of at least two metrics (metrics x pairs)")
    size = np.full(oriented.shape[1], np.nan)
    scored = np.all(np.isfinite(oriented), axis=0)
    if np.count_nonzero(scored) < 2:
        return size
    p = paraphrase_probability(oriented) if probability is None else probability
    influences = standardised_influences(oriented[:, scored], p[scored])
    size[scored] = np.sqrt(np.sum(influences.expected_squares(), axis=0))
    return size


@dataclass(frozen=True)
class Influences:
    """Each pair's influence on every paired ΔAUC (rows: the comparisons, metric pairs in order),
    scaled by the ΔAUC's standard error: ``positive`` if the pair is a paraphrase, ``negative``
    if not, with ``probability`` the chance that it is one."""

    positive: FloatArray
    negative: FloatArray
    probability: FloatArray

    def expected_squares(self) -> FloatArray:
        """``p u_pos² + (1 - p) u_neg²`` per comparison and pair."""
        p = self.probability
        return p * self.positive**2 + (1 - p) * self.negative**2


def standardised_influences(oriented: FloatArray, probability: FloatArray) -> Influences:
    """The influences of :func:`expected_influence`, every pair scored by every metric (rows of
    ``oriented``); comparisons whose ΔAUC cannot move (variance 0) are all zeros."""
    p = probability
    both = np.concatenate([np.ones(len(p), dtype=bool), np.zeros(len(p), dtype=bool)])
    weights = np.concatenate([p, 1 - p])
    positives, negatives = float(np.sum(p)), float(np.sum(1 - p))
    centred_pos, centred_neg = [], []
    for row in oriented:
        parts = weighted_components(np.concatenate([row, row]), both, weights)
        if parts is None:  # pragma: no cover - both classes always carry weight here
            raise ValueError("the influence needs weight on both classes")
        centred_pos.append(parts.v10 - parts.auc)
        centred_neg.append(parts.v01 - parts.auc)
    rows_pos, rows_neg = [], []
    for a in range(len(centred_pos)):
        for b in range(a + 1, len(centred_pos)):
            u_pos = (centred_pos[a] - centred_pos[b]) / positives
            u_neg = (centred_neg[a] - centred_neg[b]) / negatives
            variance = float(np.sum(p * u_pos**2 + (1 - p) * u_neg**2))
            scale = 1 / np.sqrt(variance) if variance > 0 else 0.0
            rows_pos.append(u_pos * scale)
            rows_neg.append(u_neg * scale)
    return Influences(np.array(rows_pos), np.array(rows_neg), p)


def draw_weights(spread: FloatArray, floor: float = FLOOR) -> FloatArray:
    """Draw weights in [floor, 1] proportional to ``floor + (1 - floor) * spread / max(spread)``.

    A pair with nothing known (NaN: not scored by the metrics compared) gets the largest weight 1: with
    nothing to say it is uninformative, it is served early rather than left to the end.
    """
    if not 0 < floor <= 1:
        raise ValueError(f"the floor must lie in (0, 1], got {floor}")
    known = np.isfinite(spread)
    top = float(np.max(spread[known])) if np.any(known) else 0.0
    weights = np.ones(len(spread))
    if top > 0:
        weights[known] = floor + (1 - floor) * spread[known] / top
    return weights


def uniform_draw(seed: int, salt: str, pair_id: int) -> float:
    """A uniform number in (0, 1) from the seed, a salt (the campaign) and the pair id (SHA-256)."""
    digest = hashlib.sha256(f"{seed}:{salt}:{pair_id}".encode()).digest()
    return (int.from_bytes(digest[:8], "big") + 0.5) / 2**64


def order_keys(weights: FloatArray, uniforms: FloatArray) -> FloatArray:
    """The order keys ``u / q``: serving by increasing key is sequential Poisson sampling."""
    if np.any(weights <= 0):
        raise ValueError("every draw weight must be positive (the floor keeps every pair possible)")
    keys: FloatArray = uniforms / weights
    return keys


def inclusion_probabilities(weights: FloatArray, keys: FloatArray, served: BoolArray) -> FloatArray:
    """Each pair's probability of being among the served pairs: ``min(1, t q)``, ``t`` the
    largest key served (an empty campaign: all 1, nothing is weighted yet)."""
    if not np.any(served) or np.all(served):
        return np.ones(len(weights))
    threshold = float(np.max(keys[served]))
    probabilities: FloatArray = np.minimum(1.0, threshold * weights)
    return probabilities


__all__ = [
    "FLOOR",
    "disagreement",
    "draw_weights",
    "expected_influence",
    "inclusion_probabilities",
    "order_keys",
    "paraphrase_probability",
    "rank_normalise",
    "uniform_draw",
]
