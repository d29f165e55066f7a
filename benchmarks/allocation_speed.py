"""How fast the allocator serves a pair from a 100,000-pair pool: the per-volunteer shuffle
against the id-order walk it replaced, in the same run and on the same rows.

Creates a throw-away database (``bench_<name>`` on PostgreSQL, in memory on SQLite), a campaign
of ``--pool`` pairs with 3 judges per pair, a third of them already judged once, and
``--volunteers`` volunteers. Each volunteer takes a pair and answers it (``--steps`` times);
the reference is the previous allocation query (``ORDER BY judgement_count, id`` on an index
(campaign, judgement_count, id), created here for the comparison). Prints the median time of
one allocation with each, and their ratio. Ratios, not timed assertions.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test .venv/bin/python benchmarks/allocation_speed.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from annotate import allocation, flow  # noqa: E402
from annotate.models import Campaign, Pair, Volunteer  # noqa: E402
from annotate.signals import judgement_recorded  # noqa: E402

# The allocation query before the shuffle: the first free pair in id order.
ID_ORDER = """
SELECT p.* FROM {pair} p
WHERE p.campaign_id = %s AND NOT p.is_training AND p.judgement_count < %s
  AND NOT EXISTS (SELECT 1 FROM {assignment} mine WHERE mine.pair_id = p.id AND mine.volunteer_id = %s)
  AND p.judgement_count + {reserved} < %s
ORDER BY p.judgement_count, p.id
LIMIT 1"""


def id_order_candidate(volunteer: Volunteer, campaign: Campaign) -> Pair | None:
    """The reference: the previous query, one statement, no lock (as the shuffled one below)."""
    tables = allocation._tables()
    sql = ID_ORDER.format(**tables, reserved=allocation._RESERVED_BY_OTHERS.format(**tables))
    moment = connection.ops.adapt_datetimefield_value(timezone.now())
    target = campaign.judges_per_pair
    return next(iter(Pair.objects.raw(sql, [campaign.pk, target, volunteer.pk, moment, volunteer.pk, target])), None)


def shuffled_candidate(volunteer: Volunteer, campaign: Campaign, step: int) -> Pair | None:
    start = allocation.shuffle_point(volunteer.token, step)
    return allocation._first_candidate(volunteer, campaign, timezone.now(), start, (), "")


def fill(pool: int) -> Campaign:
    campaign = Campaign.objects.create(slug="bench", name="bench", quota=50, judges_per_pair=3)
    Pair.objects.bulk_create(
        (
            Pair(
                campaign=campaign,
                external_id=f"b{i}",
                source=f"Source sentence {i}.",
                hypothesis=f"Hypothesis {i}.",
                judgement_count=1 if i % 3 == 0 else 0,
            )
            for i in range(pool)
        ),
        batch_size=5000,
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX bench_id_order_idx ON {allocation._tables()['pair']} (campaign_id, judgement_count, id)"
            " WHERE NOT is_training"
        )
        if connection.vendor == "postgresql":
            cursor.execute("ANALYZE")
    return campaign


def timed(function, *args) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=int, default=100_000)
    parser.add_argument("--volunteers", type=int, default=20)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    if connection.vendor == "postgresql":
        connection.settings_dict["TEST"]["NAME"] = f"bench_{connection.settings_dict['NAME']}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    judgement_recorded.receivers = []  # scoring's dispatch is measured by benchmarks/answer_path.py
    try:
        campaign = fill(args.pool)
        now = timezone.now()
        volunteers = [
            Volunteer.objects.select_related("campaign").get(
                pk=Volunteer.objects.create(
                    campaign=campaign, english_level="good", guidelines_seen_at=now, training_done_seen_at=now
                ).pk
            )
            for _ in range(args.volunteers)
        ]
        query_new, query_old, whole_step = [], [], []
        for step in range(args.steps):
            for volunteer in volunteers:
                query_old.append(timed(id_order_candidate, volunteer, campaign))
                query_new.append(timed(shuffled_candidate, volunteer, campaign, step))
                start = time.perf_counter()
                assignment = allocation.next_assignment(volunteer).assignment
                whole_step.append(time.perf_counter() - start)
                assert assignment is not None
                flow.record_answer(volunteer, assignment.pair_id, "same_meaning")
        old, new, whole = (statistics.median(values) * 1000 for values in (query_old, query_new, whole_step))
        print(f"database: {connection.vendor}; pool {args.pool:,} pairs, {args.volunteers} volunteers x {args.steps}")
        print(f"candidate query, id order (before):   median {old:.3f} ms")
        print(f"candidate query, shuffled (now):      median {new:.3f} ms  ({new / old:.2f}x the id-order query)")
        print(f"whole allocation step (lock, reserve): median {whole:.3f} ms")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
