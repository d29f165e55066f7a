"""Two workers storing the same scores at the same moment, each on its own PostgreSQL connection:
one row per (pair, configuration), kept by the unique constraint, not by the store's own check.

The store reads which scores are present, then inserts the rest. A barrier holds both workers
between that read and the insert, so both see "missing" and both insert: only the database's
unique constraint (``score_unique_pair_metric_config``) can keep the second row out.
SQLite serialises writers and cannot show the race, so the test is skipped there (with the reason).
"""

from __future__ import annotations

import threading
from typing import Any
from unittest import mock

import pytest
from django.db import connection
from django.db.models import Count

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
