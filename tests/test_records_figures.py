"""Figures that agree: the system view names the real cause, both tables print one tied range."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.analysis.meta import MetaOptions, meta_evaluation
from scoring.analysis.report import ReportOptions, build_report
from scoring.analysis.systems import system_view
from scoring.reports import dataset
from scoring.reports.dataset import Filters
from scoring.reports.meta_tables import meta_tables
from scoring.reports.tables import all_tables, tied_range
from tests.builders import make_scored_campaign


def test_a_system_whose_scores_are_all_zero_is_kept() -> None:
    systems = ["A"] * 4 + ["B"] * 4 + ["C"] * 4
    human = np.array([4, 4, 3, 4, 2, 2, 3, 2, 1, 1, 2, 1], dtype=float)
    binary = (human >= 3).astype(np.int8)
    # A BLEU-like metric: constant 0 on every pair of system C (its mean is 0.0, a number).
    metric = np.array([[0.9, 0.8, 0.7, 0.9, 0.4, 0.5, 0.6, 0.4, 0.0, 0.0, 0.0, 0.0]])
    view = system_view(systems, None, binary, human, [1], metric, metric, resamples=50)
    assert view is not None
    (result,) = view.metrics
    assert (
        result.reason is None
        and result.spa is not None
        and result.pearson == pytest.approx(np.corrcoef([0.825, 0.475, 0.0], [3.75, 2.25, 1.25])[0, 1])
    )


def test_a_system_without_scores_is_named() -> None:
    systems = ["A"] * 2 + ["B"] * 2 + ["C"] * 2
    human = np.array([4, 3, 2, 2, 1, 1], dtype=float)
    binary = (human >= 3).astype(np.int8)
    metric = np.array([[0.9, 0.8, 0.4, 0.5, np.nan, np.nan]])
    (result,) = system_view(systems, None, binary, human, [1], metric, metric, resamples=20).metrics
    assert result.spa is None and result.reason == "system C has no score of this metric"


@pytest.mark.parametrize(
    ("first", "second", "text"),
    [(0.41, 0.31, "0.31 … 0.41"), (-2.61, -3.65, "-3.65 … -2.61"), (None, 0.8, "0.80 … none")],
)
def test_tied_range_is_numeric_lowest_first(first: float | None, second: float | None, text: str) -> None:
    assert tied_range(first, second) == text


@pytest.mark.django_db
def test_table2_and_threshold_honesty_print_the_same_tied_range() -> None:
    built = make_scored_campaign(pairs_per_origin=30)
    data = dataset.load(built.campaign, Filters())
    report = build_report(data, ReportOptions(reference="volunteers", resamples=0, seed=1))
    (table2,) = [table for table in all_tables(report) if table.key == "table2"]
    global_column = table2.columns.index("Global")
    table2_ranges = {row.label: row.cells[global_column].text for row in table2.rows if row.stat == "Tied thresholds"}
    (honesty,) = [
        table
        for table in meta_tables(meta_evaluation(data, MetaOptions(resamples=20)))
        if table.key == "meta_thresholds"
    ]
    count_column, range_column = honesty.columns.index("Tied thresholds"), honesty.columns.index("Tied range")
    compared = 0
    for row in honesty.rows:
        count, tied = row.cells[count_column].text, row.cells[range_column].text
        if count == "1":
            assert table2_ranges[row.label] == "unique"
        else:
            assert table2_ranges[row.label] == f"{count}: {tied}"
            compared += 1
    assert compared == 2  # BERTScore and LEV (lower is closer) have tied thresholds on this corpus
    assert table2_ranges["LEV ↓"] == "4: 0.31 … 0.41"
