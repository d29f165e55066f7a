"""Scripted volunteers that reload and never answer cannot hold a campaign."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from annotate import allocation, flow
from annotate.labels import Label
from annotate.models import Assignment, Campaign, Volunteer
from tests.builders import make_campaign, make_pair, make_volunteer

pytestmark = pytest.mark.django_db(transaction=True)

PAIRS = 40
BOTS = 60


def bot_campaign() -> Campaign:
    campaign = make_campaign(quota=PAIRS, judges_per_pair=1)
    for _ in range(PAIRS):
        make_pair(campaign)
    return campaign


def held_by(volunteers: list[Volunteer], now: datetime) -> int:
    """Pairs whose reservation (unanswered, not expired) belongs to one of ``volunteers``."""
    return Assignment.objects.filter(volunteer__in=volunteers, answered_at__isnull=True, expires_at__gt=now).count()


def test_bots_reloading_every_30_seconds_hold_no_pair_after_their_first_reservation() -> None:
    # The attack of the issue: 60 scripts start, reload their pair page every 30 s for 7
    # minutes and never answer. Before the fix each reload renewed an expired reservation and
    # the bots held 38 of 40 pairs throughout; real volunteers went straight to the end page.
    campaign = bot_campaign()
    start = timezone.now() - timedelta(minutes=8)
    bots = [make_volunteer(campaign) for _ in range(BOTS)]
    held = []
    for tick in range(0, 7 * 60 + 1, 30):
        now = start + timedelta(seconds=tick)
        for bot in bots:
            allocation.next_assignment(bot, now=now)
        held.append(held_by(bots, now))
    assert held[0] == PAIRS  # at first they take every pair (a first reservation is honoured)
    # Once the first reservations (3 minutes) are over, reloading buys nothing.
    assert max(held[8:]) <= 3, str(held)
    assert held[-1] == 0
    # Seven real volunteers arriving now each get a pair, and their answers are stored.
    assert not allocation.places(campaign).is_full
    for _ in range(7):
        person = make_volunteer(campaign)
        item = flow.current_pair(person)
        assert item is not None and not item.pair.is_training
        assert flow.record_answer(person, item.pair.pk, Label.SAME_MEANING.value).outcome is flow.AnswerOutcome.STORED


def test_a_waiting_volunteer_takes_over_a_pair_from_a_volunteer_who_never_answered() -> None:
    # Within the first reservation: every pair is held by a script that has not answered for
    # longer than the grace period, so a volunteer who arrives takes one over.
    campaign = bot_campaign()
    start = timezone.now() - timedelta(seconds=90)
    bots = [make_volunteer(campaign) for _ in range(PAIRS)]
    for bot in bots:
        assert allocation.next_assignment(bot, now=start).assignment is not None
    assert allocation.places(campaign).free == PAIRS  # reservations that yield do not hold places
    person = make_volunteer(campaign)
    step = allocation.next_assignment(person)
    assert step.assignment is not None
    taken = step.assignment.pair_id
    robbed = Assignment.objects.get(pair_id=taken, volunteer__in=bots)
    assert robbed.expires_at <= timezone.now()  # the script lost its reservation
    # The script's late answer is not stored over the new holder's reservation (no overshoot).
    outcome = flow.record_answer(robbed.volunteer, taken, Label.SAME_MEANING.value).outcome
    assert outcome is flow.AnswerOutcome.REASSIGNED
    assert flow.record_answer(person, taken, Label.SAME_MEANING.value).outcome is flow.AnswerOutcome.STORED


def test_a_volunteer_who_has_answered_keeps_their_reservation() -> None:
    campaign = bot_campaign()
    worker = make_volunteer(campaign)
    start = timezone.now() - timedelta(minutes=2)
    first = allocation.next_assignment(worker, now=start).assignment
    assert first is not None
    flow.record_answer(worker, first.pair_id, Label.SAME_MEANING.value)
    second = allocation.next_assignment(worker, now=start).assignment
    assert second is not None
    for _ in range(PAIRS - 2):
        allocation.next_assignment(make_volunteer(campaign), now=start)
    # Every pair is now held; a newcomer may take over only from the scripts, never from worker.
    for _ in range(5):
        allocation.next_assignment(make_volunteer(campaign))
    second.refresh_from_db()
    assert second.expires_at > timezone.now()


def test_a_fresh_reservation_is_not_taken_over_within_the_grace_period() -> None:
    campaign = make_campaign(quota=5, judges_per_pair=1)
    make_pair(campaign)
    reader = make_volunteer(campaign)
    assert allocation.next_assignment(reader, now=timezone.now() - timedelta(seconds=20)).assignment is not None
    assert allocation.next_assignment(make_volunteer(campaign)).assignment is None
    assert allocation.places(campaign).is_full
