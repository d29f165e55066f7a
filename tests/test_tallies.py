"""The campaign and score tallies the database keeps, held to COUNT(*) after every kind of write.

The triggers (migrations ``campaign_tallies_kept_by_triggers`` and ``score_tallies_kept_by_triggers``)
are SQL, on PostgreSQL statement-level and on SQLite row-level: the same story runs on both
(imports one by one and in bulk, raw SQL, answers, deletions and cascades, pairs turned into
checks, scores stored, failed then recomputed, a configuration removed, the campaign deleted),
then, on PostgreSQL, threads write at the same moment, each in its own transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection, transaction
from django.db.models import Count, Q

from annotate.models import Campaign, CampaignTally, Judgement, Pair, Volunteer
from annotate.tallies import CampaignCounts, counted, tallies, tally
from scoring.models import MetricConfig, Score, ScoreTally
from scoring.tallies import scored_configs
from tests.builders import make_campaign, make_judgement, make_metric_config, make_pair, make_score, make_volunteer


def score_counts(campaign: Campaign) -> dict[int, tuple[int, int]]:
    """Done and failed scores per configuration on the campaign's non-training pairs, by COUNT(*)."""
    rows = (
        Score.objects.filter(pair__campaign=campaign, pair__is_training=False)
        .values("metric_config")
        .annotate(done=Count("id", filter=Q(status="done")), failed=Count("id", filter=Q(status="failed")))
        .order_by()
    )
    return {row["metric_config"]: (row["done"], row["failed"]) for row in rows}


def kept_scores(campaign: Campaign) -> dict[int, tuple[int, int]]:
    return {
        row.metric_config_id: (row.done, row.failed)
        for row in ScoreTally.objects.filter(campaign=campaign)
        if row.done or row.failed
    }


def assert_exact(campaign: Campaign) -> CampaignCounts:
    found = tally(campaign)
    assert found == counted(campaign)
    assert kept_scores(campaign) == score_counts(campaign)
    assert set(scored_configs(campaign).values_list("pk", flat=True)) == set(score_counts(campaign))
    return found


@pytest.mark.django_db
def test_every_write_keeps_the_tallies_equal_to_a_count() -> None:
    campaign, other = make_campaign(slug="kept"), make_campaign(slug="beside")
    assert tally(campaign) == CampaignCounts()  # no row yet: zeros
    corpus = [make_pair(campaign) for _ in range(4)]
    check = make_pair(campaign, is_check=True, expected_label="same_meaning")
    training = make_pair(campaign, is_training=True, training_position=1, expected_label="same_meaning")
    make_pair(other)
    assert assert_exact(campaign) == CampaignCounts(pairs=4, checks=1)
    # A bulk import, then raw SQL as the benchmark builds a million pairs.
    Pair.objects.bulk_create(
        [Pair(campaign=campaign, external_id=f"bulk-{n}", source="a", hypothesis="b") for n in range(30)]
    )
    template = corpus[0]
    columns = [str(field.column) for field in Pair._meta.concrete_fields if not field.primary_key]
    chosen = [{"external_id": "'raw-' || g.n", "training_position": "NULL"}.get(name, name) for name in columns]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO annotate_pair ({', '.join(columns)}) SELECT {', '.join(chosen)} FROM annotate_pair,"
            " (SELECT 1 AS n UNION SELECT 2 UNION SELECT 3) g WHERE id = %s",
            [template.pk],
        )
    assert assert_exact(campaign).pairs == 37
    # Volunteers answer: corpus judgements count, check and training answers do not.
    people = [make_volunteer(campaign) for _ in range(3)]
    make_volunteer(other)
    for volunteer in people:
        for pair in corpus:
            make_judgement(pair=pair, volunteer=volunteer)
        make_judgement(pair=check, volunteer=volunteer, is_check=True)
    make_judgement(pair=training, volunteer=people[0], is_training=True)
    assert assert_exact(campaign) == CampaignCounts(pairs=37, checks=1, judgements=12, volunteers=3)
    # Scores stored one by one and in bulk (a failure among them), recomputed, removed.
    lev, bleu = make_metric_config("lev"), make_metric_config("bleu")
    make_score(corpus[0], lev)
    make_score(check, lev, None)
    Score.objects.bulk_create([Score(pair=pair, metric_config=bleu, value=0.3) for pair in corpus])
    assert score_counts(campaign) == {lev.pk: (1, 1), bleu.pk: (4, 0)}
    assert_exact(campaign)
    Score.objects.filter(pair=check, metric_config=lev).update(status=Score.Status.DONE, value=0.2)
    Score.objects.filter(pair=corpus[1], metric_config=bleu).update(status=Score.Status.FAILED, value=None)
    assert kept_scores(campaign) == {lev.pk: (2, 0), bleu.pk: (3, 1)}
    assert_exact(campaign)
    # Deletions: one answer, a pair with its judgements and scores, a volunteer with theirs.
    Judgement.objects.filter(pair=corpus[3], volunteer=people[2]).delete()
    assert assert_exact(campaign).judgements == 11
    corpus[1].delete()
    assert assert_exact(campaign) == CampaignCounts(pairs=36, checks=1, judgements=8, volunteers=3)
    people[0].delete()
    assert assert_exact(campaign) == CampaignCounts(pairs=36, checks=1, judgements=5, volunteers=2)
    # A pair made an attention check, another moved with its judgements and scores to the other
    # campaign, a third made a training pair (its scores no longer count).
    Pair.objects.filter(pk=corpus[2].pk).update(is_check=True)
    Pair.objects.filter(pk=corpus[3].pk).update(campaign=other)
    assert assert_exact(campaign) == CampaignCounts(pairs=34, checks=2, judgements=4, volunteers=2)
    assert assert_exact(other) == CampaignCounts(pairs=2, judgements=1, volunteers=1)
    Pair.objects.filter(pk=corpus[0].pk).update(is_training=True, training_position=2)
    assert assert_exact(campaign).pairs == 33
    # A configuration removed takes its scores (and tallies) with it.
    MetricConfig.objects.filter(pk=bleu.pk).delete()
    assert kept_scores(campaign) == {lev.pk: (1, 0)}  # the check pair's, not the training pair's
    assert_exact(campaign)
    # Deleting a campaign deletes its rows and its tallies, never another campaign's.
    campaign.delete()
    assert not CampaignTally.objects.filter(campaign_id=campaign.pk).exists()
    assert not ScoreTally.objects.filter(campaign_id=campaign.pk).exists()
    assert tallies([other.pk, campaign.pk]) == {other.pk: counted(other), campaign.pk: CampaignCounts()}


THREADS = 12


def together(work: Callable[[int], object]) -> None:
    """``work(index)`` in THREADS threads released at once, one connection and transaction each."""
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            with transaction.atomic():
                work(index)
        except BaseException as error:  # noqa: BLE001 - re-raised in the test thread below
            errors.append(error)
            barrier.abort()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a writer thread hung"
    if errors:
        raise errors[0]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_keep_the_tallies_exact(require_postgres: None) -> None:
    campaign = make_campaign(slug="crowd")
    config = make_metric_config("lev")
    assert not CampaignTally.objects.filter(campaign=campaign).exists()  # the first writers race to create it
    # Imports, volunteers and scores at the same moment.
    together(
        lambda index: Score.objects.bulk_create(
            Score(pair=pair, metric_config=config, value=0.5)
            for pair in Pair.objects.bulk_create(
                Pair(campaign=campaign, external_id=f"t{index}-{n}", source="a", hypothesis="b") for n in range(5)
            )
        )
    )
    volunteers = [make_volunteer(campaign) for _ in range(THREADS)]
    pairs = list(Pair.objects.filter(campaign=campaign).order_by("id"))

    # Every volunteer answers the same pairs at once, each answer its own statement.
    def answer(index: int) -> None:
        for pair in pairs[:6]:
            make_judgement(pair=pair, volunteer=volunteers[index])

    together(answer)
    found = assert_exact(campaign)
    assert found == CampaignCounts(pairs=THREADS * 5, judgements=THREADS * 6, volunteers=THREADS)
    assert kept_scores(campaign) == {config.pk: (THREADS * 5, 0)}
    # And deletions racing answers.
    together(
        lambda index: (
            Judgement.objects.filter(volunteer=volunteers[index]).delete()
            if index % 2
            else make_judgement(pair=pairs[7], volunteer=volunteers[index])
        )
    )
    assert assert_exact(campaign).judgements == THREADS // 2 * 6 + THREADS // 2
    assert Volunteer.objects.filter(campaign=campaign).count() == THREADS


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_answer_does_not_wait_for_another_volunteers_open_answer(require_postgres: None) -> None:
    """The tallies are striped: a volunteer's answer (and a newcomer's arrival) updates other
    rows than another volunteer's answer whose transaction is still open, so it goes through
    under a short lock timeout instead of queueing behind that transaction's commit."""
    campaign = make_campaign(slug="striped")
    pairs = [make_pair(campaign) for _ in range(3)]
    first, second = make_volunteer(campaign), make_volunteer(campaign)
    for volunteer in (first, second):  # the campaign's tally rows exist: the race is on updating them
        make_judgement(pair=pairs[0], volunteer=volunteer)
    holding, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def first_answers_and_waits() -> None:
        try:
            with transaction.atomic():
                make_judgement(pair=pairs[1], volunteer=first)
                holding.set()
                release.wait(timeout=30)
        except BaseException as error:  # noqa: BLE001 - re-raised in the test thread below
            errors.append(error)
        finally:
            holding.set()
            connection.close()

    thread = threading.Thread(target=first_answers_and_waits)
    thread.start()
    try:
        assert holding.wait(timeout=30)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '1s'")
            make_judgement(pair=pairs[2], volunteer=second)
            newcomer = make_volunteer(campaign)
            make_judgement(pair=pairs[2], volunteer=newcomer)
        stripes = {volunteer.pk % CampaignTally.STRIPES for volunteer in (second, newcomer)}
        assert first.pk % CampaignTally.STRIPES not in stripes  # consecutive ids: other stripes
        assert tally(campaign).judgements == 4  # the first's answer is not committed yet
    finally:
        release.set()
        thread.join(timeout=30)
    assert not errors
    assert assert_exact(campaign) == CampaignCounts(pairs=3, judgements=5, volunteers=3)
