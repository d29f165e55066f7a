"""The paper's tables built from a report, best values, and the three text formats."""

from __future__ import annotations

import csv
import io

import pytest

from scoring.analysis.report import ReportOptions, build_report
from scoring.reports.formats import latex_escape, render
from scoring.reports.tables import Cell, Row, all_tables, fmt, mark_best
from tests.test_analysis_report import make_input


@pytest.fixture(scope="module")
def tables():
    return all_tables(build_report(make_input(), ReportOptions(resamples=30, seed=2)))


def _rows(values: list[float | None], stat: str = "x") -> list[Row]:
    return [Row(f"m{i}", stat, [Cell(fmt(v), None if v is None else round(v, 3))]) for i, v in enumerate(values)]


def test_best_is_marked_per_column_and_ties_share_it():
    rows = _rows([0.71, 0.74, None, 0.74])
    mark_best(rows, "x", "max")
    assert [row.cells[0].best for row in rows] == [False, True, False, True]
    rows = _rows([0.3, 0.25, 0.4])
    mark_best(rows, "x", "min")
    assert [row.cells[0].best for row in rows] == [False, True, False]
    rows = _rows([-0.6, 0.1, -0.05])  # Table 3: the weakest correlation
    mark_best(rows, "x", "min_abs")
    assert [row.cells[0].best for row in rows] == [False, False, True]


def test_a_single_value_is_not_emphasised():
    rows = _rows([0.9, None])
    mark_best(rows, "x", "max")
    assert not any(row.cells[0].best for row in rows)


def test_only_rows_of_the_statistic_compete():
    rows = _rows([0.9, 0.95], stat="Threshold") + _rows([0.5, 0.6], stat="F1")
    mark_best(rows, "F1", "max")
    assert [row.cells[0].best for row in rows] == [False, False, False, True]


def test_table_layouts(tables):
    keys = [table.key for table in tables]
    assert keys == [
        "table1",
        "table2",
        "table3",
        "table4",
        "table5",
        "ranking",
        "topk",
        "agreement",
        "volunteers",
        "robustness",
        "temperature",
    ]
    table1 = tables[0]
    assert [label for label, _ in table1.groups] == ["a", "b", "Global"]
    assert table1.columns == ["yes", "no", "n"] * 3
    assert table1.rows[0].label == "SIM ↑" and table1.rows[1].label == "LEV ↓"
    # SIM, Global, yes: mean .85, std sqrt(.005) = .07
    assert table1.rows[0].cells[6].text == "0.85 ± 0.07"
    # Pairs per row: PP failed on one labelled pair, so its row says 3 of the 4.
    assert [table1.rows[0].cells[8].text, table1.rows[2].cells[8].text] == ["4", "3"]
    assert table1.rows[2].cells[8].note == "of 4 labelled pairs" and table1.rows[0].cells[8].note == ""
    tied = next(row for row in tables[1].rows if row.label == "SIM ↑" and row.stat == "Tied thresholds")
    assert tied.cells[-1].text == "unique"
    assert "the highest is used" in tables[1].caption
    table2 = tables[1]
    threshold = next(row for row in table2.rows if row.label == "LEV ↓" and row.stat == "Threshold")
    assert threshold.cells[-1].text == "≤ 0.20"
    accuracy = [row for row in table2.rows if row.stat == "Max. acc."]
    assert all(row.cells[-1].best for row in accuracy[:2])  # SIM and LEV both reach 1.000
    # Table 5 lists only the metric with a natural threshold.
    assert [row.label for row in tables[4].rows] == ["PP ↑", "PP ↑"]


def test_undefined_cells_say_why(tables):
    table2 = tables[1]
    # PP in subset b: pair 3 failed, so only pair 4 (a non-paraphrase) is left.
    pp_b_ci = next(row for row in table2.rows if row.label == "PP ↑" and row.stat == "Acc. 95% CI, pairs only").cells[1]
    assert pp_b_ci.text == "—" and pp_b_ci.note
    auc = next(row for row in tables[5].rows if row.label == "PP ↑" and row.stat == "ROC AUC").cells[1]
    assert auc.text == "—" and "only non-paraphrases" in auc.note


def test_markdown(tables):
    text = render(tables, "markdown", "# Preamble")
    assert text.startswith("# Preamble\n")
    assert "### Table 2 — Best-threshold classification" in text
    assert "| Metric | Statistic | a | b | Global |" in text
    assert "| Metric | a yes | a no | b yes | b no | Global yes | Global no |" in text
    assert "| SIM ↑ | Max. acc. | **1.000** |" in text
    # Subset a: .9 Y, .2 N -> the highest perfect threshold is .9; b and Global: .8.
    assert "|  | Threshold | ≥ 0.90 | ≥ 0.80 | ≥ 0.80 |" in text


def test_csv(tables):
    rows = list(csv.DictReader(io.StringIO(render(tables, "csv"))))
    assert set(rows[0]) == {"table", "row", "statistic", "column", "text", "value", "best"}
    cell = [r for r in rows if r["table"] == "table2" and r["row"] == "SIM ↑" and r["statistic"] == "Max. acc."]
    assert [(r["column"], r["text"], r["best"]) for r in cell][-1] == ("Global", "1.000", "1")
    assert float(cell[-1]["value"]) == 1.0
    assert any(r["table"] == "table1" and r["column"] == "Global yes" for r in rows)


def test_latex(tables):
    text = render(tables, "latex")
    # Nine tables and the calibration of the log-odds metric; no probe set, so no robustness rows.
    assert text.count("\\begin{table}") == 10 and text.count("\\end{tabular}") == 10
    assert "\\multicolumn{2}{c}{Global}" in text
    assert "\\textbf{1.000}" in text
    assert "SIM $\\uparrow$" in text and "$\\leq$ 0.20" in text
    assert "0.85 $\\pm$ 0.07" in text
    assert latex_escape("50% of a_b & c#") == "50\\% of a\\_b \\& c\\#"


def test_unknown_format(tables):
    with pytest.raises(ValueError, match="unknown format"):
        render(tables, "html")
