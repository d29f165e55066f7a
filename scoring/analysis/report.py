"""Every analysis of every metric configuration, per corpus and for all pairs, as typed results.

:func:`build_report` takes an :class:`AnalysisInput` (NumPy arrays, no Django) and returns a
:class:`Report` of frozen dataclasses, one per section: counts, per-metric results per subset
(the paper's Tables 1-5 plus ROC AUC, correlations with the graded human scale, bootstrap
intervals and the top-k summary), chart data for the page, inter-annotator agreement and the
per-volunteer table. Python reads it by attribute; :func:`report_json` is its one JSON form
(what the dashboard and the API read).

Orientation: thresholds, AUC, EER, ranks and correlations with the human scale use scores
oriented so that higher means closer (LEV and WER negated); Table 1 means, Table 3
correlations and every reported threshold are in the metric's own units, as in the paper.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from scoring.analysis import agreement as agreement_stats
from scoring.analysis.binary import (
    ClassSummary,
    Confusion,
    Ranked,
    ThresholdResult,
    at_threshold,
    best_accuracy,
    box_stats,
    class_summary,
    downsample_indices,
    equal_error_rate,
    rank,
    rank_curves,
    roc,
    roc_auc,
)
from scoring.analysis.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    BootstrapResult,
    Interval,
    Resampler,
    bootstrap_many,
)
from scoring.analysis.correlation import Correlation, pearson, spearman
from scoring.analysis.disagreements import worst_disagreements
from scoring.analysis.labels import (
    BINARY_OF_CODE,
    DONT_KNOW_CODE,
    ORDINAL_OF_CODE,
    HumanLabels,
    LabelCounts,
    Reference,
    gold_labels,
    volunteer_labels,
)
from scoring.analysis.plain import to_json
from scoring.analysis.rater_bootstrap import RaterInput, RaterIntervals, rater_intervals
from scoring.analysis.thresholds import TiedBest, tied_best

# Bump when a change here changes any number of a report (part of the data version).
ANALYSIS_VERSION = "4"  # 2: volunteers carry their pseudonym; 3: charts name their pairs; 4: two-way intervals
ALL = "all"
ALL_LABEL = "Global"
NO_ORIGIN_LABEL = "(no origin)"

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class MetricInfo:
    """One metric configuration as the analyses need it."""

    id: int
    name: str
    label: str
    higher_is_closer: bool
    natural_threshold: float | None = None

    @property
    def arrow(self) -> str:
        return "↑" if self.higher_is_closer else "↓"


@dataclass(frozen=True)
class JudgementRows:
    """Campaign judgements that count (training answers left out), one entry per judgement."""

    pair_index: IntArray  # position of the pair in the AnalysisInput arrays
    volunteer: IntArray
    code: IntArray  # labels.LABEL_CODES
    answered_at: FloatArray  # seconds since the epoch; orders judge A / judge B for Cohen's kappa
    response_seconds: FloatArray

    @classmethod
    def empty(cls) -> JudgementRows:
        ints = np.zeros(0, dtype=np.int64)
        floats = np.zeros(0, dtype=np.float64)
        return cls(ints, ints, ints, floats, floats)

    def __len__(self) -> int:
        return len(self.pair_index)


@dataclass(frozen=True)
class VolunteerInfo:
    """A volunteer with their self-assessed level and training-trial results."""

    id: int
    english_level: str
    training_answers: int = 0
    training_correct: int = 0
    pseudonym: str = ""  # as in the exports and the API (a keyed hash of the token)


@dataclass(frozen=True)
class AnalysisInput:
    """One campaign (after filters) as arrays: pairs, judgements, volunteers and scores."""

    pair_ids: IntArray
    origins: list[str]
    edit_distance: FloatArray  # character Levenshtein / longer length (rapidfuzz)
    gold_label: FloatArray  # 1 / 0 / NaN
    gold_score: FloatArray  # graded gold or NaN
    judgements: JudgementRows
    volunteers: list[VolunteerInfo]
    metrics: list[MetricInfo]
    scores: FloatArray  # metrics x pairs; NaN where no usable score
    failed: BoolArray  # metrics x pairs; the scoring failed (counted, excluded)
    training_judgements: int = 0
    sources: list[str] | None = None  # source sentence per pair (groups of hypotheses)
    systems: list[str] | None = None  # system that produced each hypothesis ("" when none)
    external_ids: list[str] | None = None  # the pair's id in its corpus ("" when none), for links

    def __post_init__(self) -> None:
        n = len(self.pair_ids)
        for name in ("edit_distance", "gold_label", "gold_score"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} values for {n} pairs")
        if len(self.origins) != n:
            raise ValueError(f"origins has {len(self.origins)} values for {n} pairs")
        shape = (len(self.metrics), n)
        if self.scores.shape != shape or self.failed.shape != shape:
            raise ValueError(f"scores and failed must be {shape}, got {self.scores.shape} and {self.failed.shape}")


@dataclass(frozen=True)
class ReportOptions:
    """What to compute: the reference, the bootstrap and the size of the chart data."""

    reference: Reference = Reference.VOLUNTEERS
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    confidence: float = 0.95
    curve_points: int = 200  # ROC and rank curves sent to the page (peaks always kept)
    scatter_points: int = 1000  # pairs drawn per metric in the score / edit-distance chart
    worst_pairs: int = 5  # a metric's worst disagreements with the reference, listed per metric
    charts: bool = True
    # False: leave every interval None (the dashboard fills them in from the interactive queue).
    intervals: bool = True


# --- the typed report ------------------------------------------------------------------------
#
# Every section is a frozen dataclass, read by attribute in Python (tables.py, the command line,
# the service). Numbers are stored as JSON will show them: None for undefined or non-finite,
# chart coordinates already rounded. :func:`report_json` is the one serialisation (the dashboard
# and the API read it); field names are its keys.

# A percentile interval (low, high); an end is None when it is not finite.
IntervalPair = tuple[float | None, float | None]


@dataclass(frozen=True)
class Counts(LabelCounts):
    """The campaign's pairs by label (:class:`LabelCounts`), judgements, volunteers and scores."""

    judgements: int
    dont_know_judgements: int
    training_judgements: int
    volunteers: int
    metrics: int
    scores: int
    scores_failed: int
    scores_missing: int


@dataclass(frozen=True)
class SubsetCounts:
    """One column of the tables: a corpus (``key`` its origin) or all pairs (``key`` "all")."""

    key: str
    label: str
    pairs: int
    labelled: int
    paraphrases: int
    non_paraphrases: int
    ties: int
    dont_know_only: int
    unjudged: int


@dataclass(frozen=True)
class ScoreCounts:
    done: int
    failed: int
    missing: int


@dataclass(frozen=True)
class MetricRow:
    """A metric configuration as the report lists it."""

    id: int
    name: str
    label: str
    higher_is_closer: bool
    arrow: str
    natural_threshold: float | None
    scores: ScoreCounts


@dataclass(frozen=True)
class Excluded:
    """Labelled pairs left out of a metric's statistics: scoring failed, or no score yet."""

    failed: int
    missing: int


@dataclass(frozen=True)
class Summary:
    mean: float | None
    std: float | None
    n: int


@dataclass(frozen=True)
class ClassStats:
    """Table 1: scores of the paraphrases (yes) and of the non-paraphrases (no)."""

    yes: Summary
    no: Summary


@dataclass(frozen=True)
class CorrelationValue:
    r: float | None
    n: int
    reason: str | None


@dataclass(frozen=True)
class ClassCorrelations:
    """Table 3: correlation with the edit distance inside each class."""

    yes: CorrelationValue
    no: CorrelationValue


@dataclass(frozen=True)
class Tied:
    """Thresholds tied for the best accuracy (own units) and the rule that picks one."""

    count: int
    highest: float | None
    lowest: float | None
    rule: str


@dataclass(frozen=True)
class BestAccuracy:
    """Table 2: the threshold with the best accuracy, its confusion and interval."""

    threshold: float | None  # own units; None: call no pair a paraphrase
    rule: str  # "≥", "≤" or "none"
    accuracy: float | None
    f1: float | None
    precision: float | None
    recall: float | None
    tp: int
    fp: int
    tn: int
    fn: int
    ci: IntervalPair | None
    tied: Tied | None


@dataclass(frozen=True)
class Eer:
    """Table 4: equal error rate, its threshold (own units) and interval."""

    rate: float | None
    threshold: float | None
    ci: IntervalPair | None


@dataclass(frozen=True)
class Natural:
    """Table 5: the decision at the metric's natural threshold."""

    threshold: float | None
    rule: str
    accuracy: float | None
    f1: float | None
    precision: float | None
    recall: float | None
    tp: int
    fp: int
    tn: int
    fn: int


@dataclass(frozen=True)
class Auc:
    value: float | None
    ci: IntervalPair | None


@dataclass(frozen=True)
class Ordinal:
    """Correlations of the oriented score with the graded human scale."""

    pearson: CorrelationValue
    spearman: CorrelationValue


@dataclass(frozen=True)
class RankingSummary:
    """Top-k: calling the k best-scored pairs paraphrases, the best F1 and accuracy over k."""

    f1_max: float | None
    k_f1_max: int
    recall_at_f1_max: float | None
    precision_at_f1_max: float | None
    accuracy_max: float | None
    k_accuracy_max: int


@dataclass(frozen=True)
class BootstrapCounts:
    resamples: int
    single_class_resamples: int  # resamples with one class only (AUC and EER left out there)


@dataclass(frozen=True)
class MetricResult:
    """Every statistic of one metric on one subset; ``undefined``: statistic -> why it is None."""

    pairs: int  # labelled pairs of the subset
    n: int  # ... that the metric scored
    positives: int
    negatives: int
    excluded: Excluded
    class_stats: ClassStats
    best_accuracy: BestAccuracy | None
    edit_distance: ClassCorrelations
    eer: Eer | None
    natural: Natural | None
    auc: Auc | None
    ordinal: Ordinal
    ranking: RankingSummary | None
    bootstrap: BootstrapCounts | None
    undefined: dict[str, str]
    # The correlations' intervals and the two-way (pairs and volunteers) ones (:mod:`.rater_bootstrap`).
    raters: RaterIntervals | None = None


@dataclass(frozen=True)
class Box:
    """A box plot as Chart.js's box-plot plugin reads it (hence the camelCase JSON names)."""

    JSON_NAMES: ClassVar[dict[str, str]] = {"whisker_min": "whiskerMin", "whisker_max": "whiskerMax"}

    min: float | None
    q1: float | None
    median: float | None
    q3: float | None
    max: float | None
    mean: float | None
    whisker_min: float | None
    whisker_max: float | None
    outliers: list[float | None]
    n: int


@dataclass(frozen=True)
class Boxes:
    yes: Box | None
    no: Box | None


@dataclass(frozen=True)
class ChartThresholds:
    natural: float | None
    best: float | None


@dataclass(frozen=True)
class RocCurve:
    fpr: list[float | None]
    tpr: list[float | None]


@dataclass(frozen=True)
class RankCurve:
    fraction: list[float | None]
    k: list[int]
    accuracy: list[float | None]
    f1: list[float | None]


@dataclass(frozen=True)
class WorstPair:
    """A pair on which the metric and the volunteers disagree most (its rank against the label)."""

    pair: int
    name: str
    paraphrase: bool
    score: float | None
    rank: float | None
    disagreement: float | None


@dataclass(frozen=True)
class Chart:
    """One metric's chart data on all pairs; ``scatter``: (edit distance, score, label) points,
    ``scatter_pairs`` the pair of each point; ``worst``: the worst disagreements."""

    box: Boxes
    scatter: list[tuple[float | None, float | None, int]]
    scatter_pairs: list[int]
    worst: list[WorstPair]
    thresholds: ChartThresholds
    roc: RocCurve | None
    rank: RankCurve | None


@dataclass(frozen=True)
class CoefficientValue:
    value: float | None
    observed: float | None
    chance: float | None
    pairs: int
    reason: str | None


@dataclass(frozen=True)
class Agreement:
    """Inter-annotator agreement on the pairs two or more volunteers judged."""

    pairs_judged: int
    pairs_multi: int
    judgements_per_pair: float | None
    measurable: bool
    reason: str | None
    paraphrase_share: float | None
    krippendorff_alpha: CoefficientValue
    fleiss_kappa: CoefficientValue
    gwet_ac1: CoefficientValue
    cohen_kappa: CoefficientValue


@dataclass(frozen=True)
class VolunteerRow:
    id: int
    volunteer: str  # pseudonym, or "#id"
    english_level: str
    judgements: int
    dont_know: int
    compared: int
    agreement: float | None
    training_answers: int
    training_correct: int
    training_accuracy: float | None
    median_response_seconds: float | None


@dataclass(frozen=True)
class WaitState:
    """While the intervals are computed elsewhere: the job's phase and attempt (:mod:`waits`)."""

    phase: str
    attempt: int


@dataclass(frozen=True)
class BootstrapInfo:
    """How the intervals are computed, and whether they are in: ``state`` "ready", "off",
    "computing" (left for the interactive queue) or "unavailable" (``message`` says why)."""

    JSON_OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"wait"})

    resamples: int
    seed: int
    confidence: float
    method: str
    threshold: str
    unit: str
    state: str
    message: str
    wait: WaitState | None = None


@dataclass(frozen=True)
class Report:
    """Every table, chart, agreement figure and count of one campaign (after filters).

    ``results[metric id][subset key]`` and ``charts[metric id]``; :func:`report_json` is its JSON.
    """

    analysis_version: str
    reference: Reference
    counts: Counts
    subsets: list[SubsetCounts]
    metrics: list[MetricRow]
    results: dict[int, dict[str, MetricResult]]
    charts: dict[int, Chart]
    agreement: Agreement
    volunteers: list[VolunteerRow]
    bootstrap: BootstrapInfo

    def result(self, metric_id: int, subset: str) -> MetricResult:
        return self.results[metric_id][subset]


def report_json(report: Report) -> dict[str, Any]:
    """The report as the dashboard and the API read it (metric ids as string keys)."""
    data: dict[str, Any] = to_json(report)
    return data


# --- small converters ------------------------------------------------------------------------


def _num(value: float | None, digits: int | None = None) -> float | None:
    """A JSON-safe float: None for missing or non-finite values; statistics at full precision,
    chart coordinates rounded (``digits``) to keep payloads small."""
    if value is None:
        return None
    number = float(value)
    if not math.isfinite(number):
        return None
    return number if digits is None else round(number, digits)


def _interval(value: Interval | None) -> IntervalPair | None:
    return None if value is None else (_num(value.low), _num(value.high))


def _own(threshold: float | None, metric: MetricInfo) -> float | None:
    """Oriented threshold back to the metric's own units."""
    if threshold is None:
        return None
    return threshold if metric.higher_is_closer else -threshold


def _rule(metric: MetricInfo) -> str:
    return "≥" if metric.higher_is_closer else "≤"


def _summary(summary: ClassSummary) -> Summary:
    return Summary(_num(summary.mean), _num(summary.std), summary.n)


def _correlation(value: Correlation) -> CorrelationValue:
    return CorrelationValue(_num(value.value), value.n, value.reason)


def _coefficient(value: agreement_stats.Coefficient, reason: str | None = None) -> CoefficientValue:
    return CoefficientValue(
        _num(value.value), _num(value.observed), _num(value.chance), value.units, reason or value.reason
    )


# --- subsets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Subset:
    key: str
    label: str
    mask: BoolArray


def subsets(origins: list[str]) -> list[Subset]:
    """One subset per origin (corpus) when there are several, then all pairs together ("Global")."""
    values = np.asarray(origins, dtype=object)
    distinct = sorted(set(origins))
    result: list[Subset] = []
    if len(distinct) > 1:
        result = [Subset(origin, origin or NO_ORIGIN_LABEL, values == origin) for origin in distinct]
    # A single corpus (or a corpus filter) is named as such rather than "Global".
    label = distinct[0] if len(distinct) == 1 and distinct[0] else ALL_LABEL
    result.append(Subset(ALL, label, np.ones(len(origins), dtype=bool)))
    return result


# --- one metric on one subset ----------------------------------------------------------------


def _metric_subset(
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
    undefined: dict[str, str] = {}
    if r.n == 0:
        reason = "no labelled pair has a score" if np.any(labelled) else "no labelled pairs"
        undefined.update(best_accuracy=reason, auc=reason, eer=reason)
    elif not r.both_classes:
        only = "paraphrases" if r.negatives == 0 else "non-paraphrases"
        undefined.update(auc=f"only {only} among the labelled pairs", eer=f"only {only} among the labelled pairs")

    own = raw[valid]
    best: ThresholdResult | None = best_accuracy(r)
    tied = tied_best(r)
    best_result = None
    if best is not None:
        best_result = BestAccuracy(
            threshold=_num(_own(best.threshold, metric)),
            rule=_rule(metric) if best.threshold is not None else "none",
            **_confusion(best.confusion),
            ci=None,
            tied=None
            if tied is None
            else Tied(
                tied.count, _num(_own(tied.highest, metric)), _num(_own(tied.lowest, metric)), "highest threshold"
            ),
        )

    distance = edit_distance[valid]
    eer = equal_error_rate(r)
    natural = None
    if metric.natural_threshold is not None and r.n:
        oriented_threshold = metric.natural_threshold if metric.higher_is_closer else -metric.natural_threshold
        natural = Natural(
            threshold=_num(metric.natural_threshold),
            rule=_rule(metric),
            **_confusion(at_threshold(scores, truth, oriented_threshold)),
        )
    elif metric.natural_threshold is None:
        undefined["natural"] = "the metric has no natural threshold"

    auc = roc_auc(r)
    graded_mask = mask & np.isfinite(labels.graded) & np.isfinite(raw)
    human = labels.graded[graded_mask]
    oriented = oriented_all[graded_mask]

    curves = rank_curves(r)
    ranking = None
    if curves is not None:
        at_f1 = int(np.argmax(curves.f1))
        at_accuracy = int(np.argmax(curves.accuracy))
        ranking = RankingSummary(
            f1_max=_num(curves.f1[at_f1]),
            k_f1_max=at_f1,
            recall_at_f1_max=_num(curves.recall[at_f1]),
            precision_at_f1_max=_num(curves.precision[at_f1]),
            accuracy_max=_num(curves.accuracy[at_accuracy]),
            k_accuracy_max=at_accuracy,
        )
    result = MetricResult(
        pairs=int(np.count_nonzero(labelled)),
        n=r.n,
        positives=r.positives,
        negatives=r.negatives,
        excluded=Excluded(
            failed=int(np.count_nonzero(labelled & failed)),
            missing=int(np.count_nonzero(labelled & ~failed & ~np.isfinite(raw))),
        ),
        class_stats=ClassStats(yes=_summary(class_summary(own[truth])), no=_summary(class_summary(own[~truth]))),
        best_accuracy=best_result,
        edit_distance=ClassCorrelations(
            yes=_correlation(pearson(own[truth], distance[truth])),
            no=_correlation(pearson(own[~truth], distance[~truth])),
        ),
        eer=None if eer is None else Eer(_num(eer.rate), _num(_own(eer.threshold, metric)), None),
        natural=natural,
        auc=None if auc is None else Auc(_num(auc), None),
        ordinal=Ordinal(
            pearson=_correlation(pearson(oriented, human)), spearman=_correlation(spearman(oriented, human))
        ),
        ranking=ranking,
        bootstrap=None,
        undefined=undefined,
    )
    return result, r


def _tied(tied: TiedBest, metric: MetricInfo) -> Tied:
    return Tied(tied.count, _num(_own(tied.highest, metric)), _num(_own(tied.lowest, metric)), "highest threshold")


def _confusion(confusion: Confusion) -> dict[str, Any]:
    """The confusion part of :class:`BestAccuracy` and :class:`Natural` (keyword arguments)."""
    return {
        "accuracy": _num(confusion.accuracy),
        "f1": _num(confusion.f1),
        "precision": _num(confusion.precision),
        "recall": _num(confusion.recall),
        "tp": int(confusion.tp),
        "fp": int(confusion.fp),
        "tn": int(confusion.tn),
        "fn": int(confusion.fn),
    }


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
        accuracy=_interval(result.accuracy),
        auc=_interval(result.auc),
        eer=_interval(result.eer),
        resamples=result.resamples,
        single_class_resamples=result.single_class_resamples,
    )


def _intervals_of(jobs: list[tuple[int, str, Ranked, int]], resamples: int, seed: int, confidence: float) -> Intervals:
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
    intervals = _intervals_of(jobs, options.resamples, options.seed, options.confidence)
    return _with_raters(intervals, data, labels, options)


def _with_raters(intervals: Intervals, data: AnalysisInput, labels: HumanLabels, options: ReportOptions) -> Intervals:
    """``intervals`` with the two-way (pairs and volunteers) intervals of :mod:`.rater_bootstrap`."""
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


# --- charts ----------------------------------------------------------------------------------


def _round_list(values: FloatArray, digits: int = 5) -> list[float | None]:
    return [_num(v, digits) for v in values.tolist()]


def _chart(
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
    scatter = [(_num(edit_distance[i], 4), _num(raw[i], 5), int(labels.binary[i])) for i in points.tolist()]
    names = data.external_ids or [""] * len(data.pair_ids)
    worst = [
        WorstPair(
            pair=int(data.pair_ids[item.index]),
            name=names[item.index],
            paraphrase=item.paraphrase,
            score=_num(item.score, 5),
            rank=_num(item.rank, 4),
            disagreement=_num(item.disagreement, 4),
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
        thresholds=ChartThresholds(natural=_num(metric.natural_threshold), best=_num(best_threshold)),
        roc=roc_curve,
        rank=rank_curve,
    )


def _box(values: FloatArray) -> Box | None:
    stats = box_stats(values)
    if stats is None:
        return None
    return Box(
        min=_num(stats.min),
        q1=_num(stats.q1),
        median=_num(stats.median),
        q3=_num(stats.q3),
        max=_num(stats.max),
        mean=_num(stats.mean),
        whisker_min=_num(stats.whisker_min),
        whisker_max=_num(stats.whisker_max),
        outliers=[_num(v) for v in stats.outliers],
        n=stats.n,
    )


def _scatter_sample(labels: HumanLabels, limit: int, seed: int) -> IntArray:
    """The same labelled pairs for every metric's scatter plot, at most ``limit`` of them."""
    candidates = np.flatnonzero(labels.labelled)
    if len(candidates) <= limit:
        return candidates
    rng = np.random.default_rng([seed, 2])
    return np.sort(rng.choice(candidates, size=limit, replace=False))


# --- agreement and volunteers ----------------------------------------------------------------


def agreement_section(judgements: JudgementRows, n_pairs: int) -> Agreement:
    """Inter-annotator agreement on the pairs that two or more volunteers judged."""
    ordinal = ORDINAL_OF_CODE[judgements.code] if len(judgements) else np.zeros(0, dtype=np.int64)
    binary = BINARY_OF_CODE[judgements.code] if len(judgements) else np.zeros(0, dtype=np.int8)
    ordinal_counts = agreement_stats.category_counts(judgements.pair_index, ordinal - 1, n_pairs, 4)
    binary_counts = agreement_stats.category_counts(judgements.pair_index, binary.astype(np.int64), n_pairs, 2)
    graded_per_pair = ordinal_counts.sum(axis=1)
    judged = np.bincount(judgements.pair_index, minlength=n_pairs) if len(judgements) else np.zeros(n_pairs)
    multi = int(np.count_nonzero(graded_per_pair >= 2))
    first, second = agreement_stats.first_two(judgements.pair_index, binary.astype(np.int64), judgements.answered_at)
    graded_total = int(binary_counts.sum())
    reason = agreement_stats.NOT_MEASURABLE if len(judgements) else "no judgements yet"
    # Without any judgement every coefficient says so (rather than its own, more technical reason).
    none_yet = None if len(judgements) else reason
    return Agreement(
        pairs_judged=int(np.count_nonzero(judged)),
        pairs_multi=multi,
        judgements_per_pair=_num(float(np.mean(judged[judged > 0])) if np.any(judged) else None, 3),
        measurable=multi > 0,
        reason=None if multi else reason,
        paraphrase_share=_num(binary_counts[:, 1].sum() / graded_total if graded_total else None),
        krippendorff_alpha=_coefficient(agreement_stats.krippendorff_alpha(ordinal_counts, [1, 2, 3, 4]), none_yet),
        fleiss_kappa=_coefficient(agreement_stats.fleiss_kappa(binary_counts), none_yet),
        gwet_ac1=_coefficient(agreement_stats.gwet_ac1(binary_counts), none_yet),
        cohen_kappa=_coefficient(agreement_stats.cohen_kappa(first, second), none_yet),
    )


def volunteer_section(judgements: JudgementRows, volunteers: list[VolunteerInfo], n_pairs: int) -> list[VolunteerRow]:
    """One row per volunteer: judgements, leave-one-out agreement, training accuracy, speed."""
    binary = BINARY_OF_CODE[judgements.code] if len(judgements) else np.zeros(0, dtype=np.int8)
    loo = agreement_stats.leave_one_out_agreement(judgements.pair_index, binary, n_pairs)
    rows: list[VolunteerRow] = []
    order = np.argsort(judgements.volunteer, kind="stable")
    volunteer_sorted = judgements.volunteer[order]
    for info in volunteers:
        start, end = np.searchsorted(volunteer_sorted, [info.id, info.id + 1])
        mine = order[start:end]
        compared = int(np.count_nonzero(loo.compared[mine]))
        agreed = int(np.count_nonzero(loo.agrees[mine]))
        times = judgements.response_seconds[mine]
        times = times[np.isfinite(times)]
        if len(mine) == 0 and info.training_answers == 0:
            continue
        rows.append(
            VolunteerRow(
                id=info.id,
                volunteer=info.pseudonym or f"#{info.id}",
                english_level=info.english_level,
                judgements=len(mine),
                dont_know=int(np.count_nonzero(judgements.code[mine] == DONT_KNOW_CODE)),
                compared=compared,
                agreement=_num(agreed / compared if compared else None, 4),
                training_answers=info.training_answers,
                training_correct=info.training_correct,
                training_accuracy=_num(
                    info.training_correct / info.training_answers if info.training_answers else None, 4
                ),
                median_response_seconds=_num(float(np.median(times)) if len(times) else None, 2),
            )
        )
    rows.sort(key=lambda row: (-row.judgements, row.id))
    return rows


# --- the report ------------------------------------------------------------------------------


def human_labels(data: AnalysisInput, reference: Reference) -> HumanLabels:
    """The reference labels of every pair."""
    n = len(data.pair_ids)
    from_volunteers = volunteer_labels(n, data.judgements.pair_index, data.judgements.code)
    if reference is Reference.VOLUNTEERS:
        return from_volunteers
    return gold_labels(data.gold_label, data.gold_score, from_volunteers.judgements, from_volunteers.dont_know)


def build_report(data: AnalysisInput, options: ReportOptions | None = None) -> Report:
    """Compute every table, chart, agreement figure and count for one campaign."""
    options = options or ReportOptions()
    reference = Reference(options.reference)
    labels = human_labels(data, reference)
    n = len(data.pair_ids)
    groups = subsets(data.origins)
    jobs: list[tuple[int, str, Ranked, int]] = []
    sample = _scatter_sample(labels, options.scatter_points, options.seed)

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
            result, ranked = _metric_subset(metric, raw, failed, labels, data.edit_distance, group.mask)
            per_subset[group.key] = result
            jobs.append((metric.id, group.key, ranked, result.pairs))
            if group.key == ALL and options.charts:
                best = result.best_accuracy
                charts[metric.id] = _chart(
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
                natural_threshold=_num(metric.natural_threshold),
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
    )
    if options.intervals and options.resamples > 0:
        intervals = _intervals_of(jobs, options.resamples, options.seed, options.confidence)
        report = with_intervals(report, _with_raters(intervals, data, labels, options))
    return report
