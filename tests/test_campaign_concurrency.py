"""Many volunteers at the same moment, each on its own PostgreSQL connection: no overshoot.

Threads share nothing but the database; a barrier releases them together so that their
allocation transactions really overlap. SQLite serialises writers and cannot show the race,
so these tests are skipped there (with the reason).
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.db.models import Count

from annotate import allocation, flow
from annotate.allocation import EndReason
from annotate.counters import recount_judgements
from annotate.labels import Label
from annotate.models import Assignment, Campaign, Judgement, Pair, Volunteer
from tests import builders
from tests.builders import make_campaign, make_pair, make_training_pairs, make_volunteer

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


# The races run with the balanced order and with the adaptive one (everyone walks the planned
# order from its start, so adaptive volunteers contend for the same first pairs: the harder case).
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "selection" in metafunc.fixturenames:
        metafunc.parametrize("selection", ["balanced", "adaptive"], indirect=True)


@pytest.fixture(autouse=True)
def selection(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Campaigns made by this module's tests use the parametrized selection."""
    kind = str(getattr(request, "param", "balanced"))

    def make(**fields: Any) -> Campaign:
        return builders.make_campaign(**{"selection": kind, **fields})

    monkeypatch.setattr(sys.modules[__name__], "make_campaign", make)
    return kind


# Enough to overlap for real, few enough to leave connections to the other test runs.
THREADS = 24


def run_together(volunteer_ids: list[int], work: Callable[[Volunteer], object]) -> list[object]:
    """Run ``work`` for every volunteer at once, one thread and one connection each."""
    barrier = threading.Barrier(len(volunteer_ids))
    results: list[object] = [None] * len(volunteer_ids)
    errors: list[BaseException] = []

    def run(index: int, volunteer_id: int) -> None:
        try:
            volunteer = Volunteer.objects.select_related("campaign").get(pk=volunteer_id)
            barrier.wait(timeout=30)
            results[index] = work(volunteer)
        except BaseException as error:  # noqa: BLE001 - re-raised in the test thread below
            errors.append(error)
            barrier.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, vid)) for i, vid in enumerate(volunteer_ids)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a volunteer thread hung"
    if errors:
        raise errors[0]
    return results


def new_volunteers(campaign: Campaign, count: int) -> list[int]:
    return [make_volunteer(campaign).pk for _ in range(count)]


def reservations_per_pair(campaign: Campaign) -> Counter[int]:
    rows = Assignment.objects.filter(pair__campaign=campaign, pair__is_training=False, answered_at__isnull=True)
    return Counter(rows.values_list("pair_id", flat=True))


def test_volunteers_starting_together_never_overshoot_the_target(require_postgres: None) -> None:
    campaign = make_campaign(quota=5, judges_per_pair=2)
    pairs = [make_pair(campaign) for _ in range(8)]
    volunteers = new_volunteers(campaign, THREADS)

    def start(volunteer: Volunteer) -> int | None:
        step = allocation.next_assignment(volunteer)
        return step.assignment.pair_id if step.assignment else None

    served = run_together(volunteers, start)
    taken = Counter(pair_id for pair_id in served if pair_id is not None)
    # 8 pairs x 2 judges = 16 places, all taken, none twice over; the others end gracefully.
    assert sum(taken.values()) == 16
    assert set(taken) == {pair.pk for pair in pairs}
    assert max(taken.values()) == 2
    assert served.count(None) == THREADS - 16
    assert reservations_per_pair(campaign) == taken


def test_a_whole_campaign_run_concurrently_stores_each_answer_once_within_targets(require_postgres: None) -> None:
    campaign = make_campaign(quota=6, judges_per_pair=3)
    make_training_pairs(campaign, 2)
    for _ in range(30):
        make_pair(campaign)
    volunteers = new_volunteers(campaign, THREADS)
    labels = [label.value for label in Label]

    def whole_campaign(volunteer: Volunteer) -> tuple[int, EndReason | None]:
        answered = 0
        while True:
            step = allocation.next_assignment(volunteer)
            if step.assignment is None:
                return answered, step.end
            pair_id = step.assignment.pair_id
            label = labels[(volunteer.pk + pair_id) % len(labels)]
            first = flow.record_answer(volunteer, pair_id, label)
            replay = flow.record_answer(volunteer, pair_id, label)  # a double click
            assert first.outcome is flow.AnswerOutcome.STORED
            assert replay.outcome is flow.AnswerOutcome.DUPLICATE
            answered += 1

    outcomes = run_together(volunteers, whole_campaign)
    answers_sent = sum(answered for answered, _ in outcomes)
    # 30 pairs x 3 judges = 90 places for 24 x 6 = 144 wanted answers: the pool runs out.
    assert answers_sent == Judgement.objects.filter(pair__campaign=campaign).count() == 24 * 2 + 90
    per_pair = dict(
        Pair.objects.filter(campaign=campaign, is_training=False).annotate(n=Count("judgements")).values_list("pk", "n")
    )
    assert set(per_pair.values()) == {3}
    assert recount_judgements(campaign) == 0  # the counters match the rows
    assert all(end in (EndReason.QUOTA, EndReason.EXHAUSTED) for _, end in outcomes)
    assert not reservations_per_pair(campaign)


def test_answers_and_new_volunteers_racing_on_the_last_places(require_postgres: None) -> None:
    campaign = make_campaign(quota=3, judges_per_pair=1)
    pairs = [make_pair(campaign) for _ in range(THREADS // 2)]
    holders = new_volunteers(campaign, THREADS // 2)
    for volunteer_id in holders:
        volunteer = Volunteer.objects.select_related("campaign").get(pk=volunteer_id)
        assert allocation.next_assignment(volunteer).assignment is not None
    # Every pair is reserved. Half the threads answer theirs while newcomers ask for pairs.
    newcomers = new_volunteers(campaign, THREADS // 2)

    def act(volunteer: Volunteer) -> object:
        if volunteer.pk in holders:
            assignment = Assignment.objects.get(volunteer=volunteer, answered_at__isnull=True)
            return flow.record_answer(volunteer, assignment.pair_id, Label.SAME_MEANING.value).outcome
        return allocation.next_assignment(volunteer).end

    results = run_together(holders + newcomers, act)
    assert results[: len(holders)] == [flow.AnswerOutcome.STORED] * len(holders)
    # Answered pairs reached their target: nothing is left for the newcomers.
    assert results[len(holders) :] == [EndReason.EXHAUSTED] * len(newcomers)
    assert {pair.pk for pair in pairs} == set(
        Judgement.objects.filter(pair__campaign=campaign).values_list("pair_id", flat=True)
    )
    assert Judgement.objects.filter(pair__campaign=campaign).count() == len(pairs)
