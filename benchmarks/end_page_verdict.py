"""What the end page costs at 100,000 judgements: the campaign-wide quality pass it used to run
on every visit, against the verdict computed once from the volunteer's own answers and the
record read back on a reload.

Creates a throw-away database (``bench_<name>`` on PostgreSQL, in memory on SQLite), a Prolific
campaign of ``--pairs`` pairs and ``--volunteers`` finished volunteers who judged
``--per-volunteer`` pairs each. Times, for one volunteer, in the same run: the previous path
(``quality.volunteer_quality``: every volunteer's evidence and agreement), the first visit now
(``quality.rule_verdict`` and storing the record) and a reload now (the whole ``/done/`` page
through Django's test client, reading the record). Prints medians and ratios, not assertions.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test .venv/bin/python benchmarks/end_page_verdict.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from annotate import platforms, quality  # noqa: E402
from annotate.models import Campaign, Judgement, Pair, Volunteer  # noqa: E402


def fill(pairs: int, volunteers: int, per_volunteer: int) -> Campaign:
    campaign = Campaign.objects.create(
        slug="bench", name="Bench", quota=per_volunteer, judges_per_pair=50, platform="prolific", completion_code="OK"
    )
    Pair.objects.bulk_create(
        [Pair(campaign=campaign, source=f"Source {n}.", hypothesis=f"Hypothesis {n}.") for n in range(pairs)]
    )
    pair_ids = list(Pair.objects.filter(campaign=campaign).values_list("pk", flat=True))
    now = timezone.now()
    people = Volunteer.objects.bulk_create(
        [
            Volunteer(campaign=campaign, english_level="good", finished_at=now, participant_id=f"P{n}")
            for n in range(volunteers)
        ]
    )
    labels = ["very_different", "slightly_similar", "mostly_similar", "same_meaning"]
    batch: list[Judgement] = []
    for v, person in enumerate(people):
        for k in range(per_volunteer):
            shown = now - timedelta(seconds=10 * (per_volunteer - k))
            batch.append(
                Judgement(
                    volunteer=person,
                    pair_id=pair_ids[(v * 7 + k) % pairs],
                    label=labels[(v + k) % 4],
                    source_on_top=True,
                    shown_at=shown,
                    answered_at=shown + timedelta(seconds=6),
                )
            )
            if len(batch) >= 5000:
                Judgement.objects.bulk_create(batch)
                batch = []
    Judgement.objects.bulk_create(batch)
    return campaign


def timed(function, *args) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2_000)
    parser.add_argument("--volunteers", type=int, default=1_000)
    parser.add_argument("--per-volunteer", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if connection.vendor == "postgresql":
        connection.settings_dict["TEST"]["NAME"] = f"bench_{connection.settings_dict['NAME']}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        campaign = fill(args.pairs, args.volunteers, args.per_volunteer)
        volunteers = list(Volunteer.objects.select_related("campaign").filter(campaign=campaign)[: args.repeats])
        before = [timed(quality.volunteer_quality, volunteer) for volunteer in volunteers]
        first = [timed(platforms.record_end, volunteer) for volunteer in volunteers]
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]  # the test client's host
        client = Client()
        reload = []
        for volunteer in volunteers:
            for _ in range(3):
                start = time.perf_counter()
                response = client.get(f"/v/{volunteer.token}/done/")
                reload.append(time.perf_counter() - start)
                assert response.status_code == 200 and b"completion-code" in response.content, (
                    response.status_code,
                    response.content[-1500:],
                )
        old, new_first, new_reload = (statistics.median(values) * 1000 for values in (before, first, reload))
        total = Judgement.objects.filter(pair__campaign=campaign).count()
        print(f"database: {connection.vendor}; {total:,} judgements, {args.volunteers:,} volunteers")
        print(f"campaign-wide quality per visit (before): median {old:8.1f} ms")
        print(f"verdict once, first visit (now):           median {new_first:8.1f} ms  ({new_first / old:.3f}x)")
        print(f"whole end page on a reload (now):          median {new_reload:8.1f} ms  ({new_reload / old:.3f}x)")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
