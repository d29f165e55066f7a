"""The report's bootstrap intervals, computed apart (on the ``interactive`` queue) and merged in."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from scoring.analysis.binary import (
    Ranked,
    rank,
)
from scoring.analysis.bootstrap import (
    BootstrapResult,
    Resampler,
    bootstrap_many,
)
from scoring.analysis.labels import (
    HumanLabels,
    Reference,
)
from scoring.analysis.rater_bootstrap import RaterInput, RaterIntervals, rater_intervals
from scoring.analysis.report.convert import interval_pair
from scoring.analysis.report.inputs import AnalysisInput, ReportOptions, human_labels
from scoring.analysis.report.records import BootstrapCounts, IntervalPair, MetricResult, Report
from scoring.analysis.report.subsets import subsets

# --- intervals -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricIntervals:
    """The bootstrap intervals of one metric on one subset."""

    accuracy: IntervalPair | None
    auc: IntervalPair | None
    eer: IntervalPair | None
    resamples: int
    single_class_resamples: int
    raters: RaterIntervals | None = None


# metric id -> subset key -> its intervals (None below two scored pairs): what the interactive queue
# computes and the cache keeps.
Intervals = dict[int, dict[str, MetricIntervals | None]]


def _intervals_of_result(result: BootstrapResult | None) -> MetricIntervals | None:
    if result is None:
        return None
    return MetricIntervals(
        accuracy=interval_pair(result.accuracy),
        auc=interval_pair(result.auc),
        eer=interval_pair(result.eer),
        resamples=result.resamples,
        single_class_resamples=result.single_class_resamples,
    )


def intervals_of(jobs: list[tuple[int, str, Ranked, int]], resamples: int, seed: int, confidence: float) -> Intervals:
    """Bootstrap every (metric id, subset key, ranked scores, labelled pairs) job at once."""
    out: Intervals = {}
    for metric_id, key, _, _ in jobs:
        out.setdefault(metric_id, {})[key] = None
    if resamples <= 0:
        return out
    # Draw from every labelled pair of the subset (drawn_from): the same resamples for all metrics.
    results = bootstrap_many(
        [(ranked, labelled) for _, _, ranked, labelled in jobs], Resampler(resamples, seed), confidence
    )
    for (metric_id, key, _, _), result in zip(jobs, results, strict=True):
        out[metric_id][key] = _intervals_of_result(result)
    return out


def report_intervals(data: AnalysisInput, options: ReportOptions) -> Intervals:
    """The bootstrap intervals of :func:`build_report` alone (what the interactive queue computes for the
    dashboard); :func:`with_intervals` puts them into a report built without them."""
    labels = human_labels(data, Reference(options.reference))
    jobs = []
    for index, metric in enumerate(data.metrics):
        raw = data.scores[index]
        oriented = raw if metric.higher_is_closer else -raw
        for group in subsets(data.origins):
            labelled = group.mask & labels.labelled
            valid = labelled & np.isfinite(raw)
            ranked = rank(oriented[valid], labels.binary[valid] == 1)
            jobs.append((metric.id, group.key, ranked, int(np.count_nonzero(labelled))))
    intervals = intervals_of(jobs, options.resamples, options.seed, options.confidence)
    return with_raters(intervals, data, labels, options)


def with_raters(intervals: Intervals, data: AnalysisInput, labels: HumanLabels, options: ReportOptions) -> Intervals:
    """``intervals`` with the two-way (pairs and volunteers) intervals of :mod:`scoring.analysis.rater_bootstrap`."""
    if options.resamples <= 0:
        return intervals
    oriented = np.array([row if m.higher_is_closer else -row for m, row in zip(data.metrics, data.scores, strict=True)])
    raters = rater_intervals(
        RaterInput(
            data.judgements.pair_index,
            data.judgements.volunteer,
            data.judgements.code,
            [metric.id for metric in data.metrics],
            oriented.reshape(len(data.metrics), len(data.pair_ids)),
            None if options.reference == Reference.VOLUNTEERS else (labels.binary, labels.graded),
        ),
        [(group.key, group.mask) for group in subsets(data.origins)],
        options.resamples,
        options.seed,
        options.confidence,
        two_way=options.two_way,
    )
    return {
        metric_id: {
            key: None if value is None else replace(value, raters=raters.get(metric_id, {}).get(key))
            for key, value in per_subset.items()
        }
        for metric_id, per_subset in intervals.items()
    }


def _result_with(result: MetricResult, interval: MetricIntervals) -> MetricResult:
    best, eer, auc = result.best_accuracy, result.eer, result.auc
    return replace(
        result,
        best_accuracy=None if best is None else replace(best, ci=interval.accuracy),
        eer=None if eer is None else replace(eer, ci=interval.eer),
        auc=None if auc is None else replace(auc, ci=interval.auc),
        bootstrap=BootstrapCounts(interval.resamples, interval.single_class_resamples),
        raters=interval.raters,
    )


def with_intervals(report: Report, intervals: Intervals) -> Report:
    """The report with the ``ci`` of accuracy, EER and AUC and the ``bootstrap`` counts of every
    result filled in (a new report: the given one is not changed)."""
    results = {metric_id: dict(per_subset) for metric_id, per_subset in report.results.items()}
    for metric_id, per_subset in intervals.items():
        for key, interval in per_subset.items():
            result = results.get(metric_id, {}).get(key)
            if result is None or interval is None:
                continue
            results[metric_id][key] = _result_with(result, interval)
    return replace(report, results=results)
