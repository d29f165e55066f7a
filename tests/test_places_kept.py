"""A campaign's places read from the kept tallies, held to a count written here and to the pair walk.

:func:`annotate.allocation.places` reads the judgements a campaign still needs from the judged-pair
tallies the database keeps (PostgreSQL triggers on the pairs table) and the held ones from the
active reservations. After every kind of write to ``Pair.judgement_count`` (answers, a count set
directly, bulk imports with counts, pairs moved, turned into checks, deleted, a campaign deleted)
and after staff change ``judges_per_pair``, it must give the figures of a plain Python count over
the rows and of :func:`~annotate.allocation.places_by_scan` (the SQL it replaces on PostgreSQL).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotate.allocation import Places, places, places_by_scan
from annotate.models import Assignment, Campaign, JudgedPairsTally, Pair, Volunteer
from tests.builders import make_campaign, make_judgement, make_pair, make_volunteer

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the judged-pair tallies are kept by PostgreSQL triggers"
)


def python_places(campaign: Campaign) -> Places:
    """Needed and free judgements by walking every row in Python (reservations here are all fresh)."""
    campaign.refresh_from_db()
    target = campaign.judges_per_pair
    now = timezone.now()
    needed = free = 0
    for pair in Pair.objects.filter(campaign=campaign, is_training=False, is_check=False):
        lacking = max(target - pair.judgement_count, 0)
        held = Assignment.objects.filter(pair=pair, answered_at__isnull=True, expires_at__gt=now).count()
        needed += lacking
        free += max(lacking - held, 0)
    return Places(needed=needed, free=free)


def assert_places(campaign: Campaign, needed: int, free: int) -> None:
    campaign.refresh_from_db()
    expected = Places(needed=needed, free=free)
    assert python_places(campaign) == expected
    assert places_by_scan(campaign) == expected
    assert places(campaign) == expected


def reserve(pair: Pair, volunteer: Volunteer, *, minutes: int = 30) -> Assignment:
    now = timezone.now()
    return Assignment.objects.create(
        volunteer=volunteer, pair=pair, source_on_top=True, shown_at=now, expires_at=now + timedelta(minutes=minutes)
    )


@pytest.mark.django_db
def test_places_follow_every_write_to_the_judgement_counts() -> None:
    campaign = make_campaign(slug="kept-places", judges_per_pair=2)
    other = make_campaign(slug="beside", judges_per_pair=3)
    pairs = [make_pair(campaign) for _ in range(5)]
    make_pair(campaign, is_check=True, expected_label="same_meaning")
    make_pair(campaign, is_training=True, training_position=1, expected_label="same_meaning")
    make_pair(other)
    assert_places(campaign, needed=10, free=10)

    # Answers (the counter's signal), then a reservation on a pair and an expired one.
    first, second = make_volunteer(campaign), make_volunteer(campaign)
    make_judgement(pairs[0], first)
    make_judgement(pairs[0], second)
    make_judgement(pairs[1], first)
    assert_places(campaign, needed=7, free=7)
    reserve(pairs[1], second)
    reserve(pairs[2], first)
    reserve(pairs[2], second)
    reserve(pairs[3], first, minutes=-1)  # expired: holds nothing
    assert_places(campaign, needed=7, free=4)

    # A count set directly (above the target too), and a bulk import of pairs with counts.
    Pair.objects.filter(pk=pairs[4].pk).update(judgement_count=5)
    assert_places(campaign, needed=5, free=2)
    Pair.objects.bulk_create(
        [
            Pair(campaign=campaign, external_id=f"bulk{index}", source="s", hypothesis="h", judgement_count=index)
            for index in range(4)
        ]
    )
    assert_places(campaign, needed=8, free=5)

    # Staff change the target: no recount, the levels already hold every count.
    Campaign.objects.filter(pk=campaign.pk).update(judges_per_pair=4)
    assert_places(campaign, needed=23, free=20)
    Campaign.objects.filter(pk=campaign.pk).update(judges_per_pair=1)
    assert_places(campaign, needed=3, free=2)
    Campaign.objects.filter(pk=campaign.pk).update(judges_per_pair=2)

    # A pair turned into a check, one moved to another campaign, one deleted with its judgements.
    Pair.objects.filter(pk=pairs[3].pk).update(is_check=True, expected_label="same_meaning")
    assert_places(campaign, needed=6, free=3)
    Pair.objects.filter(pk=pairs[1].pk).update(campaign=other)
    assert_places(campaign, needed=5, free=3)
    assert_places(other, needed=3 + 2, free=3 + 2 - 1)
    pairs[0].delete()
    assert_places(campaign, needed=5, free=3)

    # An answer deleted (the counter goes down), and the campaign's pairs counted again by SQL.
    Pair.objects.filter(campaign=campaign, external_id="bulk3").update(judgement_count=0)
    assert_places(campaign, needed=7, free=5)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE annotate_pair SET judgement_count = judgement_count + 1 WHERE campaign_id = %s", [campaign.pk]
        )
    assert_places(campaign, needed=3, free=2)


@pytest.mark.django_db
def test_places_after_deletions_of_judgements_and_of_a_campaign() -> None:
    campaign = make_campaign(slug="deleted", judges_per_pair=3)
    pairs = [make_pair(campaign) for _ in range(3)]
    volunteers = [make_volunteer(campaign) for _ in range(3)]
    judgements = [make_judgement(pair, volunteer) for pair in pairs for volunteer in volunteers[:2]]
    assert_places(campaign, needed=3, free=3)
    judgements[0].delete()
    assert_places(campaign, needed=4, free=4)
    volunteers[1].delete()  # a cascade: the volunteer's judgements, one per pair
    assert_places(campaign, needed=7, free=7)
    campaign.delete()
    assert not JudgedPairsTally.objects.filter(campaign_id=campaign.pk).exists()
