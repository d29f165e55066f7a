"""A 100,000-row export streams in bounded memory and loses or adds no row."""

from __future__ import annotations

import csv
import time
import tracemalloc
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotate.exports.service import build_export
from annotate.labels import LABEL_ORDER
from annotate.models import Campaign, Judgement, Pair, Volunteer
from scoring.models import MetricConfig, Score
from tests.builders import make_training_pairs

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

ROWS = 100_000
VOLUNTEERS = 100  # each judges 1,000 pairs: one judgement per pair
BATCH = 5000
# Far below the size of either export (tens of MB), far above one chunk of rows.
MEMORY_BOUND = 6 * 1024 * 1024


def _text(number: int, kind: str) -> str:
    # Commas, quotes and a newline in every tenth text: quoting must hold at scale too.
    tricky = ', "quoted"\nand more' if number % 10 == 0 else ""
    return f"{kind} sentence number {number} about a black cat that drinks some fresh water in the kitchen{tricky}"


@pytest.fixture
def big_campaign() -> Campaign:
    started = time.perf_counter()
    campaign = Campaign.objects.create(slug="big", name="Big")
    make_training_pairs(campaign, 5)
    Pair.objects.bulk_create(
        (
            Pair(
                campaign=campaign,
                external_id=f"big-{n}",
                origin="generated",
                source=_text(n, "Source"),
                hypothesis=_text(n, "Hypothesis"),
                gold_label=n % 2 == 0,
            )
            for n in range(ROWS)
        ),
        batch_size=BATCH,
    )
    volunteers = Volunteer.objects.bulk_create(
        Volunteer(campaign=campaign, english_level="good", token=f"big-volunteer-token-{n:04d}")
        for n in range(VOLUNTEERS)
    )
    pair_ids = list(
        Pair.objects.filter(campaign=campaign, is_training=False).order_by("id").values_list("id", flat=True)
    )
    training_ids = list(Pair.objects.filter(campaign=campaign, is_training=True).values_list("id", flat=True))
    now = timezone.now()
    shown = now - timedelta(seconds=9)
    Judgement.objects.bulk_create(
        (
            Judgement(
                volunteer=volunteers[index % VOLUNTEERS],
                pair_id=pair_id,
                label=LABEL_ORDER[index % len(LABEL_ORDER)].value,
                source_on_top=index % 2 == 0,
                shown_at=shown,
                answered_at=now,
            )
            for index, pair_id in enumerate(pair_ids)
        ),
        batch_size=BATCH,
    )
    # Training answers exist too, and must stay out of both exports.
    Judgement.objects.bulk_create(
        Judgement(
            volunteer=volunteers[0],
            pair_id=pair_id,
            label="dont_know",
            source_on_top=True,
            is_training=True,
            shown_at=shown,
        )
        for pair_id in training_ids
    )
    config = MetricConfig.objects.create(metric="lev", config_hash="big-lev", label="lev", higher_is_closer=False)
    Score.objects.bulk_create(
        (
            Score(pair_id=pair_id, metric_config=config, value=(index % 97) / 97)
            if index % 1000
            else Score(pair_id=pair_id, metric_config=config, status=Score.Status.FAILED, error="boom")
            for index, pair_id in enumerate(pair_ids)
        ),
        batch_size=BATCH,
    )
    if connection.vendor == "postgresql":
        # Production tables have planner statistics (autovacuum); fresh test tables do not,
        # and without them PostgreSQL scans the whole table for each chunk.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE annotate_pair, annotate_judgement, annotate_volunteer, scoring_score")
    print(f"\n[large export] generated {ROWS:,} pairs, judgements and scores in {time.perf_counter() - started:.1f} s")
    return campaign


def _lines(chunks: Iterator[str], seen: dict[str, int]) -> Iterator[str]:
    """Hand the chunks to a reader line by line, keeping only their total size."""
    for chunk in chunks:
        seen["characters"] += len(chunk)
        seen["chunks"] += 1
        yield from chunk.splitlines(keepends=True)


def _stream(campaign: Campaign, level: str) -> dict[str, int]:
    """Consume a CSV export the way a client does (row by row, nothing kept), measuring the peak
    of the memory Python allocates meanwhile (tracemalloc: the export and the reader together)."""
    seen = {"characters": 0, "chunks": 0, "rows": 0, "failed": 0}
    started = time.perf_counter()
    tracemalloc.start()
    try:
        reader = csv.reader(_lines(build_export(campaign, level, "csv").chunks(), seen))
        header = next(reader)
        failed_column = header.index("failed_scores") if "failed_scores" in header else None
        for row in reader:
            assert len(row) == len(header)
            seen["rows"] += 1
            seen["failed"] += failed_column is not None and row[failed_column] == "lev"
        _, seen["peak"] = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(
        f"[large export] {level}: {seen['rows']:,} rows, {seen['characters'] / 1e6:.1f} M characters "
        f"in {seen['chunks']:,} chunks, peak traced memory {seen['peak'] / 1e6:.1f} MB, "
        f"{time.perf_counter() - started:.1f} s"
    )
    return seen


def test_100k_row_exports_are_exact_and_memory_stays_bounded(big_campaign):
    for level in ("pairs", "judgements"):
        seen = _stream(big_campaign, level)
        assert seen["rows"] == ROWS  # no training row, none lost, none doubled
        assert seen["characters"] > 4 * MEMORY_BOUND
        assert seen["peak"] < MEMORY_BOUND
        if level == "pairs":
            assert seen["failed"] == ROWS // 1000
