"""A ParaEval pair-level export re-imports with its texts exactly as they were."""

from __future__ import annotations

import csv
import io

import pytest

from annotate.exports.spreadsheet import neutralise
from annotate.importers import import_file
from tests.builders import make_campaign

pytestmark = pytest.mark.django_db

# Texts a spreadsheet, a CSV writer or a careless importer would change.
TRICKY_TEXTS = [
    'He said "hello", then left.',
    'An "unbalanced quote.',
    "Commas, commas, and more commas,",
    "Two\nlines",
    "Windows\r\nline end",
    "A lone\rcarriage return",
    "Tab\tinside",
    "\tleading tab",
    "=SUM(A1:A9)",
    "=1+1 looks like a formula",
    "-5 degrees tonight",
    "+33 1 23 45 67 89",
    "@mention at the start",
    "'quoted with an apostrophe",
    "'=already neutralised-looking text",
    "''+double apostrophe",
    "مرحبا بالعالم، كيف حالك؟",
    "你好\uff0c世界。今天天气很好。",  # with a full-width comma
    "Emoji 🙂👍🏽 and flags 🇫🇷",
    "  spaces around  ",
    "trailing newline\n",
    "U+2028 line\u2028separator",
]


def write_export(rows: list[dict[str, object]]) -> str:
    """A pair-level export as the export writer makes it: RFC 4180, every text cell neutralised."""
    columns = [
        "campaign",
        "pair_id",
        "external_id",
        "origin",
        "source",
        "hypothesis",
        "gold_label",
        "gold_score",
        "judgements",
        "majority_label",
        "mean_ordinal",
        "lev[token]",
    ]
    buffer = io.StringIO()
    writer = csv.writer(buffer)  # QUOTE_MINIMAL, "\r\n" line ends, like the export writer
    writer.writerow([neutralise(column) for column in columns])
    for row in rows:
        writer.writerow(
            [
                neutralise(value) if isinstance(value, str) else ("" if value is None else value)
                for value in row.values()
            ]
        )
    return buffer.getvalue()


def test_pair_level_export_round_trips_texts_exactly(tmp_path):
    rows = []
    for number, text in enumerate(TRICKY_TEXTS):
        rows.append(
            {
                "campaign": "old",
                "pair_id": number + 1,
                "external_id": f"-id{number}" if number % 3 == 0 else f"id{number}",
                "origin": "=llm" if number % 2 else "mrpc",
                "source": text,
                "hypothesis": TRICKY_TEXTS[-1 - number],
                "gold_label": [1, 0, None][number % 3],
                "gold_score": -0.5 if number == 0 else 3.25,
                "judgements": 2,
                "majority_label": "same_meaning",
                "mean_ordinal": 3.5,
                "lev[token]": -0.25,
            }
        )
    path = tmp_path / "export.csv"
    path.write_bytes(write_export(rows).encode("utf-8"))
    campaign = make_campaign()
    report = import_file(campaign, path)
    assert report.paraeval_export
    assert (report.format, report.created) == ("csv", len(rows))
    assert report.ignored_columns == [
        "campaign",
        "pair_id",
        "judgements",
        "majority_label",
        "mean_ordinal",
        "lev[token]",
    ]
    stored = list(
        campaign.pairs.order_by("id").values_list(
            "external_id", "origin", "source", "hypothesis", "gold_label", "gold_score"
        )
    )
    expected = [
        (
            row["external_id"],
            row["origin"],
            row["source"],
            row["hypothesis"],
            {1: True, 0: False, None: None}[row["gold_label"]],
            row["gold_score"],
        )
        for row in rows
    ]
    for got, want in zip(stored, expected, strict=True):
        assert got == want


def test_a_file_that_is_not_an_export_keeps_its_apostrophes(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("source,hypothesis\n'=not restored,'-kept\n", encoding="utf-8")
    campaign = make_campaign()
    report = import_file(campaign, path)
    assert not report.paraeval_export
    pair = campaign.pairs.get()
    assert (pair.source, pair.hypothesis) == ("'=not restored", "'-kept")


@pytest.mark.parametrize("export_format", ["csv", "jsonl"])
def test_real_pair_level_export_re_imports_exactly(tmp_path, export_format):
    """End to end: pairs stored, exported by the export service, imported into a new campaign."""
    service = pytest.importorskip("annotate.exports.service")
    from tests.builders import make_pair

    origin_campaign = make_campaign()
    for number, text in enumerate(TRICKY_TEXTS):
        make_pair(
            origin_campaign,
            external_id=f"=x{number}",
            origin="@web",
            source=text,
            hypothesis=TRICKY_TEXTS[-1 - number],
            gold_label=[True, False, None][number % 3],
            gold_score=[None, -1.5, 4.0][number % 3],
        )
    export = service.build_export(origin_campaign, "pairs", export_format)
    path = tmp_path / f"export.{export_format}"
    path.write_bytes("".join(export.chunks()).encode("utf-8"))

    campaign = make_campaign()
    report = import_file(campaign, path)
    assert report.created == len(TRICKY_TEXTS)
    assert report.paraeval_export is (export_format == "csv")
    fields = ("external_id", "origin", "source", "hypothesis", "gold_label", "gold_score")
    assert list(campaign.pairs.order_by("id").values_list(*fields)) == list(
        origin_campaign.pairs.order_by("id").values_list(*fields)
    )
