"""The meta-evaluation as :class:`~scoring.analysis.tables.Table` objects (``evaluate_metrics`` output)."""

from __future__ import annotations

from scoring.analysis.meta import MetaEvaluation
from scoring.analysis.paired import Interval
from scoring.analysis.tables import DASH, EN_DASH, Cell, Row, Table, fmt, tied_range


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


def meta_tables(meta: MetaEvaluation) -> list[Table]:
    """Ranked tables with clusters, the p-value matrices, the paired tests and the other views."""
    names = {metric.id: f"{metric.label} {metric.arrow}" for metric in meta.metrics}
    correction = meta.options.correction.value
    tables: list[Table] = []
    for ranking in meta.rankings:
        key = f"meta_rank_{ranking.statistic.value}"
        table = Table(
            key,
            f"Ranking — {ranking.label}",
            f"Cluster = 1 + metrics significantly better (p < {meta.options.alpha}, {correction} correction; "
            f"{meta.options.resamples} resamples, seed {meta.options.seed}).",
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
            f"p-value of every two metrics ({correction} correction).",
            ["Metric"],
            [names[metric.id] for metric in meta.metrics],
        )
        for metric, row_values in zip(meta.metrics, ranking.matrix, strict=True):
            matrix.rows.append(Row(names[metric.id], "", [_p(value) for value in row_values]))
        tables.append(matrix)
    paired = Table(
        "meta_paired",
        "Paired comparisons",
        "A - B on the pairs both scored; permutation (PERM-BOTH), bootstrap or jackknife (Kendall) and Williams "
        f"p-values; {correction}-adjusted p per statistic; 95% interval of the difference.",
        ["Metrics", "Statistic"],
        ["Pairs", "A", "B", "A - B", "95% CI", "p perm.", "p boot.", "p jack.", "p Williams", "p adjusted", "Note"],
        text_columns=[10],
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
                    _p(test.p_permutation),
                    _p(test.p_bootstrap),
                    _p(test.p_jackknife),
                    _p(test.p_williams),
                    _p(test.p_holm),
                    Cell(test.reason or ""),
                ],
            )
        )
    tables.append(paired)
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
    tables.append(thresholds)
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
    tables.append(ties)
    ceiling = Table(
        "meta_ceiling",
        "Human ceiling",
        "Each judge against the majority of the other judges of the pair, and each metric against the same majority.",
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
    tables.append(ceiling)
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
    tables.append(calibration)
    systems = Table(
        "meta_systems",
        "Systems",
        "System-level correlations and Soft Pairwise Accuracy.",
        ["Metric"],
        ["Pearson", "Kendall", "SPA", "SPA 95% CI"],
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
                    ],
                )
            )
    tables.append(systems)
    return tables
