"""Meta-evaluation: which metric should a researcher trust? (WMT metrics task practice)

:func:`meta_evaluation` takes the same :class:`~scoring.analysis.report.AnalysisInput` as the
report and returns a typed :class:`MetaEvaluation`: paired tests of every two metrics with a
ranked table and significance clusters (:mod:`.paired`), threshold honesty
(:mod:`.thresholds`), ties (:mod:`.ties`), systems and groups of hypotheses (:mod:`.systems`),
the human ceiling (:mod:`.ceiling`) and the calibration of natural-threshold metrics
(:mod:`.calibration`). ``as_dict`` gives the JSON the API and the dashboard read.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.analysis.alt_test import DEFAULT_EPSILON, AltTest, alternative_annotator_test
from scoring.analysis.binary import best_accuracy, rank
from scoring.analysis.calibration import Calibration, calibration
from scoring.analysis.ceiling import CeilingRow, human_ceiling
from scoring.analysis.distance_bins import DEFAULT_BINS, DistanceBins, distance_bins
from scoring.analysis.labels import BINARY_OF_CODE, HumanLabels, Reference
from scoring.analysis.paired import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MONTE_CARLO,
    PRIMARY_TEST,
    Interval,
    PairedInput,
    PairedOptions,
    PairedTest,
    Statistic,
    compare,
    resamples_for,
    smallest_p,
)
from scoring.analysis.plain import to_json
from scoring.analysis.rater_bootstrap import (
    GOLD_REASON,
    JudgementTable,
    PairedKind,
    RaterInput,
    paired_intervals,
    when_each,
)
from scoring.analysis.report import AnalysisInput, MetricInfo, human_labels
from scoring.analysis.systems import (
    SPA_BOOTSTRAP,
    GroupMetric,
    GroupView,
    SystemView,
    source_groups,
    system_view,
)
from scoring.analysis.thresholds import (
    DEFAULT_FOLDS,
    TIE_RULE,
    best_threshold_interval,
    cross_validated,
    natural_accuracy,
    tied_best,
)
from scoring.analysis.ties import TieStatistics, tie_statistics

# Bump when a change here changes a number of the meta-evaluation (part of its cache key).
# 4: two-way (pairs and volunteers) intervals of Delta AUC and SPA; 5: also of the paired natural
# accuracy, Pearson and Spearman (cross-validated accuracy and Kendall: the reason they have none);
# 6: of the cross-validated accuracy (thresholds refitted per replicate) and Kendall too
META_VERSION = "6"
ALPHA = 0.05


class Correction(StrEnum):
    HOLM = "holm"
    NONE = "none"


@dataclass(frozen=True)
class MetaOptions:
    reference: Reference = Reference.VOLUNTEERS
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    confidence: float = 0.95
    folds: int = DEFAULT_FOLDS
    correction: Correction = Correction.HOLM
    alpha: float = ALPHA
    # Resamples of the Monte-Carlo permutation tests (Spearman); None: chosen from the number of
    # comparisons so that an adjusted p below alpha is reachable (see paired.resamples_for).
    permutation_resamples: int | None = None
    # R-Precision on graded gold: relevant = graded value >= this (None: the highest value).
    r_threshold: float | None = None
    # Alternative annotator test: how much worse than a volunteer the metric may be (cost-benefit).
    aat_epsilon: float = DEFAULT_EPSILON
    # Equal-count bins of edit distance (paper 003, section 3.1: four).
    distance_bins: int = DEFAULT_BINS


@dataclass(frozen=True)
class MetaMetric:
    id: int
    label: str
    arrow: str
    natural_threshold: float | None


@dataclass(frozen=True)
class RankRow:
    metric: int
    value: float | None
    n: int
    rank: int  # 1 + the number of metrics significantly better
    beaten_by: list[int]  # metrics significantly better


@dataclass(frozen=True)
class Ranking:
    statistic: Statistic
    label: str
    rows: list[RankRow]
    matrix: list[list[float | None]]  # p-values (corrected when a correction is chosen), rows/cols = metric order
    test: str = ""  # the test behind the matrix (DeLong, Williams, jackknife, exact McNemar, permutation)
    comparisons: int = 0  # metric pairs tested (the Holm family)
    resamples: int | None = None  # Monte-Carlo resamples; None: an analytic or exact test
    smallest_p: float | None = None  # smallest reachable (adjusted) p; None: no resampling floor
    reachable: bool = True  # can a p below alpha be reached at all?
    floor_note: str = ""  # the sentence shown beside the matrix


@dataclass(frozen=True)
class ThresholdRow:
    metric: int
    n: int
    best_accuracy: float | None  # a posteriori (Table 2)
    tied_count: int  # thresholds reaching that accuracy
    tied_highest: float | None  # own units
    tied_lowest: float | None
    cv_accuracy: float | None
    cv_f1: float | None
    natural_accuracy: float | None
    best_threshold_low: float | None  # bootstrap interval of the best threshold, own units
    best_threshold_high: float | None


@dataclass(frozen=True)
class TieRow:
    metric: int
    ties: TieStatistics


@dataclass(frozen=True)
class CalibrationRow:
    metric: int
    calibration: Calibration


@dataclass(frozen=True)
class MetaEvaluation:
    reference: Reference
    options: MetaOptions
    metrics: list[MetaMetric]
    paired: list[PairedTest]
    rankings: list[Ranking]
    thresholds: list[ThresholdRow]
    ties: list[TieRow]
    systems: SystemView | None
    systems_note: str
    groups: int
    group_metrics: list[GroupMetric]
    ceiling: list[CeilingRow]
    calibration: list[CalibrationRow]
    notes: list[str] = field(default_factory=list)
    group_view: GroupView | None = None
    alt_test: AltTest | None = None
    distance_bins: DistanceBins | None = None
    # When to quote the pairs-only and when the pairs-and-volunteers intervals (Delta AUC, SPA).
    two_way_note: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (:func:`~scoring.analysis.plain.to_json`): enums as their values, non-finite
        numbers as None, full precision."""
        data: dict[str, Any] = to_json(self)
        return data


def _own(threshold: float | None, metric: MetricInfo) -> float | None:
    if threshold is None or not math.isfinite(threshold):
        return None
    return threshold if metric.higher_is_closer else -threshold


def _oriented(data: AnalysisInput) -> np.ndarray:
    n, m = len(data.pair_ids), len(data.metrics)
    return np.array(
        [data.scores[i] if metric.higher_is_closer else -data.scores[i] for i, metric in enumerate(data.metrics)]
    ).reshape(m, n)


def distance_bin_view(data: AnalysisInput, reference: Reference, bins: int = DEFAULT_BINS) -> DistanceBins:
    """Agreement of every metric within equal-count bins of edit distance (no resampling: fast)."""
    labels = human_labels(data, reference)
    return distance_bins(
        data.edit_distance, labels.binary, labels.graded, [metric.id for metric in data.metrics], _oriented(data), bins
    )


FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class _ThresholdViews:
    """Per metric: its threshold row, calibration (log-odds metrics), and per pair whether its
    natural and cross-validated thresholds decide right and what its decided threshold predicts."""

    thresholds: list[ThresholdRow]
    calibrations: list[CalibrationRow]
    natural_correct: FloatArray
    cv_correct: FloatArray
    predictions: FloatArray
    cv_fold: IntArray  # metrics x pairs: the fold that held a pair out (-1: not cross-validated)


def _threshold_views(
    data: AnalysisInput, oriented: FloatArray, labels: HumanLabels, options: MetaOptions
) -> _ThresholdViews:
    """The thresholds of every metric: best (fitted), tied, cross-validated and natural."""
    m, n = oriented.shape
    labelled = labels.binary >= 0
    truth = labels.binary == 1
    natural_correct = np.full((m, n), np.nan)
    cv_correct = np.full((m, n), np.nan)
    cv_fold = np.full((m, n), -1, dtype=np.int64)
    predictions = np.full((m, n), np.nan)
    thresholds: list[ThresholdRow] = []
    calibrations: list[CalibrationRow] = []
    for i, metric in enumerate(data.metrics):
        valid = labelled & np.isfinite(oriented[i])
        scores, classes = oriented[i][valid], truth[valid]
        ranked = rank(scores, classes)
        best = best_accuracy(ranked)
        tied = tied_best(ranked)
        cv = cross_validated(scores, classes, options.folds, options.seed)
        if cv is not None:
            cv_correct[i, np.flatnonzero(valid)] = cv.correct
            cv_fold[i, np.flatnonzero(valid)] = cv.fold
        natural = None
        interval = None
        decided_threshold: float | None = None
        if metric.natural_threshold is not None:
            oriented_natural = metric.natural_threshold if metric.higher_is_closer else -metric.natural_threshold
            decided_threshold = oriented_natural
            if len(scores):
                natural = natural_accuracy(scores, classes, oriented_natural)
                natural_correct[i, np.flatnonzero(valid)] = (scores >= oriented_natural) == classes
                interval = best_threshold_interval(
                    scores, classes, min(options.resamples, 1000), options.seed, options.confidence
                )
                # A log-odds score read as a probability (ParaPLUIE).
                if metric.natural_threshold == 0 and metric.higher_is_closer:
                    result = calibration(data.scores[i][valid], classes)
                    if result is not None:
                        calibrations.append(CalibrationRow(metric.id, result))
        elif cv is not None:
            usable = [t for t in cv.thresholds if t is not None]
            decided_threshold = float(np.median(usable)) if usable else math.inf
        if decided_threshold is not None:
            finite = np.isfinite(oriented[i])
            predictions[i, finite] = (oriented[i][finite] >= decided_threshold).astype(np.float64)
        low, high = (None, None)
        if interval is not None:
            ends = sorted(
                value for value in (_own(interval[0], metric), _own(interval[1], metric)) if value is not None
            )
            low, high = (ends[0], ends[-1]) if ends else (None, None)
        thresholds.append(
            ThresholdRow(
                metric=metric.id,
                n=ranked.n,
                best_accuracy=None if best is None else best.confusion.accuracy,
                tied_count=0 if tied is None else tied.count,
                tied_highest=None if tied is None else _own(tied.highest, metric),
                tied_lowest=None if tied is None else _own(tied.lowest, metric),
                cv_accuracy=None if cv is None else cv.accuracy,
                cv_f1=None if cv is None else cv.f1,
                natural_accuracy=natural,
                best_threshold_low=low,
                best_threshold_high=high,
            )
        )

    return _ThresholdViews(thresholds, calibrations, natural_correct, cv_correct, predictions, cv_fold)


def _systems_view(
    data: AnalysisInput, labels: HumanLabels, oriented: FloatArray, options: MetaOptions
) -> tuple[SystemView | None, str]:
    """The system-level view (when two or more systems are named) and the note that says why not."""
    systems = None
    systems_note = "No pair names the system that produced its hypothesis (importer column `system`)."
    if data.systems is not None:
        systems = system_view(
            data.systems,
            data.sources,
            labels.binary,
            labels.graded,
            [metric.id for metric in data.metrics],
            oriented,
            data.scores,
            min(options.resamples, 1000),
            options.seed,
            spa_resamples=min(options.resamples, SPA_BOOTSTRAP),
            confidence=options.confidence,
            judgements=(
                JudgementTable.build(
                    data.judgements.pair_index, data.judgements.volunteer, data.judgements.code, len(data.pair_ids)
                )
                if options.reference == Reference.VOLUNTEERS
                else None
            ),
        )
        named = {name for name in data.systems if name}
        if systems is not None:
            systems_note = ""
        elif len(named) == 1:
            systems_note = "Only one system is named: a system-level view needs two or more."
    return systems, systems_note


def _against_the_judges(
    data: AnalysisInput, predictions: FloatArray, options: MetaOptions
) -> tuple[list[CeilingRow], AltTest]:
    """Each metric's decisions against the judges: the human ceiling and the alternative annotator test."""
    judgement_binary = BINARY_OF_CODE[data.judgements.code] if len(data.judgements) else np.zeros(0, dtype=np.int8)
    ceiling = human_ceiling(
        data.judgements.pair_index,
        judgement_binary,
        len(data.pair_ids),
        [metric.id for metric in data.metrics],
        predictions,
        min(options.resamples, 1000),
        options.seed,
        options.confidence,
        judge=data.judgements.volunteer,
    )
    alt_test = alternative_annotator_test(
        data.judgements.pair_index,
        data.judgements.volunteer,
        judgement_binary,
        [metric.id for metric in data.metrics],
        predictions,
        epsilon=options.aat_epsilon,
        alpha=options.alpha,
    )
    return ceiling, alt_test


def meta_evaluation(data: AnalysisInput, options: MetaOptions | None = None) -> MetaEvaluation:
    """Every meta-evaluation analysis of one campaign (after filters)."""
    options = options or MetaOptions()
    labels = human_labels(data, options.reference)
    n = len(data.pair_ids)
    m = len(data.metrics)
    oriented = np.array(
        [data.scores[i] if metric.higher_is_closer else -data.scores[i] for i, metric in enumerate(data.metrics)]
    ).reshape(m, n)
    views = _threshold_views(data, oriented, labels, options)
    thresholds, calibrations = views.thresholds, views.calibrations
    natural_correct, cv_correct, predictions = views.natural_correct, views.cv_correct, views.predictions

    paired = compare(
        PairedInput(
            metric_ids=[metric.id for metric in data.metrics],
            scores=oriented,
            binary=labels.binary,
            graded=labels.graded,
            natural_correct=natural_correct,
            cv_correct=cv_correct,
        ),
        PairedOptions(
            resamples=options.resamples,
            seed=options.seed,
            confidence=options.confidence,
            alpha=options.alpha,
            permutation_resamples=options.permutation_resamples,
        ),
    )
    paired = _with_two_way(data, paired, oriented, views.cv_fold, options)
    rankings = _rankings(
        data.metrics, paired, oriented, labels.binary, labels.graded, natural_correct, cv_correct, options
    )
    ties = [
        TieRow(metric.id, tie_statistics(oriented[i], labels.graded, options.seed))
        for i, metric in enumerate(data.metrics)
    ]

    systems, systems_note = _systems_view(data, labels, oriented, options)
    groups = 0
    group_metrics: list[GroupMetric] = []
    group_view: GroupView | None = None
    if data.sources is not None:
        groups, group_metrics, group_view = source_groups(
            data.sources,
            labels.binary,
            labels.graded,
            [metric.id for metric in data.metrics],
            oriented,
            options.r_threshold,
        )
    ceiling, alt_test = _against_the_judges(data, predictions, options)
    return MetaEvaluation(
        reference=options.reference,
        options=options,
        metrics=[
            MetaMetric(metric.id, metric.label, metric.arrow, metric.natural_threshold) for metric in data.metrics
        ],
        paired=paired,
        rankings=rankings,
        thresholds=thresholds,
        ties=ties,
        systems=systems,
        systems_note=systems_note,
        groups=groups,
        group_metrics=group_metrics,
        ceiling=ceiling,
        calibration=calibrations,
        notes=[f"Among thresholds tied for the best accuracy the {TIE_RULE} is used (its F1, recall, precision)."],
        group_view=group_view,
        alt_test=alt_test,
        distance_bins=distance_bins(
            data.edit_distance,
            labels.binary,
            labels.graded,
            [metric.id for metric in data.metrics],
            oriented,
            options.distance_bins,
        ),
        two_way_note=when_each(options.reference == Reference.VOLUNTEERS),
    )


def _natural_calls(data: AnalysisInput, oriented: FloatArray) -> FloatArray:
    """Metrics x pairs: 1 / 0 where a metric's natural threshold calls a pair a paraphrase or not
    (NaN: no natural threshold or no score)."""
    calls = np.full(oriented.shape, np.nan)
    for index, metric in enumerate(data.metrics):
        if metric.natural_threshold is None:
            continue
        threshold = metric.natural_threshold if metric.higher_is_closer else -metric.natural_threshold
        finite = np.isfinite(oriented[index])
        calls[index, finite] = (oriented[index][finite] >= threshold).astype(np.float64)
    return calls


def _with_two_way(
    data: AnalysisInput, paired: list[PairedTest], oriented: FloatArray, cv_fold: IntArray, options: MetaOptions
) -> list[PairedTest]:
    """The paired comparisons with the two-way (pairs and volunteers) interval of their difference
    beside the pairs-only one (every paired statistic); on gold labels the reason there is none."""
    tested = [test for test in paired if test.reason is None]
    if not tested or options.resamples <= 0:
        return paired
    if options.reference != Reference.VOLUNTEERS:
        return [dataclasses.replace(test, two_way_reason=GOLD_REASON) if test in tested else test for test in paired]
    row_of = {metric.id: index for index, metric in enumerate(data.metrics)}
    kinds: dict[Statistic, PairedKind] = {
        Statistic.AUC: "auc",
        Statistic.ACCURACY_NATURAL: "accuracy_natural",
        Statistic.ACCURACY_CV: "accuracy_cv",
        Statistic.PEARSON: "pearson",
        Statistic.SPEARMAN: "spearman",
        Statistic.KENDALL: "kendall",
    }
    jobs = [
        (kinds[test.statistic], row_of[test.metric_a], row_of[test.metric_b])
        for test in tested
        if test.statistic in kinds
    ]
    differences = paired_intervals(
        RaterInput(
            data.judgements.pair_index,
            data.judgements.volunteer,
            data.judgements.code,
            [metric.id for metric in data.metrics],
            oriented,
            natural=_natural_calls(data, oriented),
            cv_fold=cv_fold,
        ),
        jobs,
        options.resamples,
        options.seed,
        options.confidence,
    )
    out = []
    for test in paired:
        kind = kinds.get(test.statistic)
        key = (kind, row_of[test.metric_a], row_of[test.metric_b]) if kind is not None else None
        difference = differences.get(key) if key is not None and test.reason is None else None
        if difference is not None:
            interval = None if difference.interval is None else Interval(*difference.interval)
            test = dataclasses.replace(test, interval_two_way=interval, two_way_volunteers=difference.volunteers)
        out.append(test)
    return out


def _own_value(
    statistic: Statistic,
    row: int,
    oriented: np.ndarray,
    binary: np.ndarray,
    graded: np.ndarray,
    natural_correct: np.ndarray,
    cv_correct: np.ndarray,
) -> tuple[float | None, int]:
    """A metric's statistic on its own scored pairs (the ranked table's value)."""
    from scipy import stats

    from scoring.analysis.binary import roc_auc

    scores = oriented[row]
    if statistic is Statistic.AUC:
        valid = np.isfinite(scores) & (binary >= 0)
        return roc_auc(rank(scores[valid], binary[valid] == 1)), int(np.count_nonzero(valid))
    if statistic in (Statistic.ACCURACY_NATURAL, Statistic.ACCURACY_CV):
        values = (natural_correct if statistic is Statistic.ACCURACY_NATURAL else cv_correct)[row]
        valid = np.isfinite(values)
        return (float(values[valid].mean()) if np.any(valid) else None), int(np.count_nonzero(valid))
    valid = np.isfinite(scores) & np.isfinite(graded)
    x, y = scores[valid], graded[valid]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None, len(x)
    if statistic is Statistic.PEARSON:
        return float(stats.pearsonr(x, y).statistic), len(x)
    if statistic is Statistic.SPEARMAN:
        return float(stats.spearmanr(x, y).statistic), len(x)
    return float(stats.kendalltau(x, y, variant="b").statistic), len(x)


def _rankings(
    metrics: list[MetricInfo],
    paired: list[PairedTest],
    oriented: np.ndarray,
    binary: np.ndarray,
    graded: np.ndarray,
    natural_correct: np.ndarray,
    cv_correct: np.ndarray,
    options: MetaOptions,
) -> list[Ranking]:
    """Per statistic: metrics by value with their significance cluster (WMT's presentation)."""
    ids = [metric.id for metric in metrics]
    position = {metric_id: index for index, metric_id in enumerate(ids)}
    out = []
    for statistic in Statistic:
        tests = [test for test in paired if test.statistic is statistic]
        matrix: list[list[float | None]] = [[None] * len(ids) for _ in ids]
        better: dict[int, list[int]] = {metric_id: [] for metric_id in ids}
        for test in tests:
            p = test.p_holm if options.correction is Correction.HOLM else test.p_value
            a, b = position[test.metric_a], position[test.metric_b]
            matrix[a][b] = matrix[b][a] = p
            if p is not None and p < options.alpha and test.difference is not None and test.difference != 0:
                winner, loser = (
                    (test.metric_a, test.metric_b) if test.difference > 0 else (test.metric_b, test.metric_a)
                )
                better[loser].append(winner)
        rows = []
        for index, metric_id in enumerate(ids):
            value, n = _own_value(statistic, index, oriented, binary, graded, natural_correct, cv_correct)
            if value is None:
                continue
            rows.append(RankRow(metric_id, value, n, 1 + len(better[metric_id]), sorted(better[metric_id])))
        rows.sort(key=lambda row: (row.rank, -(row.value or 0.0)))
        out.append(_with_floor(Ranking(statistic, statistic.label, rows, matrix), tests, options))
    return out


def _with_floor(ranking: Ranking, tests: list[PairedTest], options: MetaOptions) -> Ranking:
    """The test behind a matrix and the smallest p it can reach (at 1,000 resamples
    Holm over 28 comparisons cannot go below 0.056, so no metric could be separated)."""
    statistic = ranking.statistic
    tested = [test for test in tests if test.p_value is not None]
    k = len(tested)
    factor = k if options.correction is Correction.HOLM else 1
    method = PRIMARY_TEST[statistic]
    adjusted = "Holm-adjusted " if options.correction is Correction.HOLM else ""
    method = method[0].upper() + method[1:]  # the note is a sentence
    if not tested:
        note = f"{method} test: no two metrics could be compared on these pairs."
        return dataclasses.replace(ranking, test=PRIMARY_TEST[statistic], comparisons=0, floor_note=note)
    if statistic not in MONTE_CARLO:
        kind = "exact" if method == "Exact McNemar" else "analytic"
        note = f"{method} test ({kind}): no resampling floor on its p-values."
        return dataclasses.replace(ranking, test=PRIMARY_TEST[statistic], comparisons=k, floor_note=note)
    floors = [
        (smallest_p(test.permutation_resamples, test.permutation_exact), test)
        for test in tested
        if test.permutation_resamples
    ]
    raw, example = min(floors, key=lambda item: item[0])
    floor = min(1.0, factor * raw)
    resamples = max(test.permutation_resamples or 0 for test in tested)
    reachable = floor < options.alpha
    if example.permutation_exact:
        note = (
            f"{method} test, every one of the {resamples} swap patterns enumerated: the smallest reachable "
            f"{adjusted}p over {k} comparisons is {floor:.3g}."
        )
        if not reachable:
            note += f" With {example.n} pairs no difference can reach p < {options.alpha}: more pairs are needed."
    else:
        note = (
            f"{method} test, {resamples} resamples: the smallest reachable {adjusted}p over {k} "
            f"comparisons is {floor:.3g}."
        )
        if not reachable:
            needed = resamples_for(factor, options.alpha)
            note += (
                f" No difference can reach p < {options.alpha}: raise the permutation resamples to at least "
                f"{needed} ({needed / resamples:.1f} x)."
            )
    return dataclasses.replace(
        ranking,
        test=PRIMARY_TEST[statistic],
        comparisons=k,
        resamples=resamples,
        smallest_p=floor,
        reachable=reachable,
        floor_note=note,
    )
