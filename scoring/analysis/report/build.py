"""Every section of the report assembled from one :class:`~scoring.analysis.report.inputs.AnalysisInput`."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from scoring.analysis import cards as card_stats
from scoring.analysis.binary import (
    Ranked,
)
from scoring.analysis.labels import (
    DONT_KNOW_CODE,
    Reference,
)
from scoring.analysis.report.charts import chart_of, scatter_sample
from scoring.analysis.report.convert import rounded
from scoring.analysis.report.inputs import ALL, ANALYSIS_VERSION, AnalysisInput, ReportOptions, human_labels
from scoring.analysis.report.intervals import intervals_of, with_intervals, with_raters
from scoring.analysis.report.metric import metric_subset
from scoring.analysis.report.records import (
    BootstrapInfo,
    Chart,
    Counts,
    MetricResult,
    MetricRow,
    Report,
    ScoreCounts,
    SubsetCounts,
)
from scoring.analysis.report.subsets import subsets
from scoring.analysis.report.volunteers import agreement_section, volunteer_section
from scoring.analysis.weighted import weighted_section

# --- the report ------------------------------------------------------------------------------


def build_report(data: AnalysisInput, options: ReportOptions | None = None) -> Report:
    """Compute every table, chart, agreement figure and count for one campaign."""
    options = options or ReportOptions()
    reference = Reference(options.reference)
    labels = human_labels(data, reference)
    n = len(data.pair_ids)
    groups = subsets(data.origins)
    jobs: list[tuple[int, str, Ranked, int]] = []
    sample = scatter_sample(labels, options.scatter_points, options.seed)

    done = np.isfinite(data.scores)
    counts = Counts(
        **asdict(labels.counts()),
        judgements=len(data.judgements),
        dont_know_judgements=int(np.count_nonzero(data.judgements.code == DONT_KNOW_CODE)),
        training_judgements=data.training_judgements,
        volunteers=len(np.unique(data.judgements.volunteer)),
        metrics=len(data.metrics),
        scores=int(np.count_nonzero(done)),
        scores_failed=int(np.count_nonzero(data.failed)),
        scores_missing=int(np.count_nonzero(~done & ~data.failed)),
    )

    results: dict[int, dict[str, MetricResult]] = {}
    charts: dict[int, Chart] = {}
    metric_rows = []
    for index, metric in enumerate(data.metrics):
        raw = data.scores[index]
        failed = data.failed[index]
        per_subset: dict[str, MetricResult] = {}
        for group in groups:
            result, ranked = metric_subset(metric, raw, failed, labels, data.edit_distance, group.mask)
            per_subset[group.key] = result
            jobs.append((metric.id, group.key, ranked, result.pairs))
            if group.key == ALL and options.charts:
                best = result.best_accuracy
                charts[metric.id] = chart_of(
                    metric,
                    raw,
                    labels,
                    data.edit_distance,
                    ranked,
                    best.threshold if best else None,
                    sample,
                    options,
                    data,
                )
        results[metric.id] = per_subset
        metric_rows.append(
            MetricRow(
                id=metric.id,
                name=metric.name,
                label=metric.label,
                higher_is_closer=metric.higher_is_closer,
                arrow=metric.arrow,
                natural_threshold=rounded(metric.natural_threshold),
                scores=ScoreCounts(
                    done=int(np.count_nonzero(done[index])),
                    failed=int(np.count_nonzero(failed)),
                    missing=int(np.count_nonzero(~done[index] & ~failed)),
                ),
            )
        )

    report = Report(
        analysis_version=ANALYSIS_VERSION,
        reference=reference,
        counts=counts,
        subsets=[SubsetCounts(group.key, group.label, **asdict(labels.counts(group.mask))) for group in groups],
        metrics=metric_rows,
        results=results,
        charts=charts,
        agreement=agreement_section(data.judgements, n),
        volunteers=volunteer_section(data.judgements, data.volunteers, n),
        bootstrap=BootstrapInfo(
            resamples=options.resamples,
            seed=options.seed,
            confidence=options.confidence,
            method="percentile",
            threshold="re-optimised in every resample",
            unit="labelled pairs, drawn with replacement",
            # "computing" when the intervals are left for later (options.intervals False).
            state="off" if options.resamples == 0 else "ready" if options.intervals else "computing",
            message="",
        ),
        cards=card_stats.report_cards(data, reference, options.resamples, options.seed),
        weighted=None
        if data.inclusion_probability is None
        else weighted_section(
            data.metrics, data.scores, labels.binary, labels.graded, data.inclusion_probability, labels.judgements > 0
        ),
    )
    if options.intervals and options.resamples > 0:
        intervals = intervals_of(jobs, options.resamples, options.seed, options.confidence)
        report = with_intervals(report, with_raters(intervals, data, labels, options))
    return report
