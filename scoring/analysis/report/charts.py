"""The dashboard's chart data per metric: boxes, ROC and rank curves, scatter sample, worst pairs."""

from __future__ import annotations

import numpy as np

from scoring.analysis.binary import (
    Ranked,
    box_stats,
    downsample_indices,
    rank_curves,
    roc,
)
from scoring.analysis.disagreements import worst_disagreements
from scoring.analysis.labels import (
    HumanLabels,
)
from scoring.analysis.report.convert import rounded
from scoring.analysis.report.inputs import AnalysisInput, FloatArray, IntArray, MetricInfo, ReportOptions
from scoring.analysis.report.records import Box, Boxes, Chart, ChartThresholds, RankCurve, RocCurve, WorstPair

# --- charts ----------------------------------------------------------------------------------


def _round_list(values: FloatArray, digits: int = 5) -> list[float | None]:
    return [rounded(v, digits) for v in values.tolist()]


def chart_of(
    metric: MetricInfo,
    raw: FloatArray,
    labels: HumanLabels,
    edit_distance: FloatArray,
    r: Ranked,
    best_threshold: float | None,
    sample: IntArray,
    options: ReportOptions,
    data: AnalysisInput,
) -> Chart:
    labelled = labels.labelled & np.isfinite(raw)
    yes = raw[labelled & (labels.binary == 1)]
    no = raw[labelled & (labels.binary == 0)]

    points = sample[np.isfinite(raw[sample])]
    scatter = [(rounded(edit_distance[i], 4), rounded(raw[i], 5), int(labels.binary[i])) for i in points.tolist()]
    names = data.external_ids or [""] * len(data.pair_ids)
    worst = [
        WorstPair(
            pair=int(data.pair_ids[item.index]),
            name=names[item.index],
            paraphrase=item.paraphrase,
            score=rounded(item.score, 5),
            rank=rounded(item.rank, 4),
            disagreement=rounded(item.disagreement, 4),
        )
        for item in worst_disagreements(raw, labels.binary, metric.higher_is_closer, options.worst_pairs)
    ]

    roc_curve = None
    curve = roc(r)
    if curve is not None:
        fpr, tpr = curve
        keep = downsample_indices(len(fpr), options.curve_points)
        roc_curve = RocCurve(fpr=_round_list(fpr[keep], 4), tpr=_round_list(tpr[keep], 4))
    rank_curve = None
    curves = rank_curves(r)
    if curves is not None:
        keep = np.union1d(
            downsample_indices(len(curves.k), options.curve_points),
            [int(np.argmax(curves.f1)), int(np.argmax(curves.accuracy))],
        )
        rank_curve = RankCurve(
            fraction=_round_list(curves.k[keep] / r.n, 4),
            k=[int(k) for k in curves.k[keep]],
            accuracy=_round_list(curves.accuracy[keep], 4),
            f1=_round_list(curves.f1[keep], 4),
        )
    return Chart(
        box=Boxes(yes=_box(yes), no=_box(no)),
        scatter=scatter,
        # The pair of each scatter point (the same order), so a point opens its pair's page.
        scatter_pairs=[int(data.pair_ids[i]) for i in points.tolist()],
        worst=worst,
        thresholds=ChartThresholds(natural=rounded(metric.natural_threshold), best=rounded(best_threshold)),
        roc=roc_curve,
        rank=rank_curve,
    )


def _box(values: FloatArray) -> Box | None:
    stats = box_stats(values)
    if stats is None:
        return None
    return Box(
        min=rounded(stats.min),
        q1=rounded(stats.q1),
        median=rounded(stats.median),
        q3=rounded(stats.q3),
        max=rounded(stats.max),
        mean=rounded(stats.mean),
        whisker_min=rounded(stats.whisker_min),
        whisker_max=rounded(stats.whisker_max),
        outliers=[rounded(v) for v in stats.outliers],
        n=stats.n,
    )


def scatter_sample(labels: HumanLabels, limit: int, seed: int) -> IntArray:
    """The same labelled pairs for every metric's scatter plot, at most ``limit`` of them."""
    candidates = np.flatnonzero(labels.labelled)
    if len(candidates) <= limit:
        return candidates
    rng = np.random.default_rng([seed, 2])
    return np.sort(rng.choice(candidates, size=limit, replace=False))
