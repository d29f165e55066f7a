"""One metric on one subset: the paper's tables 1-5, ROC AUC, correlations and the top-k summary."""

from __future__ import annotations

from typing import Any

import numpy as np

from scoring.analysis.binary import (
    Confusion,
    Ranked,
    ThresholdResult,
    at_threshold,
    best_accuracy,
    class_summary,
    equal_error_rate,
    rank,
    rank_curves,
    roc_auc,
)
from scoring.analysis.correlation import pearson, spearman
from scoring.analysis.labels import (
    HumanLabels,
)
from scoring.analysis.report.convert import correlation_of, own_threshold, rounded, rule_of, summary_of
from scoring.analysis.report.inputs import BoolArray, FloatArray, MetricInfo
from scoring.analysis.report.records import (
    Auc,
    BestAccuracy,
    ClassCorrelations,
    ClassStats,
    Eer,
    Excluded,
    MetricResult,
    Natural,
    Ordinal,
    RankingSummary,
    Tied,
)
from scoring.analysis.thresholds import TiedBest, tied_best

# --- one metric on one subset ----------------------------------------------------------------


def _undefined_reasons(r: Ranked, any_labelled: bool) -> dict[str, str]:
    """Why the best accuracy, ROC AUC and EER are undefined: no scored labelled pair, or one class only."""
    undefined: dict[str, str] = {}
    if r.n == 0:
        reason = "no labelled pair has a score" if any_labelled else "no labelled pairs"
        undefined.update(best_accuracy=reason, auc=reason, eer=reason)
    elif not r.both_classes:
        only = "paraphrases" if r.negatives == 0 else "non-paraphrases"
        undefined.update(auc=f"only {only} among the labelled pairs", eer=f"only {only} among the labelled pairs")
    return undefined


def _best_accuracy(r: Ranked, metric: MetricInfo) -> BestAccuracy | None:
    """Table 2's point values: the accuracy-maximising threshold in the metric's units, the tie range (no interval)."""
    best: ThresholdResult | None = best_accuracy(r)
    if best is None:
        return None
    tied = tied_best(r)
    return BestAccuracy(
        threshold=rounded(own_threshold(best.threshold, metric)),
        rule=rule_of(metric) if best.threshold is not None else "none",
        **_confusion(best.confusion),
        ci=None,
        tied=None
        if tied is None
        else Tied(
            tied.count,
            rounded(own_threshold(tied.highest, metric)),
            rounded(own_threshold(tied.lowest, metric)),
            "highest threshold",
        ),
    )


def _natural(metric: MetricInfo, r: Ranked, scores: FloatArray, truth: BoolArray) -> Natural | None:
    """Table 5: the confusion at the metric's natural threshold (None without one, or without scored pairs)."""
    if metric.natural_threshold is None or not r.n:
        return None
    oriented_threshold = metric.natural_threshold if metric.higher_is_closer else -metric.natural_threshold
    return Natural(
        threshold=rounded(metric.natural_threshold),
        rule=rule_of(metric),
        **_confusion(at_threshold(scores, truth, oriented_threshold)),
    )


def _ranking_summary(r: Ranked) -> RankingSummary | None:
    """The top-k summary: the best F1 (with its recall and precision) and the best accuracy over every k."""
    curves = rank_curves(r)
    if curves is None:
        return None
    at_f1 = int(np.argmax(curves.f1))
    at_accuracy = int(np.argmax(curves.accuracy))
    return RankingSummary(
        f1_max=rounded(curves.f1[at_f1]),
        k_f1_max=at_f1,
        recall_at_f1_max=rounded(curves.recall[at_f1]),
        precision_at_f1_max=rounded(curves.precision[at_f1]),
        accuracy_max=rounded(curves.accuracy[at_accuracy]),
        k_accuracy_max=at_accuracy,
    )


def metric_subset(
    metric: MetricInfo,
    raw: FloatArray,
    failed: BoolArray,
    labels: HumanLabels,
    edit_distance: FloatArray,
    mask: BoolArray,
) -> tuple[MetricResult, Ranked]:
    """Every point statistic of one metric on one subset; the intervals are left None and
    filled by :func:`with_intervals` (at once, or later from the interactive queue)."""
    labelled = mask & labels.labelled
    valid = labelled & np.isfinite(raw)
    oriented_all = raw if metric.higher_is_closer else -raw
    scores = oriented_all[valid]
    truth = labels.binary[valid] == 1
    r = rank(scores, truth)
    undefined = _undefined_reasons(r, bool(np.any(labelled)))
    own = raw[valid]
    distance = edit_distance[valid]
    eer = equal_error_rate(r)
    natural = _natural(metric, r, scores, truth)
    if metric.natural_threshold is None:
        undefined["natural"] = "the metric has no natural threshold"
    auc = roc_auc(r)
    graded_mask = mask & np.isfinite(labels.graded) & np.isfinite(raw)
    human = labels.graded[graded_mask]
    oriented = oriented_all[graded_mask]
    result = MetricResult(
        pairs=int(np.count_nonzero(labelled)),
        n=r.n,
        positives=r.positives,
        negatives=r.negatives,
        excluded=Excluded(
            failed=int(np.count_nonzero(labelled & failed)),
            missing=int(np.count_nonzero(labelled & ~failed & ~np.isfinite(raw))),
        ),
        class_stats=ClassStats(yes=summary_of(class_summary(own[truth])), no=summary_of(class_summary(own[~truth]))),
        best_accuracy=_best_accuracy(r, metric),
        edit_distance=ClassCorrelations(
            yes=correlation_of(pearson(own[truth], distance[truth])),
            no=correlation_of(pearson(own[~truth], distance[~truth])),
        ),
        eer=None if eer is None else Eer(rounded(eer.rate), rounded(own_threshold(eer.threshold, metric)), None),
        natural=natural,
        auc=None if auc is None else Auc(rounded(auc), None),
        ordinal=Ordinal(
            pearson=correlation_of(pearson(oriented, human)), spearman=correlation_of(spearman(oriented, human))
        ),
        ranking=_ranking_summary(r),
        bootstrap=None,
        undefined=undefined,
    )
    return result, r


def _tied(tied: TiedBest, metric: MetricInfo) -> Tied:
    return Tied(
        tied.count,
        rounded(own_threshold(tied.highest, metric)),
        rounded(own_threshold(tied.lowest, metric)),
        "highest threshold",
    )


def _confusion(confusion: Confusion) -> dict[str, Any]:
    """The confusion part of :class:`BestAccuracy` and :class:`Natural` (keyword arguments)."""
    return {
        "accuracy": rounded(confusion.accuracy),
        "f1": rounded(confusion.f1),
        "precision": rounded(confusion.precision),
        "recall": rounded(confusion.recall),
        "tp": int(confusion.tp),
        "fp": int(confusion.fp),
        "tn": int(confusion.tn),
        "fn": int(confusion.fn),
    }
