"""The allocator (annotate.allocation) and the answer recording (annotate.flow), on one connection.

Real concurrency (many connections at once) is in test_campaign_concurrency.py.
"""

from __future__ import annotations

import hashlib
import sys
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from annotate import allocation, flow
from annotate.allocation import EndReason
from annotate.counters import recount_judgements
from annotate.labels import Label
from annotate.models import Assignment, Campaign, Judgement, Pair, Volunteer
from annotate.signals import judgement_recorded
from tests import builders
from tests.builders import make_campaign, make_judgement, make_pair, make_training_pairs, make_volunteer

pytestmark = pytest.mark.django_db

# Both selections keep every allocation guarantee: each test runs with the balanced order and the
# adaptive one (everyone walks the planned order from its start); the few tests about the
# per-volunteer shuffle itself run with the balanced order only.
BALANCED_ONLY = {
    "test_each_volunteer_meets_the_pairs_in_an_order_of_their_own",
    "test_the_shuffle_is_a_function_of_the_token_and_survives_a_restart",
    "test_the_allocation_query_walks_the_index_on_postgresql",
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "selection" in metafunc.fixturenames:
        kinds = ["balanced"] if metafunc.function.__name__ in BALANCED_ONLY else ["balanced", "adaptive"]
        metafunc.parametrize("selection", kinds, indirect=True)


@pytest.fixture(autouse=True)
def selection(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Campaigns made by this module's tests use the parametrized selection."""
    kind = str(getattr(request, "param", "balanced"))

    def make(**fields: Any) -> Campaign:
        return builders.make_campaign(**{"selection": kind, **fields})

    monkeypatch.setattr(sys.modules[__name__], "make_campaign", make)
    return kind


def volunteer_of(campaign: Campaign, **fields: Any) -> Volunteer:
    volunteer = make_volunteer(campaign, **fields)
    return Volunteer.objects.select_related("campaign").get(pk=volunteer.pk)


def volunteer_of_token(token: str) -> Volunteer:
    return Volunteer.objects.select_related("campaign").get(token=token)


def take(volunteer: Volunteer) -> Assignment | None:
    return allocation.next_assignment(volunteer).assignment


def answer(volunteer: Volunteer, assignment: Assignment, label: Label = Label.SAME_MEANING) -> flow.AnswerResult:
    return flow.record_answer(volunteer, assignment.pair_id, label.value)


def run_through(volunteer: Volunteer) -> list[int]:
    """Answer everything the volunteer is given; return the pair ids in order."""
    seen = []
    while (assignment := take(volunteer)) is not None:
        seen.append(assignment.pair_id)
        assert answer(volunteer, assignment).outcome is flow.AnswerOutcome.STORED
    return seen


def expire(assignment: Assignment) -> None:
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))


def test_training_comes_first_in_position_order_for_everyone() -> None:
    campaign = make_campaign(quota=2)
    pool = [make_pair(campaign) for _ in range(4)]
    # Created out of order: the position decides, not the id.
    training = {pair.training_position: pair for pair in make_training_pairs(campaign, 3)}
    Pair.objects.filter(pk=training[1].pk).update(training_position=9)
    expected_training = [training[2].pk, training[3].pk, training[1].pk]
    for _ in range(2):
        seen = run_through(volunteer_of(campaign))
        assert seen[:3] == expected_training
        assert set(seen[3:]) <= {pair.pk for pair in pool}
        assert len(seen) == 3 + 2


def test_training_pairs_ignore_targets_and_are_never_counted() -> None:
    campaign = make_campaign(quota=1, judges_per_pair=1)
    training = make_training_pairs(campaign, 2)
    make_pair(campaign)
    make_pair(campaign)
    for _ in range(2):
        run_through(volunteer_of(campaign))
    # Both volunteers did the whole training, although the target is one judge per pair.
    for pair in training:
        pair.refresh_from_db()
        assert pair.judgement_count == 0
        assert Judgement.objects.filter(pair=pair, is_training=True).count() == 2
    assert Judgement.objects.filter(is_training=False).count() == 2


def test_fewest_judgements_first() -> None:
    campaign = make_campaign(quota=1, judges_per_pair=3)
    busy, quiet, middle = make_pair(campaign), make_pair(campaign), make_pair(campaign)
    for _ in range(2):
        make_judgement(busy)
    make_judgement(middle)
    order = [allocation.next_assignment(volunteer_of(campaign)).assignment for _ in range(7)]
    # quiet (0 judgements) until its 3 places are reserved, then middle (1 judgement, 2 places),
    # then busy (2 judgements, 1 place), then nothing.
    assert [a.pair_id if a else None for a in order] == [quiet.pk] * 3 + [middle.pk] * 2 + [busy.pk, None]


def test_a_pair_is_served_up_to_its_target_only() -> None:
    campaign = make_campaign(quota=5, judges_per_pair=2)
    pair = make_pair(campaign)
    first, second, third = (volunteer_of(campaign) for _ in range(3))
    assert take(first).pair_id == pair.pk
    assert take(second).pair_id == pair.pk
    # Two reservations fill the target: the third volunteer finds nothing.
    step = allocation.next_assignment(third)
    assert step.assignment is None and step.end is EndReason.EXHAUSTED
    answer(first, take(first))
    answer(second, take(second))
    pair.refresh_from_db()
    assert pair.judgement_count == 2
    assert allocation.next_assignment(third).end is EndReason.EXHAUSTED


def test_a_reservation_blocks_others_until_it_expires_then_returns_to_the_pool() -> None:
    campaign = make_campaign(quota=5, judges_per_pair=1, reservation_minutes=20)
    warm_up, pair = make_pair(campaign), make_pair(campaign)
    idle, other = volunteer_of(campaign), volunteer_of(campaign)
    Pair.objects.filter(pk=warm_up.pk).update(judgement_count=1)  # judged already: not served
    make_judgement(make_pair(campaign, judgement_count=1), idle)  # idle has answered once before
    reserved = take(idle)
    assert reserved.pair_id == pair.pk
    assert reserved.expires_at == reserved.shown_at + timedelta(minutes=20)
    assert allocation.next_assignment(other).end is EndReason.EXHAUSTED
    # The idle volunteer walked away; twenty minutes later the pair is free again.
    later = timezone.now() + timedelta(minutes=21)
    assert allocation.next_assignment(other, now=later).assignment.pair_id == pair.pk


def test_a_volunteer_who_never_answered_holds_a_pair_only_briefly(settings) -> None:
    """Starts that never answer (a script) give their pairs back within minutes."""
    settings.PARAEVAL_FIRST_RESERVATION_MINUTES = 3
    campaign = make_campaign(quota=5, judges_per_pair=1, reservation_minutes=20)
    pairs = [make_pair(campaign) for _ in range(3)]
    squatters = [volunteer_of(campaign) for _ in range(3)]
    taken = [take(squatter) for squatter in squatters]
    assert sorted(a.pair_id for a in taken) == sorted(p.pk for p in pairs)
    assert [a.expires_at - a.shown_at for a in taken] == [timedelta(minutes=3)] * 3
    real = volunteer_of(campaign)
    assert allocation.next_assignment(real).end is EndReason.EXHAUSTED
    # Four minutes later, not twenty, the real volunteer gets a pair ...
    later = timezone.now() + timedelta(minutes=4)
    served = allocation.next_assignment(real, now=later).assignment
    assert served.pair_id in {p.pk for p in pairs}
    # ... and once they have answered, their next reservation is the campaign's full twenty minutes.
    assert answer(real, served).outcome is flow.AnswerOutcome.STORED
    following = allocation.next_assignment(real, now=later).assignment
    assert following.expires_at - following.shown_at == timedelta(minutes=20)


def test_an_expired_reservation_is_shown_again_but_never_renewed() -> None:
    # An attack run found that a reload used to renew an expired reservation, so volunteers who
    # reload and never answer held their pairs for ever. The pair is still shown while it is
    # free, but holds nothing against the others.
    campaign = make_campaign(quota=5)
    make_pair(campaign)
    volunteer = volunteer_of(campaign)
    first = take(volunteer)
    expire(first)
    first.refresh_from_db()
    again = allocation.next_assignment(volunteer)
    assert again.assignment.pk == first.pk and not again.dropped_expired
    again.assignment.refresh_from_db()
    assert again.assignment.expires_at == first.expires_at <= timezone.now()
    assert again.assignment.shown_at > first.shown_at  # shown anew: response time restarts


def test_an_expired_reservation_taken_by_someone_else_is_dropped_and_replaced() -> None:
    campaign = make_campaign(quota=5, judges_per_pair=1)
    pairs = [make_pair(campaign), make_pair(campaign)]
    away, other = volunteer_of(campaign), volunteer_of(campaign)
    stale = take(away)
    contested, spare = sorted(pairs, key=lambda pair: pair.pk != stale.pair_id)
    expire(stale)
    # The pair went to the other volunteer meanwhile.
    make_judgement(contested, other)
    Pair.objects.filter(pk=contested.pk).update(judgement_count=1)
    step = allocation.next_assignment(away)
    assert step.dropped_expired
    assert step.assignment.pair_id == spare.pk
    assert not Assignment.objects.filter(pk=stale.pk).exists()


def test_an_answer_to_a_reservation_that_expired_and_was_taken_is_not_stored() -> None:
    campaign = make_campaign(quota=5, judges_per_pair=1)
    pair = make_pair(campaign)
    away, other = volunteer_of(campaign), volunteer_of(campaign)
    stale = take(away)
    expire(stale)
    answer(other, take(other))
    result = answer(away, stale)
    assert result.outcome is flow.AnswerOutcome.REASSIGNED and result.judgement is None
    pair.refresh_from_db()
    assert pair.judgement_count == 1  # the target is not overshot
    assert Judgement.objects.filter(pair=pair).count() == 1


def test_an_answer_to_an_expired_but_still_free_reservation_is_stored() -> None:
    campaign = make_campaign(quota=5, judges_per_pair=1)
    make_pair(campaign)
    volunteer = volunteer_of(campaign)
    slow = take(volunteer)
    expire(slow)
    result = answer(volunteer, slow)
    assert result.outcome is flow.AnswerOutcome.STORED
    assert result.judgement.shown_at == slow.shown_at  # the time it was first shown


def test_never_the_same_pair_twice_and_the_quota_is_respected() -> None:
    campaign = make_campaign(quota=7, judges_per_pair=5)
    make_training_pairs(campaign, 2)
    for _ in range(10):
        make_pair(campaign)
    for _ in range(3):
        volunteer = volunteer_of(campaign)
        seen = run_through(volunteer)
        assert len(seen) == len(set(seen)) == 2 + 7
        assert allocation.next_assignment(volunteer).end is EndReason.QUOTA


def test_the_pool_runs_out_before_the_quota() -> None:
    campaign = make_campaign(quota=50, judges_per_pair=1)
    make_training_pairs(campaign, 1)
    pool = {make_pair(campaign).pk for _ in range(3)}
    first = volunteer_of(campaign)
    assert set(run_through(first)[1:]) == pool
    step = allocation.next_assignment(first)
    assert step.assignment is None and step.end is EndReason.EXHAUSTED
    # A newcomer still does the training, then ends gracefully.
    second = volunteer_of(campaign)
    assert len(run_through(second)) == 1
    assert allocation.next_assignment(second).end is EndReason.EXHAUSTED


def test_counts_come_from_answers_not_from_pages_served() -> None:
    campaign = make_campaign(quota=5, judges_per_pair=1)
    pair = make_pair(campaign)
    volunteer = volunteer_of(campaign)
    first = take(volunteer)
    for _ in range(5):  # reloads resume the same open assignment
        assert take(volunteer).pk == first.pk
    pair.refresh_from_db()
    assert pair.judgement_count == 0
    assert Assignment.objects.filter(pair=pair).count() == 1
    answer(volunteer, first)
    pair.refresh_from_db()
    assert pair.judgement_count == 1


def test_the_top_sentence_is_a_stable_sha256_draw_stored_with_the_judgement() -> None:
    campaign = make_campaign(quota=40, judges_per_pair=1)
    for _ in range(40):
        make_pair(campaign)
    volunteer = volunteer_of(campaign)
    run_through(volunteer)
    judgements = list(Judgement.objects.filter(volunteer=volunteer))
    for judgement in judgements:
        digest = hashlib.sha256(f"{volunteer.token}:{judgement.pair_id}".encode()).digest()
        assert judgement.source_on_top == bool(digest[0] & 1)
        assignment = Assignment.objects.get(volunteer=volunteer, pair_id=judgement.pair_id)
        assert assignment.source_on_top == judgement.source_on_top
    # Drawn, not constant: 40 fair coin flips all equal has probability 2**-39.
    assert {judgement.source_on_top for judgement in judgements} == {True, False}


def test_training_pairs_keep_the_imported_order_for_everyone() -> None:
    """Paper, section 3.1: the training trial is the same for all judges (source on top)."""
    campaign = make_campaign(quota=1)
    make_training_pairs(campaign, 5)
    make_pair(campaign)
    for _ in range(12):
        volunteer = volunteer_of(campaign)
        run_through(volunteer)
        training = Judgement.objects.filter(volunteer=volunteer, is_training=True)
        assert [judgement.source_on_top for judgement in training] == [True] * 5


def test_each_volunteer_meets_the_pairs_in_an_order_of_their_own() -> None:
    campaign = make_campaign(quota=30, judges_per_pair=3)
    make_training_pairs(campaign, 2)
    # Evenly spaced keys and fixed tokens: the draw is exercised without leaving the test to
    # chance (random keys leave uneven gaps, so three first pairs coincide about once in 150).
    pool = [make_pair(campaign, shuffle_key=index * (2**31 // 30)).pk for index in range(30)]
    tokens = ["volunteer-order-a", "volunteer-order-b", "volunteer-order-c"]
    orders = [run_through(volunteer_of(campaign, token=token))[2:] for token in tokens]
    for order in orders:
        assert sorted(order) == sorted(pool)  # everyone judges every pair once
    # Three shuffles of 30 pairs: equal orders, or the id order, would be a defect.
    assert len({tuple(order) for order in orders}) == 3
    assert all(order != sorted(pool) for order in orders)
    # Each volunteer starts where their own SHA-256 draw points: order effects are spread.
    assert len({order[0] for order in orders}) == 3
    for token, order in zip(tokens, orders, strict=True):
        start = allocation.shuffle_point(token, 0)  # their first campaign pair
        expected_first = next((pk for pk, key in _keys(pool) if key >= start), pool[0])
        assert order[0] == expected_first


def _keys(pool: list[int]) -> list[tuple[int, int]]:
    return list(Pair.objects.filter(pk__in=pool).order_by("shuffle_key").values_list("pk", "shuffle_key"))


def test_the_shuffle_is_a_function_of_the_token_and_survives_a_restart() -> None:
    """No per-process state: the same token meets the same pool in the same order."""
    campaign = make_campaign(quota=20, judges_per_pair=2)
    for _ in range(20):
        make_pair(campaign)
    volunteer = volunteer_of(campaign)
    first_run = run_through(volunteer)
    token = volunteer.token
    volunteer.delete()
    recount_judgements(campaign)
    again = make_volunteer(campaign)
    Volunteer.objects.filter(pk=again.pk).update(token=token)
    assert run_through(volunteer_of_token(token)) == first_run


def test_fewest_judgements_still_come_first_within_the_shuffle() -> None:
    campaign = make_campaign(quota=6, judges_per_pair=3)
    pairs = [make_pair(campaign) for _ in range(6)]
    for pair in pairs[:4]:
        Pair.objects.filter(pk=pair.pk).update(judgement_count=1)
    order = run_through(volunteer_of(campaign))
    assert set(order[:2]) == {pairs[4].pk, pairs[5].pk}
    assert set(order[2:]) == {pair.pk for pair in pairs[:4]}


def test_each_judgement_stores_its_position_in_the_volunteers_sequence() -> None:
    campaign = make_campaign(quota=4, judges_per_pair=2)
    make_training_pairs(campaign, 2)
    for _ in range(6):
        make_pair(campaign)
    volunteer = volunteer_of(campaign)
    order = run_through(volunteer)
    stored = Judgement.objects.filter(volunteer=volunteer).order_by("answered_at", "id")
    assert [(j.pair_id, j.position) for j in stored] == [(pair_id, n) for n, pair_id in enumerate(order, 1)]
    assert [a.position for a in Assignment.objects.filter(volunteer=volunteer)] == [1, 2, 3, 4, 5, 6]


def test_a_double_answer_is_stored_once() -> None:
    campaign = make_campaign(quota=5)
    pair = make_pair(campaign)
    volunteer = volunteer_of(campaign)
    assignment = take(volunteer)
    first = answer(volunteer, assignment, Label.MOSTLY_SIMILAR)
    second = answer(volunteer, assignment, Label.VERY_DIFFERENT)
    assert first.outcome is flow.AnswerOutcome.STORED
    assert second.outcome is flow.AnswerOutcome.DUPLICATE
    assert second.judgement.pk == first.judgement.pk
    assert Judgement.objects.get(volunteer=volunteer, pair=pair).label == Label.MOSTLY_SIMILAR.value
    pair.refresh_from_db()
    assert pair.judgement_count == 1


def test_a_judgement_stored_by_another_path_hits_the_unique_constraint_without_error() -> None:
    campaign = make_campaign(quota=5)
    pair = make_pair(campaign)
    volunteer = volunteer_of(campaign)
    assignment = take(volunteer)
    existing = make_judgement(pair, volunteer, Label.SAME_MEANING)
    result = answer(volunteer, assignment, Label.VERY_DIFFERENT)
    assert result.outcome is flow.AnswerOutcome.DUPLICATE and result.judgement.pk == existing.pk
    assert Judgement.objects.filter(volunteer=volunteer, pair=pair).count() == 1
    assert Assignment.objects.get(pk=assignment.pk).answered_at is not None


def test_answers_only_for_assigned_pairs_and_known_labels() -> None:
    campaign = make_campaign(quota=5)
    pairs = {make_pair(campaign).pk, make_pair(campaign).pk}
    volunteer, other = volunteer_of(campaign), volunteer_of(campaign)
    mine, theirs = take(volunteer).pair, take(other).pair
    assert {mine.pk, theirs.pk} == pairs  # a judge per pair: each gets the pair the other has not
    with pytest.raises(flow.NotAssignedError):
        flow.record_answer(volunteer, theirs.pk, Label.SAME_MEANING.value)
    with pytest.raises(ValueError, match="banana"):
        flow.record_answer(volunteer, mine.pk, "banana")
    assert not Judgement.objects.exists()


def test_each_judgement_stores_what_the_issue_lists() -> None:
    campaign = make_campaign(quota=5)
    (training,) = make_training_pairs(campaign, 1)
    pair = make_pair(campaign)
    volunteer = volunteer_of(campaign)
    stored = [answer(volunteer, take(volunteer), label).judgement for label in (Label.DONT_KNOW, Label.MOSTLY_SIMILAR)]
    (practice, real) = stored
    assert (practice.pair_id, practice.is_training, practice.label) == (training.pk, True, "dont_know")
    assert (real.pair_id, real.is_training, real.label) == (pair.pk, False, "mostly_similar")
    for judgement in stored:
        judgement.refresh_from_db()
        assert judgement.volunteer_id == volunteer.pk
        assert judgement.shown_at <= judgement.answered_at
        assert judgement.source_on_top in (True, False)


def test_the_signal_is_sent_after_commit_with_the_ids(django_capture_on_commit_callbacks) -> None:
    campaign = make_campaign(quota=5)
    make_pair(campaign)
    volunteer = volunteer_of(campaign)
    assignment = take(volunteer)
    received: list[dict] = []

    def receiver(sender: object, **kwargs: object) -> None:
        received.append(kwargs)

    judgement_recorded.connect(receiver)
    try:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            result = answer(volunteer, assignment)
        assert received == []  # nothing before commit
        for callback in callbacks:
            callback()
        assert received == [
            {"signal": judgement_recorded, "judgement_id": result.judgement.pk, "pair_id": assignment.pair_id}
        ]
        # A replay sends nothing more.
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            answer(volunteer, assignment)
        assert callbacks == []
    finally:
        judgement_recorded.disconnect(receiver)


def test_counters_follow_deletions_and_can_be_rebuilt() -> None:
    campaign = make_campaign(quota=5, judges_per_pair=3)
    pair = make_pair(campaign)
    judgements = [make_judgement(pair) for _ in range(3)]
    pair.refresh_from_db()
    assert pair.judgement_count == 3
    judgements[0].volunteer.delete()  # cascades to the judgement
    pair.refresh_from_db()
    assert pair.judgement_count == 2
    Pair.objects.filter(pk=pair.pk).update(judgement_count=7)
    assert recount_judgements(campaign) == 1
    pair.refresh_from_db()
    assert pair.judgement_count == 2


def test_query_counts_stay_small_whatever_the_pool(django_assert_max_num_queries) -> None:
    campaign = make_campaign(quota=5, judges_per_pair=1)
    Pair.objects.bulk_create(
        [Pair(campaign=campaign, external_id=f"bulk-{i}", source=f"s {i}", hypothesis=f"h {i}") for i in range(300)]
    )
    volunteers = [volunteer_of(campaign) for _ in range(3)]
    for volunteer in volunteers[:2]:
        take(volunteer)  # reservations at the head of the pool
    volunteer = volunteers[2]
    # Inside the test's transaction BEGIN/COMMIT show up as a SAVEPOINT/RELEASE pair (2 more).
    with django_assert_max_num_queries(11):
        assignment = take(volunteer)
    with django_assert_max_num_queries(7):
        answer(volunteer, assignment)


def test_the_allocation_query_walks_the_index_on_postgresql(require_postgres: None) -> None:
    campaign = make_campaign(quota=5)
    Pair.objects.bulk_create(
        [Pair(campaign=campaign, external_id=f"bulk-{i}", source=f"s {i}", hypothesis=f"h {i}") for i in range(5000)]
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotate_pair")
    volunteer = volunteer_of(campaign)
    start = allocation.shuffle_point(volunteer.token, 0)
    for wrapped in (False, True):
        sql, params = allocation.candidate_query(
            volunteer, campaign, timezone.now(), start=start, wrapped=wrapped, lock="skip"
        )
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN " + sql, params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
        # A range scan of the partial index from the volunteer's point, stopping at the first free
        # pair: no sort of the pool, and the shuffle key bounds the scan (an index condition).
        assert "pair_shuffled_allocation_idx" in plan, plan
        assert "Sort" not in plan, plan
        assert "Index Cond" in plan and "shuffle_key" in plan.split("Index Cond")[1].split("\n")[0], plan
