"""The meta-evaluation as :class:`~scoring.reports.tables.Table` objects (``evaluate_metrics`` output)."""

from __future__ import annotations

from typing import Any

from scoring.analysis.distance_bins import DistanceBins
from scoring.analysis.meta import MetaEvaluation
from scoring.analysis.paired import Interval, PairedTest
from scoring.reports.tables import DASH, EN_DASH, Cell, Row, Table, fmt, tied_range


def _cell(value: float | None, digits: int = 3) -> Cell:
    # The cell keeps the full-precision value (CSV/JSON); the text is rounded for reading.
    return Cell(fmt(value, digits), value)


def _p(value: float | None) -> Cell:
    if value is None:
        return Cell(DASH)
    return Cell("<0.001" if value < 0.001 else fmt(value, 3), value)


def _interval(value: Interval | None) -> Cell:
    return Cell(DASH) if value is None else Cell(f"{fmt(value.low)}{EN_DASH}{fmt(value.high)}")


def _interval_cell(value: list[float] | None) -> Cell:
    return Cell(DASH) if value is None else Cell(f"{fmt(value[0])}{EN_DASH}{fmt(value[1])}")


def _two_way_cell(test: PairedTest) -> Cell:
    """The two-way interval of a paired difference, its volunteers in the note (why none, where none)."""
    if test.interval_two_way is None:
        return Cell(DASH, note=test.two_way_reason or "")
    cell = _interval(test.interval_two_way)
    cell.note = f"95% bootstrap interval over pairs and {test.two_way_volunteers} volunteers, both resampled"
    return cell


def _systems_caption(meta: MetaEvaluation) -> str:
    view = meta.systems
    if view is None:
        return "System-level correlations and Soft Pairwise Accuracy."
    return (
        f"System-level correlations and Soft Pairwise Accuracy over {view.system_pairs} system pairs: "
        f"{view.paired_pairs} compared paired on their shared sources (at least "
        f"{view.shared_sources_rule:.0%} of each system's sources), {view.system_pairs - view.paired_pairs} by a "
        f"two-sample permutation over all items. Interval: {view.spa_resamples} bootstrap resamples, "
        "re-centred on the estimate"
        + (
            "; pairs only, and pairs and volunteers (each resample's human scores recomputed from a draw of "
            f"the {view.spa_two_way_volunteers} volunteers). "
            if view.spa_two_way_volunteers
            else ". "
        )
        + meta.two_way_note
    )


def meta_tables(meta: MetaEvaluation) -> list[Table]:
    """Ranked tables with clusters, the p-value matrices, the paired tests and the other views,
    in the order the command prints them (one function per table below)."""
    names = {metric.id: f"{metric.label} {metric.arrow}" for metric in meta.metrics}
    tables = ranking_tables(meta, names)
    tables += [paired_table(meta, names), thresholds_table(meta, names), ties_table(meta, names)]
    tables.append(ceiling_table(meta, names))
    tables.extend(alt_test_tables(meta, names))
    tables += [calibration_table(meta, names), systems_table(meta, names), groups_table(meta, names)]
    if meta.distance_bins is not None:
        tables.append(distance_bin_table(meta.distance_bins, names))
    return tables


def ranking_tables(meta: MetaEvaluation, names: dict[int, str]) -> list[Table]:
    """Per statistic: the ranking with its clusters, then the matrix of paired p-values."""
    correction = meta.options.correction.value
    tables: list[Table] = []
    for ranking in meta.rankings:
        key = f"meta_rank_{ranking.statistic.value}"
        table = Table(
            key,
            f"Ranking — {ranking.label}",
            f"Cluster = 1 + metrics significantly better (p < {meta.options.alpha}, {ranking.test} test, "
            f"{correction} correction; seed {meta.options.seed}). {ranking.floor_note}",
            ["Metric"],
            ["Cluster", ranking.label, "Pairs", "Beaten by"],
            text_columns=[3],
        )
        for row in ranking.rows:
            beaten = ", ".join(names[m] for m in row.beaten_by) or "none"
            table.rows.append(
                Row(
                    names[row.metric],
                    "",
                    [
                        Cell(str(row.rank), float(row.rank)),
                        _cell(row.value),
                        Cell(str(row.n), float(row.n)),
                        Cell(beaten),
                    ],
                )
            )
        if not ranking.rows:
            table.note = "No metric has this statistic on these pairs."
        tables.append(table)
        matrix = Table(
            f"meta_matrix_{ranking.statistic.value}",
            f"Paired p-values — {ranking.label}",
            f"p-value of every two metrics ({ranking.test} test, {correction} correction). {ranking.floor_note}",
            ["Metric"],
            [names[metric.id] for metric in meta.metrics],
        )
        for metric, row_values in zip(meta.metrics, ranking.matrix, strict=True):
            matrix.rows.append(Row(names[metric.id], "", [_p(value) for value in row_values]))
        tables.append(matrix)
    return tables


def paired_table(meta: MetaEvaluation, names: dict[int, str]) -> Table:
    """Every two metrics' paired tests, per statistic."""
    correction = meta.options.correction.value
    paired = Table(
        "meta_paired",
        "Paired comparisons",
        "A - B on the pairs both scored; permutation (PERM-BOTH), bootstrap, jackknife (Kendall), Williams "
        f"(Pearson) and DeLong (ROC AUC) p-values; {correction}-adjusted p per statistic; 95% interval of the "
        "difference (pairs only); with the volunteers' labels also the two-way bootstrap interval, pairs and "
        "volunteers resampled, the same draws for both metrics (every statistic; the cross-validated accuracy "
        "refits every fold's threshold on each replicate's labels, Kendall is recounted on each replicate's "
        "human scores). "
        f"{meta.two_way_note}",
        ["Metrics", "Statistic"],
        [
            "Pairs",
            "A",
            "B",
            "A - B",
            "95% CI, pairs only",
            "95% CI, pairs and volunteers",
            "p perm.",
            "p boot.",
            "p jack.",
            "p Williams",
            "p DeLong",
            "p adjusted",
            "Note",
        ],
        text_columns=[12],
    )
    for test in meta.paired:
        paired.rows.append(
            Row(
                f"{names[test.metric_a]} vs {names[test.metric_b]}",
                test.statistic.label,
                [
                    Cell(str(test.n), float(test.n)),
                    _cell(test.value_a),
                    _cell(test.value_b),
                    _cell(test.difference),
                    _interval(test.interval),
                    _two_way_cell(test),
                    _p(test.p_permutation),
                    _p(test.p_bootstrap),
                    _p(test.p_jackknife),
                    _p(test.p_williams),
                    _p(test.p_delong),
                    _p(test.p_holm),
                    Cell(test.reason or ""),
                ],
            )
        )
    return paired


def thresholds_table(meta: MetaEvaluation, names: dict[int, str]) -> Table:
    """Fitted against cross-validated accuracy: how honest a chosen threshold is."""
    thresholds = Table(
        "meta_thresholds",
        "Threshold honesty",
        " ".join(meta.notes)
        + f" Cross-validated: the threshold is chosen on {meta.options.folds - 1} folds, measured on the held-out one.",
        ["Metric"],
        [
            "Pairs",
            "Best acc. (fitted)",
            "Tied thresholds",
            "Tied range",
            "CV acc.",
            "CV F1",
            "Natural acc.",
            "Best threshold 95%",
        ],
    )
    for threshold_row in meta.thresholds:
        tied_text = (
            DASH if threshold_row.tied_count < 2 else tied_range(threshold_row.tied_lowest, threshold_row.tied_highest)
        )
        best_range = (
            DASH
            if threshold_row.best_threshold_low is None
            else f"{fmt(threshold_row.best_threshold_low, 2)}{EN_DASH}{fmt(threshold_row.best_threshold_high, 2)}"
        )
        thresholds.rows.append(
            Row(
                names[threshold_row.metric],
                "",
                [
                    Cell(str(threshold_row.n), float(threshold_row.n)),
                    _cell(threshold_row.best_accuracy),
                    Cell(str(threshold_row.tied_count), float(threshold_row.tied_count)),
                    Cell(tied_text),
                    _cell(threshold_row.cv_accuracy),
                    _cell(threshold_row.cv_f1),
                    _cell(threshold_row.natural_accuracy),
                    Cell(best_range),
                ],
            )
        )
    return thresholds


def ties_table(meta: MetaEvaluation, names: dict[int, str]) -> Table:
    """Kendall's tie-aware coefficients and acc23."""
    ties = Table(
        "meta_ties",
        "Ties — Kendall τ_b, τ_c and acc23",
        "acc23 credits a correctly predicted tie; calibrated: metric differences up to ε count as ties "
        "(ε maximises acc23).",
        ["Metric"],
        ["Pairs", "τ_b", "τ_c", "acc23", "acc23 cal.", "ε", "Item pairs"],
    )
    for tie_row in meta.ties:
        t = tie_row.ties
        ties.rows.append(
            Row(
                names[tie_row.metric],
                "",
                [
                    Cell(str(t.n), float(t.n)),
                    _cell(t.tau_b),
                    _cell(t.tau_c),
                    _cell(t.acc23),
                    _cell(t.acc23_calibrated),
                    _cell(t.epsilon, 4),
                    Cell(f"{t.item_pairs}{' (sampled)' if t.sampled else ''}", float(t.item_pairs)),
                ],
            )
        )
    return ties


def ceiling_table(meta: MetaEvaluation, names: dict[int, str]) -> Table:
    """Each judge and each metric against the majority of the pair's other judges."""
    ceiling = Table(
        "meta_ceiling",
        "Human ceiling",
        "Each judge against the majority of the other judges of the pair, and each metric against the same majority. "
        "Intervals: pairs and judges resampled (crossed bootstrap).",
        ["Metric"],
        ["Comparisons", "Judge agreement", "95% CI", "Metric agreement", "95% CI"],
    )
    for ceiling_row in meta.ceiling:
        ceiling.rows.append(
            Row(
                names[ceiling_row.metric],
                "",
                [
                    Cell(str(ceiling_row.comparisons), float(ceiling_row.comparisons)),
                    _cell(ceiling_row.judge_agreement),
                    _interval(ceiling_row.judge_interval),
                    _cell(ceiling_row.metric_agreement),
                    _interval(ceiling_row.metric_interval),
                ],
            )
        )
    return ceiling


def calibration_table(meta: MetaEvaluation, names: dict[int, str]) -> Table:
    """The log-odds metrics' calibration: ECE and Brier score."""
    calibration = Table(
        "meta_calibration",
        "Calibration of log-odds metrics",
        "p = 1 / (1 + e^(-score)) against the binary label: expected calibration error (10 bins) and Brier score.",
        ["Metric"],
        ["Pairs", "ECE", "Brier"],
        note="" if meta.calibration else "No log-odds metric (ParaPLUIE) has scored labelled pairs.",
    )
    for cal in meta.calibration:
        calibration.rows.append(
            Row(
                names[cal.metric],
                "",
                [
                    Cell(str(cal.calibration.n), float(cal.calibration.n)),
                    _cell(cal.calibration.ece),
                    _cell(cal.calibration.brier),
                ],
            )
        )
    return calibration


def systems_table(meta: MetaEvaluation, names: dict[int, str]) -> Table:
    """System-level agreement: Pearson, Kendall and SPA."""
    systems = Table(
        "meta_systems",
        "Systems",
        _systems_caption(meta),
        ["Metric"],
        ["Pearson", "Kendall", "SPA", "SPA 95% CI, pairs only", "SPA 95% CI, pairs and volunteers"],
        note=meta.systems_note,
    )
    if meta.systems is not None:
        for metric_row in meta.systems.metrics:
            systems.rows.append(
                Row(
                    names[metric_row.metric],
                    "",
                    [
                        _cell(metric_row.pearson),
                        _cell(metric_row.kendall),
                        _cell(metric_row.spa),
                        _interval_cell(metric_row.spa_interval),
                        _interval_cell(metric_row.spa_interval_two_way),
                    ],
                )
            )
    return systems


def group_caption(meta: MetaEvaluation) -> str:
    """Which groups the per-group averages are over, how many were dropped and why."""
    view = meta.group_view
    if view is None or view.groups == 0:
        return "No source sentence has two or more hypotheses."

    def dropped(total: int, kept: int, drops: list[Any]) -> str:
        if kept == total:
            return "none dropped"
        reasons = "; ".join(f"{drop.groups}: {drop.reason}" for drop in drops)
        return f"{total - kept} dropped ({reasons})"

    def groups(count: int) -> str:
        return f"{count} group" if count == 1 else f"{count} groups"

    threshold = "" if view.r_threshold is None else " (a stated threshold on the graded scale)"
    return (
        f"{view.groups} sources with two or more hypotheses. Spearman: every metric averaged over the same "
        f"{groups(view.spearman_groups)}, {dropped(view.groups, view.spearman_groups, view.spearman_dropped)}. "
        f"R-Precision (relevant: {view.relevance}{threshold}): over the same {groups(view.r_groups)}, "
        f"{dropped(view.groups, view.r_groups, view.r_dropped)}. "
        f"'undefined = 0': the mean over all {view.groups} groups with an undefined value counted as 0."
    )


def groups_table(meta: MetaEvaluation, names: dict[int, str]) -> Table:
    """Per-group Spearman and R-Precision, the common-groups mean beside the undefined-as-zero one."""
    table = Table(
        "meta_groups",
        "Groups of hypotheses of one source",
        group_caption(meta),
        ["Metric"],
        [
            "Mean Spearman",
            "Spearman (undefined = 0)",
            "Own groups (Spearman)",
            "Mean R-Precision",
            "R-Precision (undefined = 0)",
            "Own groups (R-Prec.)",
        ],
    )
    if meta.group_view is None or meta.group_view.groups == 0:
        return table
    for row in meta.group_metrics:
        table.rows.append(
            Row(
                names[row.metric],
                "",
                [
                    _cell(row.spearman),
                    _cell(row.spearman_zero),
                    Cell(str(row.groups), float(row.groups)),
                    _cell(row.r_precision),
                    _cell(row.r_precision_zero),
                    Cell(str(row.r_groups), float(row.r_groups)),
                ],
            )
        )
    return table


def alt_test_caption(meta: MetaEvaluation) -> str:
    test = meta.alt_test
    if test is None:
        return ""
    return (
        "Alternative annotator test (Calderon et al., ACL 2025): leave one judge out; does the metric's decision "
        "align with the other judges of the pair at least as well as the left-out judge does, up to the "
        f"cost-benefit margin ε = {test.epsilon:g}? One-sided paired t-test per judge (judges with at least "
        f"{test.min_pairs} pairs shared with another judge: {test.eligible_judges}), Benjamini-Yekutieli at "
        f"alpha = {test.alpha:g} over the judges; winning rate ω = share of judges whose null is rejected; the metric "
        "may replace a volunteer when ω >= 0.5. Advantage rho: mean share of pairs where the metric aligns at least "
        "as well as the judge."
    )


def alt_test_tables(meta: MetaEvaluation, names: dict[int, str]) -> list[Table]:
    """The alt-test: one row per metric, and the per-judge tests."""
    test = meta.alt_test
    if test is None:
        return []
    summary = Table(
        "meta_alt_test",
        "Can this metric replace a volunteer?",
        alt_test_caption(meta),
        ["Metric"],
        ["Judges", "Winning rate ω", "Replaces a volunteer", "Advantage rho", "Note"],
        note=test.note,
        text_columns=[2, 4],
    )
    judges = Table(
        "meta_alt_test_judges",
        "Alternative annotator test — per judge",
        f"H0: rho(metric) <= rho(judge) - {test.epsilon:g}; p before correction; rejected after Benjamini-Yekutieli.",
        ["Metric", "Judge"],
        ["Pairs", "rho metric", "rho judge", "p", "Rejected"],
        text_columns=[4],
    )
    for row in test.rows:
        verdict = DASH if row.passed is None else ("yes" if row.passed else "no")
        summary.rows.append(
            Row(
                names[row.metric],
                "",
                [
                    Cell(str(row.judges), float(row.judges)),
                    _cell(row.winning_rate),
                    Cell(verdict),
                    _cell(row.advantage),
                    Cell(row.reason or ""),
                ],
            )
        )
        for position, judge in enumerate(row.tests):
            judges.rows.append(
                Row(
                    names[row.metric],
                    f"volunteer {judge.judge}",
                    [
                        Cell(str(judge.pairs), float(judge.pairs)),
                        _cell(judge.rho_metric),
                        _cell(judge.rho_judge),
                        _p(judge.p_value),
                        Cell("yes" if judge.rejected else "no"),
                    ],
                    first=position == 0,
                )
            )
    return [summary, judges] if judges.rows else [summary]


def distance_bin_table(view: DistanceBins, names: dict[int, str]) -> Table:
    """Pearson, Spearman and ROC AUC of each metric per equal-count bin of edit distance, with counts."""
    total = sum(b.pairs for b in view.bins)
    table = Table(
        "distance_bins",
        "Agreement within bins of edit distance",
        f"{view.requested} equal-count bins of normalised edit distance (character Levenshtein distance / longer "
        f"length) over the {total} pairs with a human reference, from the closest hypotheses (bin 1) to the "
        "farthest (paper 003, section 3.1). Correlations with the graded human scale, ROC AUC against the binary "
        "label. Column: the bin's distance range (its pairs); Pairs row: those with a score and a graded value / "
        "a binary label.",
        ["Metric", "Statistic"],
        [f"Bin {b.index}: {fmt(b.low, 2)}{EN_DASH}{fmt(b.high, 2)} ({b.pairs})" for b in view.bins],
        note=view.note or ("" if view.metrics else "No metric configuration has scores on these pairs."),
    )
    for metric in view.metrics:
        statistics = [
            ("Pearson r", [_cell(value.pearson) for value in metric.values]),
            ("Spearman", [_cell(value.spearman) for value in metric.values]),
            ("ROC AUC", [_cell(value.auc) for value in metric.values]),
            (
                "Pairs (graded / labelled)",
                [
                    Cell(f"{value.graded_pairs} / {value.labelled_pairs}", float(value.graded_pairs))
                    for value in metric.values
                ],
            ),
        ]
        for position, (statistic, cells) in enumerate(statistics):
            table.rows.append(Row(names[metric.metric], statistic, cells, first=position == 0))
    return table
