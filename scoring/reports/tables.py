"""The paper's tables, built from the typed report, for the page and for ``evaluate_metrics``.

They read :class:`~scoring.analysis.report.Report` by attribute.

One table model serves every output: rows (metric, statistic), columns (corpora, optionally
split into paraphrase / non-paraphrase), cells with a display text, the number behind it and
a flag for the best value of the column, which the page and the Markdown / LaTeX outputs
emphasise. "Best" compares the values as displayed, so two values that print the same are
both emphasised.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from scoring.analysis.cards import NO_PROBE_SET, UNSCORED, CalibrationSection, CardFigure, RobustnessSection
from scoring.analysis.labels import Reference
from scoring.analysis.rater_bootstrap import (
    PAIRS_AND_VOLUNTEERS,
    PAIRS_ONLY,
    PROBES_SENTENCE,
    TwoWayIntervals,
    when_each,
)
from scoring.analysis.report import (
    BestAccuracy,
    CorrelationValue,
    IntervalPair,
    MetricResult,
    MetricRow,
    Natural,
    Ordinal,
    RankingSummary,
    Report,
)
from scoring.analysis.weighted import WeightedSection

Best = Literal["max", "min", "min_abs"] | None

RATE_DIGITS = 3  # accuracies, F1, AUC, EER, correlations
SCORE_DIGITS = 2  # scores and thresholds in the metric's own units (the paper's precision)
DASH = "—"
EN_DASH = "\u2013"  # between the ends of an interval
MINUS = "\u2212"  # in a difference of two metrics


@dataclass
class Cell:
    """One displayed value; ``note`` says why a value is missing or what a range means."""

    text: str
    value: float | None = None
    best: bool = False
    note: str = ""
    digits: int | None = None  # decimals shown; "best" compares values rounded so


@dataclass
class Row:
    label: str
    stat: str = ""
    cells: list[Cell] = field(default_factory=list)
    first: bool = True  # first row of a metric block (the page draws a rule above it)


@dataclass
class Table:
    key: str
    title: str
    caption: str
    row_header: list[str]
    columns: list[str]
    groups: list[tuple[str, int]] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    note: str = ""
    text_columns: list[int] = field(default_factory=list)  # left-aligned words, not numbers

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["groups"] = [{"label": label, "span": span} for label, span in self.groups]
        return data


def fmt(value: float | None, digits: int = RATE_DIGITS) -> str:
    """A number as the tables print it; a dash when it is undefined."""
    if value is None:
        return DASH
    text = f"{value:.{digits}f}"
    return "0." + "0" * digits if text == "-0." + "0" * digits else text


def tied_range(first: float | None, second: float | None) -> str:
    """The range of the thresholds tied for the best accuracy, in the metric's own units, lowest
    first (``0.31 … 0.41``); ``none`` stands for "call no pair a paraphrase". Table 2 and the
    "Threshold honesty" table both print it with this function, so they cannot disagree."""
    numbers = sorted(value for value in (first, second) if value is not None)
    parts = [fmt(value, SCORE_DIGITS) for value in numbers]
    if first is None or second is None:
        parts.append("none")
    return " … ".join(parts)


def _cell(value: float | None, digits: int = RATE_DIGITS, note: str = "") -> Cell:
    # The value keeps full precision (CSV / JSON output); "best" compares the printed digits.
    return Cell(fmt(value, digits), value, note=note, digits=digits)


def _ci(interval: IntervalPair | None, digits: int = RATE_DIGITS, note: str = "") -> Cell:
    if not interval or interval[0] is None or interval[1] is None:
        return Cell(DASH, note=note or "not enough pairs for an interval")
    return Cell(f"{fmt(interval[0], digits)}{EN_DASH}{fmt(interval[1], digits)}", note="95% bootstrap interval")


def _shown(cell: Cell) -> float | None:
    if cell.value is None:
        return None
    return round(cell.value, cell.digits) if cell.digits is not None else cell.value


def mark_best(rows: list[Row], stat: str, best: Best) -> None:
    """Flag the best cell of each column among the rows showing ``stat`` (two values at least)."""
    if best is None:
        return
    chosen = [row for row in rows if row.stat == stat]
    if not chosen:
        return
    for column in range(len(chosen[0].cells)):
        shown = (_shown(row.cells[column]) for row in chosen if row.cells[column].value is not None)
        values = [value for value in shown if value is not None]
        if len(values) < 2:  # one metric alone is not "the best"
            continue
        if best == "max":
            target = max(values)
        elif best == "min":
            target = min(values)
        else:
            target = min(abs(v) for v in values)
        for row in chosen:
            value = _shown(row.cells[column])
            if value is not None and (abs(value) if best == "min_abs" else value) == target:
                row.cells[column].best = True


def _subset_columns(report: Report) -> tuple[list[str], list[str]]:
    keys = [subset.key for subset in report.subsets]
    labels = [subset.label for subset in report.subsets]
    return keys, labels


def _metric_name(metric: MetricRow) -> str:
    return f"{metric.label} {metric.arrow}"


def _why(result: MetricResult, statistic: str) -> str:
    return result.undefined.get(statistic, "")


StatFn = Callable[[MetricResult], Cell]
Side = Literal["yes", "no"]
ClassFn = Callable[[MetricResult, Side], Cell]


def _block_table(
    report: Report,
    key: str,
    title: str,
    caption: str,
    stats: list[tuple[str, StatFn, Best]],
    metrics: list[MetricRow] | None = None,
    note: str = "",
) -> Table:
    """Rows (metric, statistic) x columns (subsets), as the paper's Tables 2, 4 and 5."""
    keys, labels = _subset_columns(report)
    table = Table(key, title, caption, ["Metric", "Statistic"], labels, note=note)
    for metric in report.metrics if metrics is None else metrics:
        for index, (stat, function, _) in enumerate(stats):
            cells = [function(report.result(metric.id, subset)) for subset in keys]
            table.rows.append(Row(_metric_name(metric), stat, cells, first=index == 0))
    for stat, _, best in stats:
        mark_best(table.rows, stat, best)
    return table


def _class_table(
    report: Report,
    key: str,
    title: str,
    caption: str,
    function: ClassFn,
    best: Best,
    counts: bool = False,
) -> Table:
    """Rows metrics x columns (subset, yes/no), as the paper's Tables 1 and 3; with ``counts`` a
    third column per subset gives the labelled pairs the metric scored (a partly scored metric
    shows it)."""
    keys, labels = _subset_columns(report)
    sides = ("yes", "no", "n") if counts else ("yes", "no")
    table = Table(
        key,
        title,
        caption,
        ["Metric"],
        [name for _ in keys for name in sides],
        [(label, len(sides)) for label in labels],
    )
    for metric in report.metrics:
        cells = []
        for subset in keys:
            result = report.result(metric.id, subset)
            cells += [function(result, "yes"), function(result, "no")]
            if counts:
                note = f"of {result.pairs} labelled pairs" if result.n < result.pairs else ""
                cells.append(Cell(str(result.n), float(result.n), note=note))
        table.rows.append(Row(_metric_name(metric), "", cells))
    mark_best(table.rows, "", best)  # Table 1 marks nothing; Table 3 has no counts column
    return table


# --- cell functions ---------------------------------------------------------------------------


def _mean_std(result: MetricResult, side: Side) -> Cell:
    stats = result.class_stats.yes if side == "yes" else result.class_stats.no
    if stats.mean is None:
        return Cell(DASH, note="no pair of this class has a score")
    std = DASH if stats.std is None else fmt(stats.std, SCORE_DIGITS)
    return Cell(f"{fmt(stats.mean, SCORE_DIGITS)} ± {std}", stats.mean, note=f"n = {stats.n}")


def _edit_corr(result: MetricResult, side: Side) -> Cell:
    corr = result.edit_distance.yes if side == "yes" else result.edit_distance.no
    return _cell(corr.r, note=corr.reason or f"n = {corr.n}")


def _best(value: Callable[[BestAccuracy], float | None]) -> StatFn:
    def get(result: MetricResult) -> Cell:
        best = result.best_accuracy
        if best is None:
            return Cell(DASH, note=_why(result, "best_accuracy"))
        return _cell(value(best))

    return get


def _best_threshold(result: MetricResult) -> Cell:
    best = result.best_accuracy
    if best is None:
        return Cell(DASH, note=_why(result, "best_accuracy"))
    if best.threshold is None:
        return Cell("none", note="best: call no pair a paraphrase")
    return Cell(
        f"{best.rule} {fmt(best.threshold, SCORE_DIGITS)}", best.threshold, note=f"paraphrase when {best.rule} this"
    )


def _tied_thresholds(result: MetricResult) -> Cell:
    tied = result.best_accuracy.tied if result.best_accuracy else None
    if not tied:
        return Cell(DASH, note=_why(result, "best_accuracy"))
    if tied.count == 1:
        return Cell("unique", 1.0)
    return Cell(
        f"{tied.count}: {tied_range(tied.lowest, tied.highest)}",
        float(tied.count),
        note="thresholds with the same accuracy",
    )


def _best_ci(result: MetricResult) -> Cell:
    best = result.best_accuracy
    return _ci(best.ci if best else None, note=_why(result, "best_accuracy"))


def _eer_rate(result: MetricResult) -> Cell:
    eer = result.eer
    return Cell(DASH, note=_why(result, "eer")) if eer is None else _cell(eer.rate)


def _eer_ci(result: MetricResult) -> Cell:
    eer = result.eer
    return _ci(eer.ci if eer else None, note=_why(result, "eer"))


def _eer_threshold(result: MetricResult) -> Cell:
    eer = result.eer
    if eer is None:
        return Cell(DASH, note=_why(result, "eer"))
    if eer.threshold is None:
        return Cell("none")
    return _cell(eer.threshold, SCORE_DIGITS)


def _natural(value: Callable[[Natural], float | None]) -> StatFn:
    def get(result: MetricResult) -> Cell:
        natural = result.natural
        return Cell(DASH, note=_why(result, "natural")) if natural is None else _cell(value(natural))

    return get


def _auc(result: MetricResult) -> Cell:
    auc = result.auc
    return Cell(DASH, note=_why(result, "auc")) if auc is None else _cell(auc.value)


def _auc_ci(result: MetricResult) -> Cell:
    auc = result.auc
    return _ci(auc.ci if auc else None, note=_why(result, "auc"))


def _two_way(value: Callable[[TwoWayIntervals], IntervalPair | None], statistic: str) -> StatFn:
    """The two-way (pairs and volunteers) interval of a statistic."""

    def get(result: MetricResult) -> Cell:
        raters = result.raters
        two_way = raters.two_way if raters else None
        if two_way is None:
            return _ci(None, note=(raters.reason if raters else None) or _why(result, statistic))
        cell = _ci(value(two_way), note=_why(result, statistic))
        if cell.text != DASH:
            cell.note = f"95% bootstrap interval over pairs and {two_way.volunteers} volunteers, both resampled"
        return cell

    return get


def _correlation_ci(name: str) -> StatFn:
    """The pairs-only interval of a correlation with the graded human scale."""

    def get(result: MetricResult) -> Cell:
        interval = getattr(result.raters, name) if result.raters else None
        return _ci(interval, note=getattr(result.ordinal, name).reason or "")

    return get


def _intervals_sentence(report: Report) -> str:
    """What the two kinds of interval are for (part of the captions of the tables with intervals)."""
    if report.reference is Reference.GOLD:
        return " " + when_each(False)
    return " " + when_each(True)


def _interval_rows(name: str, pairs_only: StatFn, two_way: StatFn, report: Report) -> list[tuple[str, StatFn, Best]]:
    """The 95% CI rows of a statistic: pairs only, then pairs and volunteers (volunteers' labels only)."""
    rows: list[tuple[str, StatFn, Best]] = [(f"{name} 95% CI, {PAIRS_ONLY}", pairs_only, None)]
    if report.reference is not Reference.GOLD:
        rows.append((f"{name} 95% CI, {PAIRS_AND_VOLUNTEERS}", two_way, None))
    return rows


def _ordinal(value: Callable[[Ordinal], CorrelationValue]) -> StatFn:
    def get(result: MetricResult) -> Cell:
        corr = value(result.ordinal)
        return _cell(corr.r, note=corr.reason or f"n = {corr.n}")

    return get


def _ranking(value: Callable[[RankingSummary], float | None]) -> StatFn:
    def get(result: MetricResult) -> Cell:
        ranking = result.ranking
        return Cell(DASH, note="no labelled pair has a score") if ranking is None else _cell(value(ranking))

    return get


# --- the tables ---------------------------------------------------------------------------------


def _class_means_table(report: Report) -> Table:
    """Table 1: each metric's mean and standard deviation in each class."""
    reference = "imported gold labels" if report.reference is Reference.GOLD else "volunteers' majority labels"
    return _class_table(
        report,
        "table1",
        "Table 1 — Mean ± standard deviation per class",
        f"Scores in each metric's own units for paraphrases (yes) and non-paraphrases (no) by {reference}; "
        "↑: higher is closer, ↓: lower is closer. Standard deviation with n - 1; n: labelled pairs the metric "
        "scored.",
        _mean_std,
        None,
        counts=True,
    )


def _best_threshold_table(report: Report) -> Table:
    """Table 2: classification at the threshold that maximises accuracy."""
    return _block_table(
        report,
        "table2",
        "Table 2 — Best-threshold classification",
        "The threshold that maximises accuracy (chosen a posteriori on these pairs), with F1, recall and "
        "precision there. The interval is a 95% bootstrap interval with the threshold re-optimised in every "
        "resample. When several thresholds tie for the best accuracy the highest is used (it decides F1, "
        "recall and precision) and the range of tied thresholds is shown. Best value per column in bold."
        + _intervals_sentence(report),
        [
            ("Max. acc.", _best(lambda best: best.accuracy), "max"),
            *_interval_rows("Acc.", _best_ci, _two_way(lambda two: two.accuracy, "best_accuracy"), report),
            ("Threshold", _best_threshold, None),
            ("Tied thresholds", _tied_thresholds, None),
            ("F1", _best(lambda best: best.f1), "max"),
            ("Recall", _best(lambda best: best.recall), "max"),
            ("Precision", _best(lambda best: best.precision), "max"),
        ],
    )


def _edit_distance_table(report: Report) -> Table:
    """Table 3: correlation of each score with the edit distance, inside each class."""
    return _class_table(
        report,
        "table3",
        "Table 3 — Pearson correlation with the edit distance, inside each class",
        "Correlation of each score (own units) with the character Levenshtein distance normalised by the "
        "longer sentence. A semantic metric should not follow the edit distance: the weakest correlation "
        "per column is in bold.",
        _edit_corr,
        "min_abs",
    )


def _eer_table(report: Report) -> Table:
    """Table 4: the equal error rate and its threshold."""
    return _block_table(
        report,
        "table4",
        "Table 4 — Equal error rate",
        "Where the false acceptance rate (non-paraphrases accepted) equals the false rejection rate "
        "(paraphrases rejected), interpolated on the ROC curve; threshold of the nearest operating point. "
        "Lowest EER per column in bold." + _intervals_sentence(report),
        [
            ("EER", _eer_rate, "min"),
            *_interval_rows("EER", _eer_ci, _two_way(lambda two: two.eer, "eer"), report),
            ("Threshold", _eer_threshold, None),
        ],
    )


def _natural_threshold_table(report: Report) -> Table:
    """Table 5: accuracy and F1 at each metric's natural threshold."""
    natural_metrics = [metric for metric in report.metrics if metric.natural_threshold is not None]
    return _block_table(
        report,
        "table5",
        "Table 5 — Accuracy at the natural threshold",
        "Decision fixed a priori at the metric's natural threshold (ParaPLUIE: 0, the point where "
        "p(yes) = p(no)). Best per column in bold.",
        [
            ("Accuracy", _natural(lambda natural: natural.accuracy), "max"),
            ("F1", _natural(lambda natural: natural.f1), "max"),
        ],
        metrics=natural_metrics,
        note="" if natural_metrics else "No metric configuration here has a natural threshold.",
    )


def _ranking_table(report: Report) -> Table:
    """ROC AUC and the correlations with the graded human scale."""
    return _block_table(
        report,
        "ranking",
        "Ranking and graded agreement",
        "ROC AUC against the binary labels, and Pearson / Spearman "
        "correlation of the oriented score (higher = closer) with the graded human scale (mean of the "
        "4-point answers, or the imported gold score), each with its 95% bootstrap intervals. Best per column "
        "in bold." + _intervals_sentence(report),
        [
            ("ROC AUC", _auc, "max"),
            *_interval_rows("AUC", _auc_ci, _two_way(lambda two: two.auc, "auc"), report),
            ("Pearson", _ordinal(lambda ordinal: ordinal.pearson), "max"),
            *_interval_rows("Pearson", _correlation_ci("pearson"), _two_way(lambda two: two.pearson, ""), report),
            ("Spearman", _ordinal(lambda ordinal: ordinal.spearman), "max"),
            *_interval_rows("Spearman", _correlation_ci("spearman"), _two_way(lambda two: two.spearman, ""), report),
        ],
    )


def _topk_table(report: Report) -> Table:
    """The top-k ranking summary (best F1 and accuracy over k)."""
    return _block_table(
        report,
        "topk",
        "Top-k ranking summary",
        "Calling the k best-scored pairs paraphrases, for every k (Figures 2 and 3 above): the best F1 with its "
        "recall and precision, and the best accuracy (TALN 2024, Table 4). Best per column in bold.",
        [
            ("F1 max.", _ranking(lambda ranking: ranking.f1_max), "max"),
            ("Recall @ F1 max.", _ranking(lambda ranking: ranking.recall_at_f1_max), None),
            ("Precision @ F1 max.", _ranking(lambda ranking: ranking.precision_at_f1_max), None),
            ("Acc. max.", _ranking(lambda ranking: ranking.accuracy_max), "max"),
        ],
    )


def metric_tables(report: Report) -> list[Table]:
    """Tables 1-5 of the paper, then ranking/correlation and top-k summaries.

    One function per table: a new per-metric table is a function of its own added to this list.
    """
    tables = [
        _class_means_table(report),
        _best_threshold_table(report),
        _edit_distance_table(report),
        _eer_table(report),
        _natural_threshold_table(report),
        _ranking_table(report),
        _topk_table(report),
    ]
    if not report.metrics:
        for table in tables:
            table.note = "No metric configuration has scored these pairs yet (see the scoring status page)."
    return tables


def agreement_table(report: Report) -> Table:
    """The agreement coefficients with their parts."""
    # Imported here: the table models stay importable without Django (pure-module test).
    from django.utils.translation import ngettext

    agreement = report.agreement
    table = Table(
        "agreement",
        "Inter-annotator agreement",
        ngettext(
            "%(pairs)d pair has two or more graded judgements ",
            "%(pairs)d pairs have two or more graded judgements ",
            agreement.pairs_multi,
        )
        % {"pairs": agreement.pairs_multi}
        + f"(mean {fmt(agreement.judgements_per_pair, 2)} judgements per judged pair). "
        "Observed and chance agreement are on the binary label; Cohen's kappa compares the earlier and the "
        "later of exactly two judgements.",
        ["Coefficient"],
        ["Value", "Observed", "Chance", "Pairs"],
        note="" if agreement.measurable else str(agreement.reason),
    )
    for value, label in (
        (agreement.krippendorff_alpha, "Krippendorff's \u03b1 (ordinal, 4 points)"),
        (agreement.fleiss_kappa, "Fleiss' \u03ba (binary)"),
        (agreement.gwet_ac1, "Gwet's AC1 (binary)"),
        (agreement.cohen_kappa, "Cohen's \u03ba (binary, two judges)"),
    ):
        table.rows.append(
            Row(
                label,
                "",
                [
                    _cell(value.value, note=value.reason or ""),
                    _cell(value.observed),
                    _cell(value.chance),
                    Cell(str(value.pairs), float(value.pairs)),
                ],
            )
        )
    return table


def volunteer_table(report: Report) -> Table:
    """One row per volunteer."""
    table = Table(
        "volunteers",
        "Volunteers",
        "Agreement with the majority of the other judges of the same pair (leave-one-out; pairs where the "
        "others tie or answered only Don't know are not compared). Training accuracy: answers equal to the "
        "expected answer of the training trial.",
        ["Volunteer"],
        ["English", "Judgements", "Don't know", "Compared", "Agreement", "Training", "Median time (s)"],
        text_columns=[0],
    )
    for row in report.volunteers:
        training = f"{row.training_correct}/{row.training_answers}" if row.training_answers else DASH
        table.rows.append(
            Row(
                row.volunteer or f"#{row.id}",
                "",
                [
                    Cell(row.english_level),
                    Cell(str(row.judgements), float(row.judgements)),
                    Cell(str(row.dont_know), float(row.dont_know)),
                    Cell(str(row.compared), float(row.compared)),
                    _cell(row.agreement),
                    Cell(training, row.training_accuracy),
                    _cell(row.median_response_seconds, 1),
                ],
            )
        )
    return table


def weighted_table(section: WeightedSection) -> Table:
    """Adaptive selection: every metric's figures for the whole pool, weighted, and why."""
    low, high = fmt(section.smallest_weight, 1), fmt(section.largest_weight, 1)
    table = Table(
        "weighted",
        "Weighted for the whole pool (adaptive selection)",
        f"These figures are weighted: this campaign serves the pairs where the metrics disagree first, so its "
        f"{section.judged_pairs} judged pairs of {section.pool_pairs} over-represent the disputed ones. Each judged "
        f"pair counts 1 / its inclusion probability (weights from {low} to {high}; {section.estimator} estimator), "
        "so the figures describe the whole pool. The tables below are unweighted: they describe the judged pairs.",
        ["Metric"],
        ["AUC", "AUC ± 1.96 SE", "Pearson", "Spearman", "Pairs"],
    )
    for metric in section.metrics:
        interval = (
            DASH
            if metric.auc is None or metric.auc_se is None
            # An AUC lies in [0, 1]: the normal interval is cut there.
            else f"{fmt(max(0.0, metric.auc - 1.96 * metric.auc_se))}{EN_DASH}"
            f"{fmt(min(1.0, metric.auc + 1.96 * metric.auc_se))}"
        )
        table.rows.append(
            Row(
                metric.label,
                "",
                [
                    _cell(metric.auc, note=metric.reason),
                    Cell(interval),
                    _cell(metric.pearson),
                    _cell(metric.spearman),
                    Cell(str(metric.pairs), float(metric.pairs)),
                ],
            )
        )
    return table


def weighted_difference_table(section: WeightedSection) -> Table:
    """Adaptive selection: the weighted paired test of every two metrics (the clusters' test)."""
    table = Table(
        "weighted-delta",
        "Weighted ΔAUC between metrics (adaptive selection)",
        f"AUC(A) {MINUS} AUC(B) for the whole pool, weighted like the table above; DeLong's paired test with weighted "
        "components, Holm-adjusted over every two metrics. The paired tests further down are unweighted.",
        ["Comparison"],
        ["ΔAUC", "95% interval", "p", "p (Holm)", "Pairs"],
    )
    for row in section.differences:
        interval = (
            DASH
            if row.difference is None or row.standard_error is None
            # "to", not a dash: the ends are often negative.
            else f"{fmt(row.difference - 1.96 * row.standard_error)} to "
            f"{fmt(row.difference + 1.96 * row.standard_error)}"
        )
        table.rows.append(
            Row(
                f"{row.label_a} {MINUS} {row.label_b}",
                "",
                [
                    _cell(row.difference),
                    Cell(interval),
                    _cell(row.p_value, 4),
                    _cell(row.p_holm, 4),
                    Cell(str(row.pairs), float(row.pairs)),
                ],
            )
        )
    return table


def all_tables(report: Report) -> list[Table]:
    """Every table of a report, in the order the page and the command show them (the weighted
    table first, for an adaptive campaign)."""
    weighted = (
        [] if report.weighted is None else [weighted_table(report.weighted), weighted_difference_table(report.weighted)]
    )
    return [*weighted, *metric_tables(report), agreement_table(report), volunteer_table(report), *card_tables(report)]


# --- the robustness and calibration cards (scoring.analysis.cards) ------------------------------

NO_TEMPERATURE = "no finite T: the scores do not rise with the answers, or separate them perfectly"
KIND_NAMES = {"paws_swap": "PAWS swap", "number": "number", "date": "date", "negation": "negation"}
NO_PROBES_NOTE = (
    "No probe set was built from this campaign: build one with manage.py build_probes --campaign <slug> "
    "(or on the campaign's probe page, /staff/campaigns/<slug>/probes/), then score its campaign like any other."
)
UNSCORED_NOTE = (
    "The probe set {campaign} has no scores yet: score its campaign like any other and the cards appear here."
)


def figure_cell(figure: CardFigure, digits: int = RATE_DIGITS) -> Cell:
    """``value [low-high]``: the figure and its 95% interval over source pairs (n in the note)."""
    if figure.value is None:
        return Cell(DASH, note="no source pair has the probes this figure needs")
    text = fmt(figure.value, digits)
    if figure.low is not None and figure.high is not None:
        text += f" [{fmt(figure.low, digits)}{EN_DASH}{fmt(figure.high, digits)}]"
    return Cell(
        text, figure.value, note=f"{figure.groups} source pairs, {figure.comparisons} comparisons", digits=digits
    )


def robustness_columns(section: RobustnessSection) -> list[str]:
    return [
        *(f"{KIND_NAMES.get(kind, kind)} below control" for kind in section.kinds),
        "swap Spearman",
        "swap R-Precision",
        "asymmetry",
        "length effect",
        "SD",
    ]


def robustness_table(section: RobustnessSection) -> Table:
    table = Table(
        "robustness",
        "Robustness on the probe set",
        "Each metric's scores on pairs changed in a known way (manage.py build_probes): the share of PAWS-style "
        "swaps, number, date and negation changes scored below a meaning-keeping control of the same sentence "
        "(ties ½; 0.5 is blind), the Spearman correlation and R-Precision of the 1-, 2- and 3-swap versions with "
        "the expected order (paper 004), the mean |m(S, H) - m(H, S)| and the mean change when H opens with a "
        "neutral clause, in the metric's own units (SD: of its scores on the original pairs). "
        f"[95% interval over source pairs, {section.resamples} resamples, seed {section.seed}]. " + PROBES_SENTENCE,
        ["metric"],
        robustness_columns(section),
    )
    if section.state == NO_PROBE_SET:
        table.note = NO_PROBES_NOTE
        return table
    if section.state == UNSCORED:
        table.note = UNSCORED_NOTE.format(campaign=section.probe_campaign)
        return table
    table.note = (
        f"Probe set {section.probe_set} (campaign {section.probe_campaign}): "
        f"{section.pairs} probe pairs from {section.groups} source pairs."
    )
    for card in section.cards:
        cells = [figure_cell(card.below_control[kind]) for kind in section.kinds]
        cells += [figure_cell(card.swap_spearman), figure_cell(card.swap_r_precision)]
        cells += [figure_cell(card.asymmetry), figure_cell(card.length_effect)]
        cells.append(Cell(fmt(card.scale), card.scale, digits=RATE_DIGITS))
        table.rows.append(Row(card.label, cells=cells))
    return table


def calibration_table(section: CalibrationSection) -> Table:
    against = (
        "the imported gold label (0 or 1)"
        if section.target == "gold"
        else "the share of the pair's volunteers who called it a paraphrase (Mostly similar or Same meaning; "
        "Don't know left out)"
    )
    table = Table(
        "temperature",
        "Calibration of ParaPLUIE and a cross-fitted temperature",
        f"P(yes) = 1 / (1 + e^(-log-ratio)) against {against}, per pair: expected calibration error over "
        f"{section.bins} equal-width bins of P(yes), and Brier score. "
        "Temperature: P(yes) = 1 / (1 + e^(-log-ratio / T)), "
        f"T fitted by maximum likelihood; cross-fitted over {section.folds} folds of pairs (seed {section.seed}), each "
        "fold calibrated by the T fitted on the other folds, so the ECE after it is measured on pairs its T never "
        "saw. T above 1: the judge is over-confident.",
        ["metric"],
        ["pairs", "ECE", "Brier", "T (all pairs)", "T per fold", "ECE after T", "Brier after T"],
        text_columns=[4],
    )
    if not section.cards:
        table.note = (
            "No log-odds metric (ParaPLUIE) has scored a pair with a reference yet."
            if section.target == "gold"
            else "No log-odds metric (ParaPLUIE) has scored a pair the volunteers answered yet."
        )
    for card in section.cards:
        folds = ", ".join(DASH if t is None else fmt(t, 2) for t in card.fold_temperatures) or DASH
        table.rows.append(
            Row(
                card.label,
                cells=[
                    Cell(str(card.pairs), float(card.pairs)),
                    Cell(fmt(card.ece), card.ece, digits=RATE_DIGITS),
                    Cell(fmt(card.brier), card.brier, digits=RATE_DIGITS),
                    Cell(
                        fmt(card.temperature, 2),
                        card.temperature,
                        note=""
                        if card.temperature is not None
                        else "no finite T: the scores do not rise with the answers",
                        digits=2,
                    ),
                    Cell(folds, note="fold k's T is fitted on the other folds' pairs"),
                    Cell(fmt(card.ece_after), card.ece_after, digits=RATE_DIGITS),
                    Cell(fmt(card.brier_after), card.brier_after, digits=RATE_DIGITS),
                ],
            )
        )
    return table


def card_tables(report: Report) -> list[Table]:
    """The robustness and calibration tables of a report (none for a report without cards)."""
    if report.cards is None:
        return []
    return [robustness_table(report.cards.robustness), calibration_table(report.cards.calibration)]
