"""How fast and how lean the streamed exports are, against a naive export in the same run.

Builds a campaign in a throw-away database (``bench_<name>`` on PostgreSQL, in memory on
SQLite): ``--pairs`` pairs with ``--judges`` judgements each and ``--metrics`` metric
configurations scoring every pair. Then measures:

- the streamed exports (``annotate.exports.build_export``): pair level CSV and JSONL,
  judgement level CSV: rows per second, and the peak of Python memory (tracemalloc) in a
  separate run;
- the reference: a straightforward pair-level export that reads each pair's judgements and
  scores with one query each (N+1) and formats the same rows, timed on the first
  ``--reference-pairs`` pairs;
- the memory of materialising the pair-level rows in a list before writing them.

Ratios, not timed assertions.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/paraeval .venv/bin/python benchmarks/export_speed.py
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from annotate.aggregation import verdict  # noqa: E402
from annotate.exports.formatters import metric_columns, pair_columns, pair_rows  # noqa: E402
from annotate.exports.service import build_export  # noqa: E402
from annotate.exports.writers import write_csv  # noqa: E402
from annotate.labels import LABEL_ORDER  # noqa: E402
from annotate.models import Campaign, Judgement, Pair, Volunteer  # noqa: E402
from scoring.models import MetricConfig, Score  # noqa: E402

BATCH = 5000


def build(pairs: int, judges: int, metrics: int) -> Campaign:
    campaign = Campaign.objects.create(slug="bench", name="bench", judges_per_pair=judges)
    Pair.objects.bulk_create(
        (
            Pair(
                campaign=campaign,
                external_id=f"b{n}",
                origin=("mrpc", "paws", "llm")[n % 3],
                source=f'Source sentence {n}, about a cat that drinks "fresh" water in the kitchen.',
                hypothesis=f"=Hypothesis {n}: the cat drinks water in the kitchen.",
                gold_label=n % 2 == 0,
            )
            for n in range(pairs)
        ),
        batch_size=BATCH,
    )
    pair_ids = list(Pair.objects.filter(campaign=campaign).order_by("id").values_list("id", flat=True))
    volunteers = Volunteer.objects.bulk_create(
        Volunteer(campaign=campaign, english_level="good", token=f"bench-token-{n:05d}") for n in range(200)
    )
    now = timezone.now()

    def judgements() -> Iterable[Judgement]:
        for index, pair_id in enumerate(pair_ids):
            for judge in range(judges):
                yield Judgement(
                    volunteer=volunteers[(index + judge * 7) % len(volunteers)],
                    pair_id=pair_id,
                    label=LABEL_ORDER[(index * 3 + judge) % len(LABEL_ORDER)].value,
                    source_on_top=judge % 2 == 0,
                    shown_at=now - timedelta(seconds=5 + judge),
                    answered_at=now,
                )

    Judgement.objects.bulk_create(judgements(), batch_size=BATCH)
    configs = [
        MetricConfig.objects.create(metric=f"m{n}", config_hash=f"bench-{n}", label=f"metric_{n}[bench]")
        for n in range(metrics)
    ]
    Score.objects.bulk_create(
        (
            Score(pair_id=pair_id, metric_config=config, value=-(pair_id % 89) / 7)
            for config in configs
            for pair_id in pair_ids
        ),
        batch_size=BATCH,
    )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # planner statistics, as autovacuum would gather them
            cursor.execute("ANALYZE annotate_pair, annotate_judgement, annotate_volunteer, scoring_score")
    return campaign


def naive_pair_export(campaign: Campaign, limit: int) -> int:
    """The reference: each pair's judgements and scores read with their own queries."""
    metrics = metric_columns(campaign)
    names = {m.config_id: m.name for m in metrics}
    columns = pair_columns(metrics)

    def rows() -> Iterable[dict]:
        for pair in Pair.objects.filter(campaign=campaign, is_training=False).order_by("id")[:limit]:
            labels = list(pair.judgements.filter(is_training=False).values_list("label", flat=True))
            summary = verdict(labels)
            # Every column of the streamed export starts empty: a column the export gains
            # is never missing from the reference's rows.
            row = dict.fromkeys(columns)
            row |= {
                "campaign": campaign.slug,
                "pair_id": pair.pk,
                "external_id": pair.external_id,
                "origin": pair.origin,
                "system": pair.system,
                "source": pair.source,
                "hypothesis": pair.hypothesis,
                "gold_label": pair.gold_label,
                "gold_score": pair.gold_score,
                "judgements": summary.judgements,
                "excluded_judgements": 0,  # nobody is excluded in the benchmark's campaign
                **{f"n_{label.value}": summary.counts[label] for label in LABEL_ORDER},
                "majority_label": summary.majority_label.value if summary.majority_label else None,
                "label_tie": summary.label_tie,
                "binary_label": summary.is_paraphrase,
                "binary_tie": summary.binary_tie,
                "mean_ordinal": summary.mean_ordinal,
                **dict.fromkeys(names.values()),
                "failed_scores": [],
            }
            for score in pair.scores.all():
                row[names[score.metric_config_id]] = score.value
            yield row

    return sum(len(chunk) for chunk in write_csv(columns, rows()))


def timed(function: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def peak(function: Callable[[], object]) -> tuple[int, object]:
    tracemalloc.start()
    try:
        result = function()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def report(what: str, seconds: float, rows: int, note: str) -> None:
    print(f"  {what + ':':28} {seconds:7.2f} s {rows / seconds:10,.0f} rows/s  {note}")


def streamed(campaign: Campaign, level: str, format: str) -> int:
    return sum(len(chunk) for chunk in build_export(campaign, level, format).chunks())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--judges", type=int, default=3)
    parser.add_argument("--metrics", type=int, default=10)
    parser.add_argument("--reference-pairs", type=int, default=2000)
    args = parser.parse_args()

    if connection.vendor == "postgresql":
        connection.settings_dict["TEST"]["NAME"] = f"bench_export_{connection.settings_dict['NAME']}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        started = time.perf_counter()
        campaign = build(args.pairs, args.judges, args.metrics)
        print(
            f"database: {connection.vendor}; {args.pairs:,} pairs x {args.judges} judgements x "
            f"{args.metrics} metrics built in {time.perf_counter() - started:.1f} s"
        )
        judgements = args.pairs * args.judges
        pair_csv_s, size = timed(lambda: streamed(campaign, "pairs", "csv"))
        report("pairs CSV, streamed", pair_csv_s, args.pairs, f"{size / 1e6:6.1f} M characters")
        pair_jsonl_s, size = timed(lambda: streamed(campaign, "pairs", "jsonl"))
        report("pairs JSONL, streamed", pair_jsonl_s, args.pairs, f"{size / 1e6:6.1f} M characters")
        judgement_s, size = timed(lambda: streamed(campaign, "judgements", "csv"))
        report("judgements CSV, streamed", judgement_s, judgements, f"{size / 1e6:6.1f} M characters")
        limit = min(args.reference_pairs, args.pairs)
        reference_s, _ = timed(lambda: naive_pair_export(campaign, limit))
        report("reference, 2 queries/pair", reference_s, limit, f"(first {limit:,} pairs)")
        speedup = (args.pairs / pair_csv_s) / (limit / reference_s)
        print(f"  ratio: the streamed pair export is {speedup:.1f}x faster per row than the reference")

        streamed_peak, _ = peak(lambda: streamed(campaign, "pairs", "csv"))
        judgement_peak, _ = peak(lambda: streamed(campaign, "judgements", "csv"))
        metrics = metric_columns(campaign)
        listed_peak, _ = peak(lambda: len(list(pair_rows(campaign, metrics))))
        print(f"  peak Python memory, pairs CSV streamed:      {streamed_peak / 1e6:7.1f} MB")
        print(f"  peak Python memory, judgements CSV streamed: {judgement_peak / 1e6:7.1f} MB")
        print(f"  peak Python memory, pair rows in a list:     {listed_peak / 1e6:7.1f} MB")
        print(f"  ratio: streaming holds {listed_peak / streamed_peak:.0f}x less than materialising the rows")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
