"""Statistics of the whole pool from an adaptively selected sample: inverse-probability weights.

When a campaign serves the pairs where the metrics disagree first (:mod:`.selection`), the
judged pairs are no longer a fair sample of the pool: an unweighted AUC would describe the
disputed pairs, where every metric does worse. Each judged pair therefore counts with the
weight ``w = 1 / π``, ``π`` its inclusion probability.

Which estimator, and why **Hájek**, not plain Horvitz-Thompson: the AUC and the correlations are
ratios (a weighted count of ordered pairs over the weighted number of pairs compared, a weighted
covariance over weighted variances). Horvitz-Thompson estimates each total without bias, but
dividing by the *known* pool totals makes the estimate swing with the random sample size;
dividing by their own HT estimates (Hájek 1971) cancels that swing, needs no pool size, and is
invariant to a common factor in ``π`` (sequential Poisson sampling knows ``π`` only up to the
threshold ``t``). The price: a ratio of unbiased totals is unbiased only to first order (a bias
of order 1/n, far below the standard error; the tests check the mean of many draws against the
full-pool value within Monte-Carlo error). :func:`ht_total` is the plain, exactly unbiased
Horvitz-Thompson total, for counts.

- AUC: ``Σ_{i pos} Σ_{j neg} w_i w_j ψ(s_i, s_j) / (Σ_pos w)(Σ_neg w)``, ψ = 1 when the
  paraphrase scores higher, 1/2 on a tie: the weighted Mann-Whitney statistic.
- Its standard error, and the paired ΔAUC test: DeLong's structural components, weighted
  (:func:`weighted_delong`); with equal weights they are DeLong's exactly. The variance is the
  with-replacement linearisation ``Σ w_i² (V_i - A)² / W²`` (times n / (n - 1)), which treats
  the pool as a sample from all the pairs one could ask about: the question is about the
  metrics, not about this one file, so the full pool still has an interval.
- Pearson: the weighted covariance over the weighted standard deviations.
- Spearman: Pearson of the weighted mid-distribution ranks (each pair's estimated share of the
  pool below it, ties counted half); with equal weights it is Spearman's coefficient exactly.

Plain Python over arrays: no Django.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from scoring.analysis.paired import holm

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def _check(weights: FloatArray, n: int) -> None:
    if len(weights) != n:
        raise ValueError(f"{len(weights)} weights for {n} values")
    if np.any(~np.isfinite(weights)) or np.any(weights <= 0):
        raise ValueError("weights must be positive and finite (1 / inclusion probability)")


def ht_total(values: FloatArray, probabilities: FloatArray) -> float:
    """Horvitz-Thompson estimate of the pool total of ``values`` from the sampled pairs:
    ``Σ y_i / π_i`` (exactly unbiased under any design with these inclusion probabilities)."""
    _check(probabilities, len(values))
    return float(np.sum(values / probabilities))


def hajek_mean(values: FloatArray, weights: FloatArray) -> float | None:
    """The weighted mean ``Σ w y / Σ w`` (Hájek): the pool mean, from the sample."""
    _check(weights, len(values))
    if len(values) == 0:
        return None
    return float(np.sum(weights * values) / np.sum(weights))


def _weight_below(sorted_values: FloatArray, cumulative: FloatArray, at: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per value of ``at``: the weight of the sorted values strictly below it, and equal to it."""
    left = np.searchsorted(sorted_values, at, side="left")
    right = np.searchsorted(sorted_values, at, side="right")
    return cumulative[left], cumulative[right] - cumulative[left]


def _cumulative(values: FloatArray, weights: FloatArray) -> tuple[FloatArray, FloatArray]:
    order = np.argsort(values, kind="mergesort")
    return values[order], np.concatenate([[0.0], np.cumsum(weights[order])])


@dataclass(frozen=True)
class WeightedComponents:
    """The weighted structural components of one metric's AUC (DeLong's V10 and V01, weighted)."""

    v10: FloatArray  # each paraphrase: the weighted share of non-paraphrases it scores above
    v01: FloatArray  # each non-paraphrase: the weighted share of paraphrases scored above it
    w10: FloatArray  # the paraphrases' weights, normalised to sum 1
    w01: FloatArray  # the non-paraphrases' weights, normalised to sum 1

    @property
    def auc(self) -> float:
        return float(np.sum(self.w10 * self.v10))


def weighted_components(scores: FloatArray, positive: BoolArray, weights: FloatArray) -> WeightedComponents | None:
    """The components, or None without both classes."""
    _check(weights, len(scores))
    pos, neg = scores[positive], scores[~positive]
    wp, wn = weights[positive], weights[~positive]
    if len(pos) == 0 or len(neg) == 0:
        return None
    neg_sorted, neg_cum = _cumulative(neg, wn)
    below, equal = _weight_below(neg_sorted, neg_cum, pos)
    v10 = (below + 0.5 * equal) / neg_cum[-1]
    pos_sorted, pos_cum = _cumulative(pos, wp)
    below_p, equal_p = _weight_below(pos_sorted, pos_cum, neg)
    v01 = (pos_cum[-1] - below_p - equal_p + 0.5 * equal_p) / pos_cum[-1]
    return WeightedComponents(v10, v01, wp / wp.sum(), wn / wn.sum())


def hajek_auc(scores: FloatArray, positive: BoolArray, weights: FloatArray) -> float | None:
    """The weighted (Hájek) AUC of ``scores`` (higher = paraphrase), or None without both classes."""
    parts = weighted_components(scores, positive, weights)
    return None if parts is None else parts.auc


def _linearised_variance(values: FloatArray, normalised: FloatArray) -> float:
    """``n / (n - 1) Σ w² (v - mean)²`` with weights summing to 1: DeLong's variance of a mean."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = float(np.sum(normalised * values))
    return float(n / (n - 1) * np.sum(normalised**2 * (values - mean) ** 2))


def auc_standard_error(parts: WeightedComponents) -> float:
    """Standard error of the weighted AUC (weighted DeLong, with-replacement linearisation)."""
    return math.sqrt(_linearised_variance(parts.v10, parts.w10) + _linearised_variance(parts.v01, parts.w01))


@dataclass(frozen=True)
class PairedDifference:
    difference: float
    standard_error: float
    p_value: float


def weighted_delong(a: WeightedComponents, b: WeightedComponents) -> PairedDifference:
    """The paired test of AUC(A) - AUC(B) on the same weighted pairs (DeLong et al. 1988, weighted).

    Equal weights give DeLong's test exactly (:func:`scoring.analysis.paired.delong_test`).
    """
    d10, d01 = a.v10 - b.v10, a.v01 - b.v01
    difference = a.auc - b.auc
    variance = _linearised_variance(d10, a.w10) + _linearised_variance(d01, a.w01)
    se = math.sqrt(max(variance, 0.0))
    if se == 0 or se < 1e-12 * max(1.0, abs(difference)):
        return PairedDifference(difference, 0.0, 1.0 if abs(difference) < 1e-12 else 0.0)
    return PairedDifference(difference, se, float(2 * stats.norm.sf(abs(difference) / se)))


def weighted_pearson(x: FloatArray, y: FloatArray, weights: FloatArray) -> float | None:
    """Weighted Pearson correlation (Hájek moments), or None when a variable is constant."""
    _check(weights, len(x))
    if len(x) < 2:
        return None
    w = weights / weights.sum()
    dx, dy = x - np.sum(w * x), y - np.sum(w * y)
    vx, vy = float(np.sum(w * dx * dx)), float(np.sum(w * dy * dy))
    if vx <= 0 or vy <= 0:
        return None
    return float(np.sum(w * dx * dy) / math.sqrt(vx * vy))


def weighted_midranks(values: FloatArray, weights: FloatArray) -> FloatArray:
    """Each value's estimated share of the pool below it, ties counted half (a weighted mid-rank)."""
    _check(weights, len(values))
    ordered, cumulative = _cumulative(values, weights)
    below, equal = _weight_below(ordered, cumulative, values)
    shares: FloatArray = (below + 0.5 * equal) / cumulative[-1]
    return shares


def weighted_spearman(x: FloatArray, y: FloatArray, weights: FloatArray) -> float | None:
    """Weighted Spearman correlation: Pearson of the weighted mid-ranks."""
    if len(x) < 2:
        return None
    return weighted_pearson(weighted_midranks(x, weights), weighted_midranks(y, weights), weights)


class MetricLike(Protocol):
    """What the weighted section needs of a metric (``report.MetricInfo`` has it)."""

    @property
    def id(self) -> int: ...
    @property
    def label(self) -> str: ...
    @property
    def higher_is_closer(self) -> bool: ...


@dataclass(frozen=True)
class WeightedMetric:
    """One metric's pool figures from the weighted judged pairs (None: undefined, see ``reason``)."""

    id: int
    label: str
    pairs: int
    auc: float | None
    auc_se: float | None
    pearson: float | None
    spearman: float | None
    reason: str = ""


@dataclass(frozen=True)
class WeightedDifference:
    """AUC(a) - AUC(b) on the pairs both metrics scored, weighted; DeLong's test, weighted."""

    metric_a: int
    label_a: str
    metric_b: int
    label_b: str
    pairs: int
    difference: float | None
    standard_error: float | None
    p_value: float | None
    p_holm: float | None  # Holm-adjusted over every two metrics, as the clusters are


@dataclass(frozen=True)
class WeightedSection:
    """The dashboard's weighted figures of an adaptive campaign, with the weights they used."""

    estimator: str
    judged_pairs: int
    pool_pairs: int
    smallest_weight: float | None
    largest_weight: float | None
    metrics: list[WeightedMetric]
    differences: list[WeightedDifference]


ESTIMATOR = "Hájek (inverse-probability weighted)"


def weighted_section(
    metrics: Sequence[MetricLike],
    scores: FloatArray,
    binary: NDArray[np.int8],
    graded: FloatArray,
    probabilities: FloatArray,
    judged: BoolArray,
) -> WeightedSection:
    """Weighted AUC (with its standard error), Pearson and Spearman of every metric.

    ``scores`` is metrics x pairs (raw, NaN where missing); ``binary`` the reference label
    (1 / 0 / -1 for none), ``graded`` the graded human answer (NaN where none); ``probabilities`` each
    pair's inclusion probability; ``judged`` the pairs with a counted judgement.
    """
    weights = 1 / probabilities
    out = []
    for index, metric in enumerate(metrics):
        raw = scores[index]
        oriented = raw if metric.higher_is_closer else -raw
        usable = judged & np.isfinite(oriented) & (binary >= 0)
        positive = binary[usable] == 1
        parts = weighted_components(oriented[usable], positive, weights[usable])
        ordinal = judged & np.isfinite(oriented) & np.isfinite(graded)
        x, y, w = oriented[ordinal], graded[ordinal], weights[ordinal]
        reason = "" if parts is not None else "needs labelled paraphrases and non-paraphrases"
        out.append(
            WeightedMetric(
                id=metric.id,
                label=metric.label,
                pairs=int(np.count_nonzero(usable)),
                auc=None if parts is None else parts.auc,
                auc_se=None if parts is None else auc_standard_error(parts),
                pearson=weighted_pearson(x, y, w) if len(x) > 1 else None,
                spearman=weighted_spearman(x, y, w) if len(x) > 1 else None,
                reason=reason,
            )
        )
    used = weights[judged]
    differences = _differences(metrics, scores, binary, weights, judged)
    return WeightedSection(
        estimator=ESTIMATOR,
        judged_pairs=int(np.count_nonzero(judged)),
        pool_pairs=len(probabilities),
        smallest_weight=float(used.min()) if len(used) else None,
        largest_weight=float(used.max()) if len(used) else None,
        metrics=out,
        differences=differences,
    )


def _differences(
    metrics: Sequence[MetricLike],
    scores: FloatArray,
    binary: NDArray[np.int8],
    weights: FloatArray,
    judged: BoolArray,
) -> list[WeightedDifference]:
    """The weighted paired test of every two metrics, Holm-adjusted together."""
    oriented = [scores[i] if metric.higher_is_closer else -scores[i] for i, metric in enumerate(metrics)]
    found = []
    for a in range(len(metrics)):
        for b in range(a + 1, len(metrics)):
            usable = judged & np.isfinite(oriented[a]) & np.isfinite(oriented[b]) & (binary >= 0)
            positive = binary[usable] == 1
            first = weighted_components(oriented[a][usable], positive, weights[usable])
            second = weighted_components(oriented[b][usable], positive, weights[usable])
            test = None if first is None or second is None else weighted_delong(first, second)
            found.append((a, b, int(np.count_nonzero(usable)), test))
    adjusted = holm([None if test is None else test.p_value for _, _, _, test in found])
    return [
        WeightedDifference(
            metric_a=metrics[a].id,
            label_a=metrics[a].label,
            metric_b=metrics[b].id,
            label_b=metrics[b].label,
            pairs=pairs,
            difference=None if test is None else test.difference,
            standard_error=None if test is None else test.standard_error,
            p_value=None if test is None else test.p_value,
            p_holm=p_holm,
        )
        for (a, b, pairs, test), p_holm in zip(found, adjusted, strict=True)
    ]


__all__ = [
    "ESTIMATOR",
    "MetricLike",
    "PairedDifference",
    "WeightedComponents",
    "WeightedDifference",
    "WeightedMetric",
    "WeightedSection",
    "auc_standard_error",
    "hajek_auc",
    "hajek_mean",
    "ht_total",
    "weighted_components",
    "weighted_delong",
    "weighted_midranks",
    "weighted_pearson",
    "weighted_section",
    "weighted_spearman",
]
