"""Adaptive selection of the next pairs: which pairs a campaign serves first, and with what
probability each pair ends up judged.

The researcher asks which metric agrees with people (the paired ΔAUC of two metrics, or the
significance clusters of all of them). A judgement of a pair where the metrics rank the pair
alike barely moves that answer: both metrics gain or lose the same. A judgement of a pair they
rank far apart moves it most. So each pair gets a *draw weight*

    q = floor + (1 - floor) * d / max(d),

where ``d`` is the spread of the pair's rank-normalised scores across the compared metrics
(for two metrics: |rank_a - rank_b|; for all metrics: the largest minus the smallest rank).
The floor (:data:`FLOOR`) keeps every pair possible, so the weighted statistics cover the
whole pool, not only the disputed part.

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

import numpy as np
from numpy.typing import NDArray
from scipy import stats

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

# The smallest draw weight, relative to the most disputed pair: a pair where the metrics agree
# perfectly is still drawn a tenth as often, so no part of the pool is left out and no weight
# exceeds ten times the smallest (weights that vary more make the weighted figures noisy).
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


def draw_weights(spread: FloatArray, floor: float = FLOOR) -> FloatArray:
    """Draw weights in [floor, 1] proportional to ``floor + (1 - floor) * spread / max(spread)``.

    A pair with no spread known (NaN: not scored by two metrics) gets the largest weight 1: with
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
    if not np.any(served):
        return np.ones(len(weights))
    threshold = float(np.max(keys[served]))
    probabilities: FloatArray = np.minimum(1.0, threshold * weights)
    return probabilities


__all__ = [
    "FLOOR",
    "disagreement",
    "draw_weights",
    "inclusion_probabilities",
    "order_keys",
    "rank_normalise",
    "uniform_draw",
]
