"""Calibration of a log-odds metric (ParaPLUIE): its score read as p(paraphrase) = 1 / (1 + e^-score).

Reliability diagram over equal-width bins of p, expected calibration error
ECE = sum_b (n_b / n) |mean target_b - mean p_b| and Brier score mean (p - target)^2, against the
human binary label or, per pair, the share of volunteers who answered "paraphrase" (a target in
[0, 1]).

Temperature scaling reads p = 1 / (1 + e^(-score / T)): T is fitted by maximum likelihood (the
log-loss of the targets, each pair weighing one), cross-fitted so that no pair's calibrated
probability comes from a T fitted on that pair: the pairs are split into k folds by a seeded
permutation, each fold gets the T fitted on the other k - 1, and the ECE after temperature is
computed on those held-out probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq
from scipy.special import expit

DEFAULT_BINS = 10
DEFAULT_FOLDS = 5
# Past these slopes (1/T) the fit is called degenerate: the scores separate the targets perfectly.
MAX_SLOPE = 2.0**30


@dataclass(frozen=True)
class ReliabilityBin:
    low: float
    high: float
    n: int
    mean_probability: float | None
    paraphrase_share: float | None


@dataclass(frozen=True)
class Calibration:
    n: int
    ece: float
    brier: float
    bins: list[ReliabilityBin]


def calibration(scores: NDArray[np.float64], labels: NDArray[np.bool_], bins: int = DEFAULT_BINS) -> Calibration | None:
    """Reliability, ECE and Brier of ``scores`` (log-odds, finite) against ``labels``; None when empty."""
    return reliability(expit(scores), labels.astype(np.float64), bins)


def reliability(
    probabilities: NDArray[np.float64], targets: NDArray[np.float64], bins: int = DEFAULT_BINS
) -> Calibration | None:
    """Reliability bins, ECE and Brier of ``probabilities`` against ``targets`` in [0, 1]; None when empty."""
    n = len(probabilities)
    if n == 0:
        return None
    p = probabilities
    truth = targets
    edges = np.linspace(0.0, 1.0, bins + 1)
    # Bin b holds edges[b] <= p < edges[b+1]; p = 1 goes to the last bin.
    which = np.minimum(np.searchsorted(edges, p, side="right") - 1, bins - 1)
    rows: list[ReliabilityBin] = []
    ece = 0.0
    for b in range(bins):
        inside = which == b
        count = int(np.count_nonzero(inside))
        mean_p = float(p[inside].mean()) if count else None
        share = float(truth[inside].mean()) if count else None
        if count:
            ece += count / n * abs(share - mean_p)  # type: ignore[operator]
        rows.append(ReliabilityBin(float(edges[b]), float(edges[b + 1]), count, mean_p, share))
    return Calibration(n=n, ece=float(ece), brier=float(np.mean((p - truth) ** 2)), bins=rows)


def _slope_gradient(scores: NDArray[np.float64], targets: NDArray[np.float64], slope: float) -> float:
    """d/d(slope) of the mean log-loss of p = expit(slope * score): increasing in the slope."""
    return float(np.mean((expit(slope * scores) - targets) * scores))


def fit_temperature(scores: NDArray[np.float64], targets: NDArray[np.float64]) -> float | None:
    """The T > 0 that minimises the log-loss of ``targets`` under p = expit(score / T).

    The log-loss is convex in the slope 1/T, so its minimum is the root of the gradient. None
    when there is none: no pair, scores that do not rise with the targets (the slope would be
    0 or negative) or scores that separate them perfectly (T would be 0).
    """
    if len(scores) == 0 or _slope_gradient(scores, targets, 0.0) >= 0:
        return None
    high = 1.0
    while (gradient := _slope_gradient(scores, targets, high)) < 0:
        high *= 2
        if high > MAX_SLOPE:
            return None
    if gradient == 0:  # the loss flattened out before turning up: separated scores (T -> 0)
        return None
    slope = brentq(lambda b: _slope_gradient(scores, targets, b), 0.0, high, xtol=1e-12, rtol=1e-12)
    return float(1.0 / slope)


def fold_of_pairs(n: int, folds: int, seed: int) -> NDArray[np.int64]:
    """The fold of each of ``n`` pairs: a seeded permutation dealt round-robin into ``folds`` folds."""
    fold = np.empty(n, dtype=np.int64)
    fold[np.random.default_rng(seed).permutation(n)] = np.arange(n) % folds
    return fold


@dataclass(frozen=True)
class CrossFit:
    """Cross-fitted temperature: each pair's fold, each fold's T (fitted without that fold's
    pairs; None when that fit has no answer) and the held-out calibrated probabilities (a fold
    without a T keeps T = 1)."""

    fold: NDArray[np.int64]
    temperatures: list[float | None]
    probabilities: NDArray[np.float64]


def cross_fitted_temperature(
    scores: NDArray[np.float64], targets: NDArray[np.float64], folds: int = DEFAULT_FOLDS, seed: int = 0
) -> CrossFit | None:
    """Temperature scaling fitted on k - 1 folds of the pairs and applied to the held-out one;
    None with fewer than two pairs per fold."""
    n = len(scores)
    if folds < 2 or n < 2 * folds:
        return None
    fold = fold_of_pairs(n, folds, seed)
    temperatures: list[float | None] = []
    probabilities = np.empty(n, dtype=np.float64)
    for k in range(folds):
        held = fold == k
        temperature = fit_temperature(scores[~held], targets[~held])
        temperatures.append(temperature)
        probabilities[held] = expit(scores[held] / (1.0 if temperature is None else temperature))
    return CrossFit(fold, temperatures, probabilities)
