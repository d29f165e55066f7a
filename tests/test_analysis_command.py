"""manage.py evaluate_metrics: the dashboard's tables as Markdown, CSV and LaTeX."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.management import CommandError, call_command

from annotate.pseudonyms import volunteer_pseudonym
from tests.builders import make_scored_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def built():
    return make_scored_campaign(slug="eval-demo", name="Eval demo")


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("evaluate_metrics", *args, stdout=out)
    return out.getvalue()


def test_markdown(built):
    text = run("--campaign", "eval-demo", "--resamples", "50")
    assert text.startswith("# Eval demo (eval-demo): metrics against volunteers' majority labels")
    assert "24 pairs" in text and "72 judgements from 5 volunteers (25 training answers not counted)" in text
    assert "1 failed" in text and "Bootstrap: 50 resamples" in text
    for title in (
        "Table 1 — Mean",
        "Table 2 — Best-threshold",
        "Table 3 — Pearson",
        "Table 4 — Equal error",
        "Table 5 —",
    ):
        assert f"### {title}" in text
    assert "| Metric | Statistic | llm | mrpc | paws | Global |" in text
    assert "| LEV ↓ |" in text and "| ParaPLUIE FS-DIRECT ↑ |" in text
    assert "**" in text  # best values in bold
    # The volunteer table names volunteers by the pseudonym of the exports and the API.
    assert "Inter-annotator agreement" in text
    assert all(f"| {volunteer_pseudonym(volunteer.token)} |" in text for volunteer in built.volunteers)


def test_csv_is_one_row_per_cell(built):
    text = run("--campaign", "eval-demo", "--format", "csv", "--resamples", "0")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0].keys() == {"table", "row", "statistic", "column", "text", "value", "best"}
    tables = {row["table"] for row in rows}
    assert {"table1", "table2", "table3", "table4", "table5", "agreement", "volunteers"} <= tables
    natural = [r for r in rows if r["table"] == "table5" and r["statistic"] == "Accuracy" and r["column"] == "Global"]
    assert len(natural) == 1 and natural[0]["row"] == "ParaPLUIE FS-DIRECT ↑"
    assert 0.0 <= float(natural[0]["value"]) <= 1.0


def test_latex(built):
    text = run("--campaign", "eval-demo", "--format", "latex", "--resamples", "0")
    assert text.startswith("% # Eval demo")
    assert "\\begin{tabular}" in text and "\\toprule" in text and "\\label{tab:table2}" in text
    assert "LEV $\\downarrow$" in text


def test_gold_and_origin(built):
    text = run("--campaign", str(built.campaign.pk), "--gold", "imported", "--origin", "paws", "--resamples", "0")
    assert "metrics against imported gold labels" in text
    assert "8 pairs (5 paraphrases, 3 non-paraphrases" in text
    assert "Filters: origin=paws." in text
    assert "| Metric | Statistic | paws |" in text  # one corpus: named, not "Global"


def test_errors_name_the_problem(built):
    with pytest.raises(CommandError, match=r"no campaign 'nope'.*eval-demo"):
        run("--campaign", "nope")
    with pytest.raises(CommandError, match="no pairs with origin 'wikipedia'"):
        run("--campaign", "eval-demo", "--origin", "wikipedia")
    with pytest.raises(CommandError, match="date_from"):
        run("--campaign", "eval-demo", "--from", "2025-03-01", "--to", "2025-01-01")
    with pytest.raises(CommandError, match="not a date"):
        run("--campaign", "eval-demo", "--from", "yesterday")
