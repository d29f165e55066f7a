"""How long a score file wrong on every line holds the import, against references in the same run.

Builds a CSV of ``--lines`` lines (default 1,000,000, about 11 MB) whose pair ids are all
unknown, in a campaign of ``--pairs`` pairs of a throw-away database (``bench_<name>``), and
prints the median seconds of :func:`scoring.external.score_import.read_scores` (which refuses it with the
first 50 problems and the count) next to two references: reading the same bytes with
``csv.DictReader`` and nothing else (the floor), and one query naming every id of the file
(what the check did before: minutes for three million lines). Ratios, not timed assertions.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/paraeval .venv/bin/python benchmarks/score_import_refusal.py
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from annotate.models import Campaign, Pair  # noqa: E402
from scoring.external.score_import import ScoreImportError, read_scores  # noqa: E402

REPEATS = 3


def timed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--pairs", type=int, default=1_000)
    arguments = parser.parse_args()
    if connection.vendor == "postgresql":
        connection.settings_dict["TEST"]["NAME"] = f"bench_{connection.settings_dict['NAME']}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        campaign = Campaign.objects.create(slug="bench", name="bench")
        Pair.objects.bulk_create(
            Pair(campaign=campaign, external_id=f"p{index}", source="A.", hypothesis="B.")
            for index in range(arguments.pairs)
        )
        first_unknown = Pair.objects.order_by("-id").values_list("id", flat=True).first() + 1
        ids = [first_unknown + index for index in range(arguments.lines)]
        data = ("pair_id,score\n" + "".join(f"{pair_id},0.5\n" for pair_id in ids)).encode()

        def ours() -> None:
            try:
                read_scores(campaign, data, "s.csv")
            except ScoreImportError as error:
                assert error.total == arguments.lines and len(error.problems) == 50
            else:
                raise AssertionError("the file was not refused")

        def parse_only() -> None:
            for _ in csv.DictReader(io.StringIO(data.decode(), newline="")):
                pass

        def one_query() -> None:
            list(Pair.objects.filter(id__in=ids).values_list("id", "campaign__slug"))

        times = {
            name: [timed(function) for _ in range(REPEATS)]
            for name, function in [
                ("read_scores (refused, 50 listed + count)", ours),
                ("csv.DictReader only (floor)", parse_only),
                ("one query naming every id (before)", one_query),
            ]
        }
        floor = statistics.median(times["csv.DictReader only (floor)"])
        print(
            f"{arguments.lines:,} lines ({len(data) / 1e6:.1f} MB), all unknown; campaign of {arguments.pairs:,} pairs"
        )
        for name, values in times.items():
            median = statistics.median(values)
            print(f"  {name:<42} {median:7.2f} s  {median / floor:5.2f}x the floor")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
