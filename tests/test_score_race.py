"""Two workers storing the same scores at the same moment, each on its own PostgreSQL connection:
one row per (pair, configuration), kept by the unique constraint, not by the store's own check.

The store reads which scores are present, then inserts the rest. A barrier holds both workers
between that read and the insert, so both see "missing" and both insert: only the database's
unique constraint (``score_unique_pair_metric_config``) can keep the second row out.
A pair deleted on another connection between that read and the insert is skipped, the others stored.
SQLite serialises writers and cannot show the race, so the test is skipped there (with the reason).
"""

from __future__ import annotations

import threading
from typing import Any
from unittest import mock

import pytest
from django.db import connection
from django.db.models import Count

from annotate.models import Pair
from scoring.metrics.base import ScoreOutcome
from scoring.metrics.lexical import Levenshtein
from scoring.models import Score
from scoring.pipeline import configs, runner
from tests.builders import make_campaign, make_pair

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_two_stores_of_the_same_scores_racing_leave_one_row_each(require_postgres: None) -> None:
    campaign = make_campaign()
    pair_ids = [make_pair(campaign).pk for _ in range(3)]
    config = configs.ensure_metric_config(Levenshtein())
    barrier = threading.Barrier(2)
    insert = Score.objects.bulk_create
    errors: list[BaseException] = []

    def insert_after_both_have_read(*args: Any, **kwargs: Any) -> Any:
        barrier.wait(timeout=30)  # both have read "missing": both insert
        return insert(*args, **kwargs)

    def store(value: float) -> None:
        try:
            runner.store_outcomes(config, pair_ids, [ScoreOutcome(value, None) for _ in pair_ids])
        except BaseException as error:  # noqa: BLE001 - re-raised in the test thread below
            errors.append(error)
            barrier.abort()
        finally:
            connection.close()

    with mock.patch.object(Score.objects, "bulk_create", insert_after_both_have_read):
        threads = [threading.Thread(target=store, args=(value,)) for value in (0.25, 0.75)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a store hung"
    if errors:
        raise errors[0]

    rows = Score.objects.filter(metric_config=config).values("pair_id").annotate(n=Count("id"))
    assert sorted((row["pair_id"], row["n"]) for row in rows) == [(pair_id, 1) for pair_id in sorted(pair_ids)]
    # One store's values won for all three pairs: the first insert's transaction, whole.
    values = set(Score.objects.filter(metric_config=config).values_list("value", flat=True))
    assert values in ({0.25}, {0.75})


def test_a_pair_deleted_after_the_store_read_it_is_skipped_the_others_stored(require_postgres: None) -> None:
    # Staff delete a pair on another connection after the store listed the live pairs and before
    # it inserts: PostgreSQL checks the foreign key when the store commits.
    campaign = make_campaign()
    pair_ids = [make_pair(campaign).pk for _ in range(3)]
    doomed = pair_ids[1]
    config = configs.ensure_metric_config(Levenshtein())
    insert = Score.objects.bulk_create
    errors: list[BaseException] = []

    def delete_elsewhere() -> None:
        try:
            Pair.objects.filter(pk=doomed).delete()  # committed on its own connection
        except BaseException as error:  # noqa: BLE001 - re-raised in the test thread below
            errors.append(error)
        finally:
            connection.close()

    def insert_after_a_deletion(*args: Any, **kwargs: Any) -> Any:
        if Pair.objects.filter(pk=doomed).exists():
            thread = threading.Thread(target=delete_elsewhere)
            thread.start()
            thread.join(timeout=30)
        return insert(*args, **kwargs)

    with mock.patch.object(Score.objects, "bulk_create", insert_after_a_deletion):
        stored = runner.store_outcomes(config, pair_ids, [ScoreOutcome(0.5, None) for _ in pair_ids])
    if errors:
        raise errors[0]
    assert not Pair.objects.filter(pk=doomed).exists()
    assert sorted(Score.objects.filter(metric_config=config).values_list("pair_id", flat=True)) == [
        pair_ids[0],
        pair_ids[2],
    ]
    assert (stored.scored, stored.failed, stored.skipped) == (2, 0, 1)
