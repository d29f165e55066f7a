"""What the exports contain: columns, labels, aggregates, scores, safety and quoting."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.exports.formatters import JUDGEMENT_COLUMNS, PAIR_COLUMNS
from annotate.exports.spreadsheet import restore
from annotate.labels import Label
from annotate.pseudonyms import volunteer_pseudonym
from tests.builders import (
    make_campaign,
    make_judgement,
    make_metric_config,
    make_pair,
    make_score,
    make_training_pairs,
    make_volunteer,
)
from tests.export_support import export_text, read_csv, read_jsonl

pytestmark = pytest.mark.django_db

TRICKY_TEXTS = [
    'He said "hello", then left.',
    "Line one\nline two\r\nline three",
    "Tab\tinside, and a comma",
    '=HYPERLINK("http://evil.example","click")',
    "-2+3+cmd|' /C calc'!A0",
    "+33 1 23 45 67 89",
    "@SUM(A1:A9)",
    "\tstarts with a tab",
    "\rstarts with a carriage return",
    "'quoted from the start'",
    "'=already prefixed",
    "Ünïcödé: 猫が水を飲む。Кошка пьёт воду. القطة تشرب الماء. 🐈",
]


@pytest.fixture
def campaign():
    return make_campaign(slug="exp", name="Export campaign")


def test_judgement_rows_columns_labels_and_pseudonyms(campaign):
    training = make_training_pairs(campaign, 2)
    pair = make_pair(campaign, external_id="p-1", origin="mrpc", source="A cat.", hypothesis="A feline.")
    other = make_pair(campaign, external_id="p-2", origin="paws")
    alice = make_volunteer(campaign, english_level="native")
    bob = make_volunteer(campaign, english_level="poor")
    shown = timezone.now() - timedelta(minutes=5)
    make_judgement(training[0], alice, Label.VERY_DIFFERENT)  # training: never exported
    make_judgement(
        pair,
        alice,
        Label.SAME_MEANING,
        source_on_top=False,
        position=12,
        shown_at=shown,
        answered_at=shown + timedelta(seconds=12.5),
    )
    make_judgement(pair, bob, Label.DONT_KNOW)
    make_judgement(other, bob, Label.SLIGHTLY_SIMILAR)
    make_judgement(make_pair(make_campaign()), make_volunteer(), Label.SAME_MEANING)  # another campaign

    text = export_text(campaign, "judgements", "csv")
    header, rows = read_csv(text)

    assert header == list(JUDGEMENT_COLUMNS)
    assert [(row["external_id"], row["label"]) for row in rows] == [
        ("p-1", "same_meaning"),
        ("p-1", "dont_know"),
        ("p-2", "slightly_similar"),
    ]
    first, dont_know, no = rows
    assert first["campaign"] == "exp"
    assert first["pair_id"] == str(pair.pk)
    assert first["origin"] == "mrpc"
    assert (first["source"], first["hypothesis"]) == ("A cat.", "A feline.")
    assert first["top_sentence"] == "hypothesis"
    assert first["position"] == "12"
    assert dont_know["position"] == ""  # stored before positions existed: left empty
    assert first["binary_label"] == "1"
    assert dont_know["binary_label"] == ""
    assert no["binary_label"] == "0"
    assert first["english_level"] == "native"
    assert dont_know["english_level"] == "poor"
    assert first["shown_at"] == shown.isoformat()
    assert first["answered_at"] == (shown + timedelta(seconds=12.5)).isoformat()
    assert first["response_seconds"] == "12.5"
    # Volunteers appear as stable pseudonyms; the token (a credential) appears nowhere.
    assert first["volunteer"] == volunteer_pseudonym(alice.token)
    assert dont_know["volunteer"] == no["volunteer"] == volunteer_pseudonym(bob.token)
    assert first["volunteer"] != dont_know["volunteer"]
    assert len(first["volunteer"]) == 16
    for volunteer in (alice, bob):
        assert volunteer.token not in text
    assert export_text(campaign, "judgements", "csv") == text


def test_pair_rows_aggregate_judgements_and_scores(campaign):
    make_training_pairs(campaign, 1)
    agreed = make_pair(campaign, external_id="agreed", gold_label=True, gold_score=4.2)
    tied = make_pair(campaign, external_id="tied", gold_label=False)
    make_pair(campaign, external_id="unjudged")
    judges = [make_volunteer(campaign) for _ in range(4)]
    for volunteer, label in zip(
        judges, [Label.SAME_MEANING, Label.SAME_MEANING, Label.MOSTLY_SIMILAR, Label.DONT_KNOW], strict=True
    ):
        make_judgement(agreed, volunteer, label)
    make_judgement(tied, judges[0], Label.VERY_DIFFERENT)
    make_judgement(tied, judges[1], Label.SAME_MEANING)
    parapluie = make_metric_config("parapluie_fs_direct", label="parapluie_fs_direct[SmolLM2-135M-Instruct]")
    lev = make_metric_config("lev", label="lev")
    unused = make_metric_config("wer", label="wer")  # scored nothing in this campaign: no column
    make_score(agreed, parapluie, -3.25)
    make_score(agreed, lev, 0.125)
    make_score(tied, parapluie, None, error="CUDA out of memory")
    make_score(make_pair(make_campaign()), unused, 0.5)

    header, rows = read_csv(export_text(campaign, "pairs", "csv"))

    assert header == [*PAIR_COLUMNS, "lev", "parapluie_fs_direct[SmolLM2-135M-Instruct]", "failed_scores"]
    by_id = {row["external_id"]: row for row in rows}
    assert list(by_id) == ["agreed", "tied", "unjudged"]  # no training pair
    row = by_id["agreed"]
    assert row["pair_id"] == str(agreed.pk)
    assert (row["gold_label"], row["gold_score"]) == ("1", "4.2")
    assert row["judgements"] == "4"
    assert (row["n_same_meaning"], row["n_mostly_similar"], row["n_dont_know"], row["n_very_different"]) == (
        "2",
        "1",
        "1",
        "0",
    )
    assert row["majority_label"] == "same_meaning"
    assert (row["label_tie"], row["binary_label"], row["binary_tie"]) == ("0", "1", "0")
    assert float(row["mean_ordinal"]) == pytest.approx((4 + 4 + 3) / 3)
    assert row["parapluie_fs_direct[SmolLM2-135M-Instruct]"] == "-3.25"  # a number, not neutralised
    assert row["lev"] == "0.125"
    assert row["failed_scores"] == ""

    row = by_id["tied"]
    assert row["gold_label"] == "0" and row["gold_score"] == ""
    assert (row["majority_label"], row["label_tie"], row["binary_label"], row["binary_tie"]) == ("", "1", "", "1")
    assert float(row["mean_ordinal"]) == 2.5
    assert row["parapluie_fs_direct[SmolLM2-135M-Instruct]"] == ""
    assert row["failed_scores"] == "parapluie_fs_direct[SmolLM2-135M-Instruct]"
    assert row["lev"] == ""  # not computed yet: empty, and not listed as failed

    row = by_id["unjudged"]
    assert (row["judgements"], row["majority_label"], row["binary_label"], row["mean_ordinal"]) == ("0", "", "", "")


def test_pair_rows_as_jsonl_are_typed(campaign):
    pair = make_pair(campaign, external_id="x", gold_label=None, gold_score=2.0)
    make_judgement(pair, make_volunteer(campaign), Label.DONT_KNOW)
    config = make_metric_config("sbert", label="sbert[all-MiniLM-L6-v2]")
    make_score(pair, config, 0.75)

    (row,) = read_jsonl(export_text(campaign, "pairs", "jsonl"))

    assert list(row) == [*PAIR_COLUMNS, "sbert[all-MiniLM-L6-v2]", "failed_scores"]
    assert row["pair_id"] == pair.pk
    assert row["gold_label"] is None and row["gold_score"] == 2.0
    assert row["judgements"] == 1 and row["n_dont_know"] == 1
    assert row["majority_label"] is None and row["binary_label"] is None and row["mean_ordinal"] is None
    assert row["label_tie"] is False
    assert row["sbert[all-MiniLM-L6-v2]"] == 0.75
    assert row["failed_scores"] == []


def test_judgement_rows_as_jsonl_keep_binary_null_for_dont_know(campaign):
    pair = make_pair(campaign)
    make_judgement(pair, label=Label.DONT_KNOW)
    make_judgement(pair, label=Label.MOSTLY_SIMILAR)
    rows = read_jsonl(export_text(campaign, "judgements", "jsonl"))
    assert [(row["label"], row["binary_label"]) for row in rows] == [("dont_know", None), ("mostly_similar", True)]
    assert list(rows[0]) == list(JUDGEMENT_COLUMNS)


def test_metric_labels_that_collide_get_the_hash(campaign):
    pair = make_pair(campaign)
    first = make_metric_config("bertscore", label="bertscore")
    second = make_metric_config("bertscore", label="bertscore")
    origin_named = make_metric_config("custom", label="origin")  # would shadow a fixed column
    for config in (first, second, origin_named):
        make_score(pair, config, 0.5)
    header, _ = read_csv(export_text(campaign, "pairs", "csv"))
    metric_headers = header[len(PAIR_COLUMNS) : -1]
    assert metric_headers[0] == f"bertscore#{first.config_hash[:8]}"
    # The builders' hashes share their first 8 characters: the whole hash disambiguates.
    assert metric_headers[1] in {f"bertscore#{second.config_hash[:8]}", f"bertscore#{second.config_hash}"}
    assert metric_headers[2] == f"origin#{origin_named.config_hash[:8]}"
    assert len(set(header)) == len(header)


@pytest.mark.parametrize("level", ["pairs", "judgements"])
def test_text_cells_are_neutralised_quoted_and_restorable(campaign, level):
    pairs = [make_pair(campaign, source=text, hypothesis=text[::-1], origin="=cmd") for text in TRICKY_TEXTS]
    for pair in pairs:
        make_judgement(pair)

    text = export_text(campaign, level, "csv")
    header, rows = read_csv(text)

    assert len(rows) == len(TRICKY_TEXTS)
    for row, original in zip(rows, TRICKY_TEXTS, strict=True):
        for column in ("source", "hypothesis", "origin"):
            cell = row[column]
            # Nothing a spreadsheet would run...
            assert cell[:1] not in {"=", "+", "-", "@", "\t", "\r"}, (column, cell)
        # ...and everything comes back exactly.
        assert restore(row["source"]) == original
        assert restore(row["hypothesis"]) == original[::-1]
        assert restore(row["origin"]) == "=cmd"
    # RFC 4180: CRLF record ends, fields with quotes/commas/newlines quoted, quotes doubled.
    assert text.startswith(",".join(header) + "\r\n")
    assert '"He said ""hello"", then left."' in text
    assert '"Line one\nline two\r\nline three"' in text


def test_jsonl_keeps_texts_exactly(campaign):
    for text in TRICKY_TEXTS:
        make_pair(campaign, source=text, hypothesis=text)
    rows = read_jsonl(export_text(campaign, "pairs", "jsonl"))
    assert [row["source"] for row in rows] == TRICKY_TEXTS
    assert "猫が水を飲む" in export_text(campaign, "pairs", "jsonl")  # UTF-8, not \\u escapes


def test_empty_campaign_exports_a_header_only(campaign):
    for level in ("pairs", "judgements"):
        text = export_text(campaign, level, "csv")
        assert list(csv.reader(io.StringIO(text, newline=""))) == [
            list(JUDGEMENT_COLUMNS if level == "judgements" else (*PAIR_COLUMNS, "failed_scores"))
        ]
        assert export_text(campaign, level, "jsonl") == ""


def _queries(campaign, level):
    with CaptureQueriesContext(connection) as captured:
        assert export_text(campaign, level, "csv", chunk_size=3)
    return len(captured)


@pytest.mark.parametrize("level", ["pairs", "judgements"])
def test_queries_do_not_grow_with_judges_or_metrics(campaign, level):
    """A fixed number of queries per chunk of pairs: no query per row, judge or metric."""
    small = make_campaign()
    busy = campaign
    configs = [make_metric_config("lev", label=f"lev{i}") for i in range(4)]
    for target, judges, metrics in ((small, 1, configs[:1]), (busy, 5, configs)):
        volunteers = [make_volunteer(target) for _ in range(judges)]
        for _ in range(3):  # exactly one chunk of 3 pairs
            pair = make_pair(target)
            for volunteer in volunteers:
                make_judgement(pair, volunteer, Label.MOSTLY_SIMILAR)
            for config in metrics:
                make_score(pair, config, 0.5)
    if level == "pairs":
        assert _queries(busy, level) == _queries(small, level)
    else:  # 15 judgements in chunks of 3 against 3: each later chunk may meet new judges (2 statements)
        assert _queries(small, level) < _queries(busy, level) <= _queries(small, level) + 2 * 4
    # Three more pairs make one more chunk: the metric-column query is not repeated.
    for _ in range(3):
        make_judgement(make_pair(busy), make_volunteer(busy))
    # Per chunk: the pairs, their judgements and their scores (pairs only), and the exclusion
    # verdicts of the judges it meets first (their record and their own judgements).
    if level == "pairs":
        assert _queries(busy, level) == _queries(small, level) + 3 + 2
    else:  # one cursor, and at most two statements per chunk of 3 of the 18 judgements
        assert _queries(busy, level) <= 1 + 2 * 6


def test_exclusions_found_chunk_by_chunk_equal_the_full_quality_pass() -> None:
    """Each chunk's judges' verdicts, from their own judgements, give the rows the campaign-wide
    quality pass gives: every reason of the rule and both staff overrides, across chunks."""
    from annotate.quality import campaign_quality

    campaign = make_campaign(exclude_failed_checks=1, exclude_median_seconds=2.0, exclude_same_answer_share=0.9)
    pairs = [make_pair(campaign) for _ in range(12)]
    check = make_pair(campaign, is_check=True, expected_label=Label.VERY_DIFFERENT.value)
    labels = list(Label)
    now = timezone.now()
    kinds = ["careful", "failed check", "too fast", "same answer", "kept by staff", "excluded by staff", "careful"]
    for number, kind in enumerate(kinds):
        override = {"kept by staff": "include", "excluded by staff": "exclude"}.get(kind, "")
        volunteer = make_volunteer(campaign, exclusion_override=override)
        if kind in ("failed check", "kept by staff"):
            make_judgement(check, volunteer, Label.SAME_MEANING, is_check=True)
        # Judges spread over the pairs so that chunks of three meet them at different times.
        for index in range(number, number + 10):
            pair = pairs[index % len(pairs)]
            label = labels[0] if kind == "same answer" else labels[(index + number) % 4]
            seconds = 1 if kind == "too fast" else 7
            make_judgement(pair, volunteer, label, shown_at=now - timedelta(seconds=seconds), answered_at=now)
    full = campaign_quality(campaign)
    reasons = {verdict.exclusion_reason for verdict in full}
    assert sum(verdict.excluded for verdict in full) == 4 and len(reasons) >= 4  # each kind is exercised
    for level in ("pairs", "judgements"):
        for format in ("csv", "jsonl"):
            assert export_text(campaign, level, format, chunk_size=3) == export_text(
                campaign, level, format, chunk_size=3, verdicts=full
            ), (level, format)
    _, rows = read_csv(export_text(campaign, "judgements", "csv", chunk_size=3))
    excluded = {row["volunteer"] for row in rows if row["excluded"] == "1"}
    assert excluded == {volunteer_pseudonym(v.token) for v in full if v.excluded}
