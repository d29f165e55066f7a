"""The typed report: every section a frozen dataclass, read by attribute; :func:`report_json` its one JSON form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from scoring.analysis import cards as card_stats
from scoring.analysis.labels import (
    LabelCounts,
    Reference,
)
from scoring.analysis.plain import to_json
from scoring.analysis.rater_bootstrap import RaterIntervals
from scoring.analysis.weighted import WeightedSection

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
    # The correlations' intervals and the two-way (pairs and volunteers) ones (:mod:`scoring.analysis.rater_bootstrap`).
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
    weighted: WeightedSection | None = None  # adaptive selection: the pool's weighted figures
    cards: card_stats.Cards | None = None  # robustness on the probe set, calibration of log-odds metrics

    def result(self, metric_id: int, subset: str) -> MetricResult:
        return self.results[metric_id][subset]


def report_json(report: Report) -> dict[str, Any]:
    """The report as the dashboard and the API read it (metric ids as string keys)."""
    data: dict[str, Any] = to_json(report)
    return data
