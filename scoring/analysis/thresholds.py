"""Threshold honesty: accuracy at a threshold chosen on *other* pairs, and the natural threshold.

The paper's best threshold (Table 2) is fitted on the very pairs it is measured on, so its
accuracy is optimistic. Here the threshold is chosen by k-fold cross-validation: for each fold
the best-accuracy threshold of the other folds decides the held-out pairs, and accuracy / F1
are counted over all held-out decisions. For a metric with a natural threshold (ParaPLUIE: 0)
the accuracy there is shown beside the bootstrap interval of the best threshold's position:
when 0 lies inside, the data cannot tell the fitted threshold from the natural one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from sklearn.model_selection import KFold, StratifiedKFold

from scoring.analysis.binary import Confusion, Ranked, best_accuracy, rank

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

DEFAULT_FOLDS = 5
TIE_RULE = "highest"  # among thresholds tied for the best accuracy, the highest is used


@dataclass(frozen=True)
class CrossValidated:
    """Held-out decisions of k-fold cross-validation (thresholds in oriented units)."""

    folds: int
    accuracy: float
    f1: float
    correct: NDArray[np.bool_]  # per scored pair, in input order
    thresholds: list[float | None]  # chosen on the other folds, one per fold
    fold: NDArray[np.int64]  # per scored pair, in input order: the fold that held it out


@dataclass(frozen=True)
class TiedBest:
    """All operating points that reach the best accuracy (oriented thresholds; None: nothing
    called a paraphrase)."""

    count: int
    highest: float | None
    lowest: float | None


def tied_best(r: Ranked) -> TiedBest | None:
    """The thresholds tied for the best accuracy; :func:`binary.best_accuracy` takes the highest."""
    if r.n == 0:
        return None
    tp = np.concatenate(([0.0], r.tp))
    fp = np.concatenate(([0.0], r.fp))
    correct = tp + (r.negatives - fp)
    best = np.flatnonzero(correct == correct.max())
    thresholds = [None if index == 0 else float(r.thresholds[index - 1]) for index in best.tolist()]
    return TiedBest(count=len(best), highest=thresholds[0], lowest=thresholds[-1])


def cross_validated(
    scores: FloatArray, labels: BoolArray, folds: int = DEFAULT_FOLDS, seed: int = 0
) -> CrossValidated | None:
    """k-fold cross-validated accuracy and F1 of oriented ``scores`` (finite) against ``labels``.

    Stratified folds when each class has at least ``folds`` pairs, plain shuffled folds
    otherwise; None when there are fewer pairs than folds.
    """
    n = len(scores)
    if n < folds or folds < 2:
        return None
    positives = int(np.count_nonzero(labels))
    if min(positives, n - positives) >= folds:
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(scores, labels)
    else:
        splitter = KFold(n_splits=folds, shuffle=True, random_state=seed).split(scores)
    predicted = np.zeros(n, dtype=bool)
    fold = np.zeros(n, dtype=np.int64)
    chosen: list[float | None] = []
    for index, (train, test) in enumerate(splitter):
        fold[test] = index
        best = best_accuracy(rank(scores[train], labels[train]))
        threshold = None if best is None else best.threshold
        chosen.append(threshold)
        predicted[test] = False if threshold is None else scores[test] >= threshold
    truth = labels.astype(bool)
    confusion = Confusion(
        tp=float(np.count_nonzero(predicted & truth)),
        fp=float(np.count_nonzero(predicted & ~truth)),
        tn=float(np.count_nonzero(~predicted & ~truth)),
        fn=float(np.count_nonzero(~predicted & truth)),
    )
    return CrossValidated(folds, confusion.accuracy, confusion.f1, predicted == truth, chosen, fold)


def best_threshold_interval(
    scores: FloatArray, labels: BoolArray, resamples: int, seed: int, confidence: float = 0.95
) -> tuple[float, float] | None:
    """Percentile interval of the best-accuracy threshold (oriented) over bootstrap resamples.

    Each resample's counts are read along the score order once: correct(k) = P drawn above
    the cut + N drawn below it; the highest cut among the best ones is taken, as the table does.
    """
    n = len(scores)
    if n < 2 or resamples < 1:
        return None
    order = np.argsort(-scores, kind="stable")
    ordered_scores = scores[order]
    ends = np.append(np.flatnonzero(ordered_scores[1:] != ordered_scores[:-1]), n - 1)
    positive = labels[order].astype(np.float64)
    chosen: list[FloatArray] = []
    for index, first in enumerate(range(0, resamples, 128)):
        size = min(128, resamples - first)
        rng = np.random.default_rng([seed, n, 31, index])
        draws = rng.integers(0, n, size=(size, n))
        counts = np.bincount((draws + (np.arange(size) * n)[:, None]).ravel(), minlength=size * n).reshape(size, n)
        ordered = counts[:, order].astype(np.float64)
        tp = np.cumsum(ordered * positive, axis=1)[:, ends]
        fp = np.cumsum(ordered * (1 - positive), axis=1)[:, ends]
        negatives = fp[:, -1:]
        correct = np.concatenate((negatives, tp + negatives - fp), axis=1)
        best = np.argmax(correct, axis=1)
        # Point 0 calls nothing a paraphrase: its threshold is above every score.
        values = np.where(best == 0, np.inf, ordered_scores[ends][np.maximum(best - 1, 0)])
        chosen.append(values)
    all_values = np.concatenate(chosen)
    # Resamples where calling nothing a paraphrase was best have no threshold to place.
    all_values = all_values[np.isfinite(all_values)]
    if not len(all_values):
        return None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(all_values, [tail, 100 - tail])
    return float(low), float(high)


def natural_accuracy(scores: FloatArray, labels: BoolArray, threshold: float) -> float:
    """Accuracy when every pair with an oriented score >= ``threshold`` is a paraphrase."""
    if not len(scores):
        return math.nan
    return float(np.mean((scores >= threshold) == labels.astype(bool)))
