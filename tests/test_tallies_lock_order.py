"""Bulk writes of several volunteers' judgements at once never deadlock on the campaign tallies.

Each statement on the judgements (and pairs, volunteers, scores) tables updates its campaign's
tally stripes through one trigger function that takes every stripe once, in (campaign, stripe)
order. Two statements that touch the same stripes in opposite orders (here: the rows of one
written with volunteers of ascending stripes, the other's descending) then queue one behind the
other; with a lock taken per row, or stripes taken by two triggers one after the other, they
could each hold a stripe the other waits for, and PostgreSQL would kill one (deadlock detected).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection, transaction

from annotate.models import Campaign, CampaignTally, Judgement, Pair, Volunteer
from annotate.tallies import counted, tally
from tests.builders import make_campaign, make_pair, make_volunteer

STRIPES = CampaignTally.STRIPES
ROUNDS = 4
PAIRS_PER_VOLUNTEER = 12


def both_at_once(first: Callable[[], object], second: Callable[[], object]) -> None:
    """Run the two statements in two threads released together, each in its own transaction;
    re-raise the first error (a deadlock is an error of one of them)."""
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def run(work: Callable[[], object]) -> None:
        try:
            barrier.wait(timeout=30)
            with transaction.atomic():
                work()
        except BaseException as error:  # noqa: BLE001 - re-raised in the test thread below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(work,)) for work in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a writer hung"
    assert not errors, f"a bulk statement failed: {errors[0]!r}"


def volunteers_by_stripe(campaign: Campaign, per_stripe: int) -> list[Volunteer]:
    """``per_stripe`` volunteers in each of the campaign's stripes, ordered by stripe."""
    volunteers = [make_volunteer(campaign) for _ in range(STRIPES * per_stripe)]
    return sorted(volunteers, key=lambda volunteer: (volunteer.pk % STRIPES, volunteer.pk))


def judgements_of(volunteers: list[Volunteer], pairs: list[Pair]) -> list[Judgement]:
    """One judgement of each volunteer on each pair, in the volunteers' order (the row order)."""
    return [
        Judgement(
            volunteer=volunteer,
            pair=pair,
            label="same_meaning",
            source_on_top=True,
            shown_at=volunteer.created_at,
            answered_at=volunteer.created_at,
        )
        for volunteer in volunteers
        for pair in pairs
    ]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_opposite_bulk_inserts_and_updates_of_judgements_do_not_deadlock(require_postgres: None) -> None:
    campaign = make_campaign(slug="lock-order")
    rising = volunteers_by_stripe(campaign, per_stripe=2)
    falling = list(reversed(volunteers_by_stripe(campaign, per_stripe=2)))
    for round_ in range(ROUNDS):
        pairs = [make_pair(campaign, external_id=f"r{round_}-{n}") for n in range(2 * PAIRS_PER_VOLUNTEER)]
        ours, theirs = pairs[:PAIRS_PER_VOLUNTEER], pairs[PAIRS_PER_VOLUNTEER:]
        # Inserts: each statement's rows go through every stripe, in opposite orders.
        both_at_once(
            lambda ours=ours: Judgement.objects.bulk_create(judgements_of(rising, ours)),
            lambda theirs=theirs: Judgement.objects.bulk_create(judgements_of(falling, theirs)),
        )
        # Updates (an edit the analyses read): the rows in the same opposite orders.
        up = Judgement.objects.filter(pair__in=ours)
        down = Judgement.objects.filter(pair__in=theirs)
        both_at_once(lambda up=up: up.update(label="different"), lambda down=down: down.update(label="different"))
        # Deletions too, each one statement (the ORM's delete is a statement per hundred rows, and
        # a transaction of several statements takes its locks statement by statement).
        if round_ == ROUNDS - 1:
            both_at_once(lambda up=up: up._raw_delete(up.db), lambda down=down: down._raw_delete(down.db))
    assert tally(campaign) == counted(campaign)
    assert counted(campaign).judgements == (ROUNDS - 1) * 2 * len(rising) * PAIRS_PER_VOLUNTEER
