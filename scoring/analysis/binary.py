"""One metric against binary human labels: threshold sweeps, ROC, equal error rate, ranks.

Scores here are *oriented*: higher means the two sentences are closer (the caller negates
lower-is-closer metrics such as LEV and WER). A pair is called a paraphrase when its
oriented score is ``>= t``. Every sweep sorts the scores once and reads the confusion counts
at every distinct threshold from cumulative sums, so it costs one sort instead of one pass
per threshold (the paper's Tables 2 and 4, Figure 1).

Ties in scores form one *tie group*: a threshold cannot separate them, so the operating
points are the ends of tie groups (plus the point where nothing is called a paraphrase).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class Confusion:
    """Counts of one decision rule against the labels (paraphrase = positive class)."""

    tp: float
    fp: float
    tn: float
    fn: float

    @property
    def n(self) -> float:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / self.n if self.n else math.nan

    @property
    def precision(self) -> float:
        # scikit-learn's zero_division=0 convention: no pair called a paraphrase -> 0.
        predicted = self.tp + self.fp
        return self.tp / predicted if predicted else 0.0

    @property
    def recall(self) -> float:
        actual = self.tp + self.fn
        return self.tp / actual if actual else 0.0

    @property
    def f1(self) -> float:
        denominator = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / denominator if denominator else 0.0


@dataclass(frozen=True)
class Ranked:
    """Labelled scores sorted once, with the confusion counts at the end of each tie group.

    ``thresholds[j]`` is the j-th distinct oriented score from the top; calling every pair
    with a score ``>= thresholds[j]`` a paraphrase gives ``tp[j]`` true and ``fp[j]`` false
    positives. Inside a tie group paraphrases come first (the bootstrap relies on it).
    """

    scores: FloatArray
    labels: BoolArray
    group_end: IntArray
    thresholds: FloatArray
    tp: IntArray
    fp: IntArray
    positives: int
    negatives: int

    @property
    def n(self) -> int:
        return self.positives + self.negatives

    @property
    def both_classes(self) -> bool:
        return self.positives > 0 and self.negatives > 0


def rank(scores: NDArray[np.floating] | list[float], labels: NDArray[np.bool_] | list[bool]) -> Ranked:
    """Sort oriented ``scores`` (finite) with their ``labels`` (True = paraphrase)."""
    values = np.asarray(scores, dtype=np.float64)
    truth = np.asarray(labels, dtype=bool)
    if values.shape != truth.shape or values.ndim != 1:
        raise ValueError(f"scores and labels must be 1-D arrays of the same length, got {values.shape} {truth.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError("scores must be finite: leave failed (NaN) scores out before ranking")
    # Primary key: score, descending; secondary: paraphrases first inside a tie group.
    order = np.lexsort((~truth, -values))
    sorted_scores = values[order]
    sorted_labels = truth[order]
    n = len(values)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Ranked(sorted_scores, sorted_labels, empty, np.zeros(0), empty, empty, 0, 0)
    group_end = np.append(np.flatnonzero(sorted_scores[1:] != sorted_scores[:-1]), n - 1).astype(np.int64)
    cumulative = np.cumsum(sorted_labels, dtype=np.int64)
    tp = cumulative[group_end]
    fp = group_end + 1 - tp
    positives = int(cumulative[-1])
    return Ranked(
        scores=sorted_scores,
        labels=sorted_labels,
        group_end=group_end,
        thresholds=sorted_scores[group_end],
        tp=tp,
        fp=fp,
        positives=positives,
        negatives=n - positives,
    )


def _points(r: Ranked) -> tuple[FloatArray, FloatArray]:
    """True and false positives at every operating point, the "nothing" point first."""
    return np.concatenate(([0.0], r.tp)), np.concatenate(([0.0], r.fp))


def point_threshold(r: Ranked, index: int) -> float | None:
    """Oriented threshold of operating point ``index`` (0 = nothing called a paraphrase -> None)."""
    return None if index == 0 else float(r.thresholds[index - 1])


@dataclass(frozen=True)
class ThresholdResult:
    """A decision threshold (oriented units; None: no pair is called a paraphrase) and its counts."""

    threshold: float | None
    confusion: Confusion


def best_accuracy(r: Ranked) -> ThresholdResult | None:
    """The threshold that maximises accuracy (Table 2); ties go to the highest threshold."""
    if r.n == 0:
        return None
    tp, fp = _points(r)
    correct = tp + (r.negatives - fp)
    best = int(np.argmax(correct))  # first maximum = highest threshold
    return ThresholdResult(point_threshold(r, best), _confusion(r, tp[best], fp[best]))


def _confusion(r: Ranked, tp: float, fp: float) -> Confusion:
    return Confusion(tp=float(tp), fp=float(fp), tn=float(r.negatives - fp), fn=float(r.positives - tp))


def at_threshold(scores: FloatArray, labels: BoolArray, threshold: float) -> Confusion:
    """Counts when every pair with an oriented score ``>= threshold`` is called a paraphrase."""
    predicted = np.asarray(scores) >= threshold
    truth = np.asarray(labels, dtype=bool)
    tp = float(np.count_nonzero(predicted & truth))
    fp = float(np.count_nonzero(predicted & ~truth))
    fn = float(np.count_nonzero(~predicted & truth))
    tn = float(len(truth) - tp - fp - fn)
    return Confusion(tp=tp, fp=fp, tn=tn, fn=fn)


def roc(r: Ranked) -> tuple[FloatArray, FloatArray] | None:
    """False and true positive rates at every operating point, from (0, 0) to (1, 1)."""
    if not r.both_classes:
        return None
    tp, fp = _points(r)
    return fp / r.negatives, tp / r.positives


def roc_auc(r: Ranked) -> float | None:
    """Area under the ROC curve (trapezoids: a tied paraphrase/non-paraphrase counts one half)."""
    curve = roc(r)
    if curve is None:
        return None
    fpr, tpr = curve
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1])) / 2)


@dataclass(frozen=True)
class EqualErrorRate:
    """Where the false acceptance rate (non-paraphrases called paraphrases) equals the false
    rejection rate (paraphrases missed), with the threshold of the nearest operating point."""

    rate: float
    threshold: float | None


def equal_error_rate(r: Ranked) -> EqualErrorRate | None:
    """EER (Table 4), linearly interpolated between the two operating points around the crossing.

    Along the sweep the false rejection rate only falls and the false acceptance rate only
    rises, so their difference crosses zero once; between two operating points the ROC curve
    is a straight segment, on which the crossing is found exactly.
    """
    curve = roc(r)
    if curve is None:
        return None
    fpr, tpr = curve
    gap = (1.0 - tpr) - fpr  # starts at 1 (nothing accepted), ends at -1 (everything accepted)
    after = int(np.argmax(gap <= 0))
    before = after - 1
    if gap[after] == 0:
        return EqualErrorRate(float(fpr[after]), point_threshold(r, after))
    weight = gap[before] / (gap[before] - gap[after])
    rate = fpr[before] + weight * (fpr[after] - fpr[before])
    nearest = before if weight < 0.5 else after
    return EqualErrorRate(float(rate), point_threshold(r, nearest))


@dataclass(frozen=True)
class RankCurves:
    """Accuracy and F1 when the top-k pairs by score are called paraphrases, k = 0..n.

    Within a tie group the order is arbitrary, so the counts there are the expectation over
    a random order: a straight line between the ends of the group.
    """

    k: FloatArray
    true_positives: FloatArray
    accuracy: FloatArray
    f1: FloatArray
    precision: FloatArray
    recall: FloatArray


def rank_curves(r: Ranked) -> RankCurves | None:
    """Figure 1 of the ParaPLUIE paper and Figure 2 of the TALN 2024 paper."""
    if r.n == 0:
        return None
    k = np.arange(r.n + 1, dtype=np.float64)
    ends = np.concatenate(([0.0], r.group_end + 1.0))
    tp = np.interp(k, ends, np.concatenate(([0.0], r.tp)))
    accuracy = (tp + (r.negatives - (k - tp))) / r.n
    denominator = k + r.positives
    f1 = np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=denominator > 0)
    precision = np.divide(tp, k, out=np.zeros_like(tp), where=k > 0)
    recall = tp / r.positives if r.positives else np.zeros_like(tp)
    return RankCurves(k=k, true_positives=tp, accuracy=accuracy, f1=f1, precision=precision, recall=recall)


@dataclass(frozen=True)
class ClassSummary:
    """Mean and sample standard deviation (n - 1) of the scores of one class (Table 1)."""

    mean: float | None
    std: float | None
    n: int


def class_summary(values: FloatArray) -> ClassSummary:
    """Mean and standard deviation in the metric's own units; std needs two values."""
    n = len(values)
    if n == 0:
        return ClassSummary(None, None, 0)
    mean = float(np.mean(values))
    std = float(np.std(values, ddof=1)) if n > 1 else None
    return ClassSummary(mean, std, n)


@dataclass(frozen=True)
class BoxStats:
    """Five-number summary with Tukey whiskers (1.5 IQR) for a box plot drawn client-side."""

    min: float
    q1: float
    median: float
    q3: float
    max: float
    mean: float
    whisker_min: float
    whisker_max: float
    outliers: list[float]
    n: int


def box_stats(values: FloatArray, max_outliers: int = 60) -> BoxStats | None:
    """Quartiles (linear interpolation), whiskers at the last values within 1.5 IQR, and an
    evenly spread subset of at most ``max_outliers`` outliers (the chart needs no more)."""
    if len(values) == 0:
        return None
    q1, median, q3 = (float(q) for q in np.percentile(values, [25, 50, 75]))
    spread = 1.5 * (q3 - q1)
    inside = values[(values >= q1 - spread) & (values <= q3 + spread)]
    outliers = np.sort(values[(values < q1 - spread) | (values > q3 + spread)])
    if len(outliers) > max_outliers:
        outliers = outliers[np.linspace(0, len(outliers) - 1, max_outliers).round().astype(int)]
    return BoxStats(
        min=float(np.min(values)),
        q1=q1,
        median=median,
        q3=q3,
        max=float(np.max(values)),
        mean=float(np.mean(values)),
        whisker_min=float(np.min(inside)),
        whisker_max=float(np.max(inside)),
        outliers=[float(v) for v in outliers],
        n=len(values),
    )


def downsample_indices(length: int, limit: int) -> IntArray:
    """At most ``limit`` evenly spaced indices of a curve, always keeping both ends."""
    if length <= limit:
        return np.arange(length, dtype=np.int64)
    return np.unique(np.linspace(0, length - 1, limit).round().astype(np.int64))
