"""Answered pairs are scored first: an answer's scores go to the front of their queues, ahead of
an import's backlog, on the embedded broker and on Redis."""

from __future__ import annotations

import base64
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from kombu import Connection

from annotate.models import Pair
from annotate.signals import announce_judgement_recorded, announce_pairs_created
from paraeval import broker
from paraeval.celery import app
from scoring.models import MetricConfig, QueuedScore
from scoring.pipeline import configs, dispatch, runner
from tests.builders import make_campaign, make_judgement, make_pair, make_score
from tests.workers_support import redis_transport_options, use_broker

pytestmark = pytest.mark.django_db


@pytest.fixture
def enabled(settings):
    settings.PARAEVAL_METRICS = ["lev", "wer"]
    settings.PARAEVAL_SCORING_BATCH_SIZE = 10
    return settings


def lev_wer() -> list[int]:
    return sorted(MetricConfig.objects.filter(metric__in=["lev", "wer"]).values_list("pk", flat=True))


def consumer(queue_dir: Path) -> Connection:
    """A consumer of the filesystem broker ``queue_dir`` belongs to (what the worker reads)."""
    base = queue_dir.parent
    options = {
        "data_folder_in": str(queue_dir),
        "data_folder_out": str(queue_dir),
        "processed_folder": str(base / "processed"),
        "control_folder": str(base / "control"),
    }
    return Connection("paraevalfs://", transport_options=options)


def taken_in_order(channel: Any, queue: str) -> list[tuple[int, list[int]]]:
    """(priority, pair ids) of every message of ``queue``, in the order a worker takes them."""
    order = []
    while channel._size(queue):
        payload = channel._get(queue)
        _, pair_ids = json.loads(base64.b64decode(payload["body"]))[0]
        order.append((payload["properties"]["priority"], pair_ids))
    return order


def import_then_answer(django_capture_on_commit_callbacks) -> tuple[list[int], int]:
    """30 pairs imported (3 backlog messages of 10), then an answer on the 25th."""
    campaign = make_campaign()
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        pairs = [make_pair(campaign).pk for _ in range(30)]
        announce_pairs_created(pairs)
    answered = pairs[24]
    judgement = make_judgement(Pair.objects.get(pk=answered))
    with django_capture_on_commit_callbacks(execute=True):
        announce_judgement_recorded(judgement.pk, answered)
    return pairs, answered


def test_an_answer_on_a_pair_waiting_in_a_backlog_is_taken_first(
    enabled, queue_dir: Path, django_capture_on_commit_callbacks
) -> None:
    pairs, answered = import_then_answer(django_capture_on_commit_callbacks)
    with consumer(queue_dir) as conn:
        order = taken_in_order(conn.default_channel, "cpu")
    assert order == [(0, [answered]), (9, pairs[0:10]), (9, pairs[10:20]), (9, pairs[20:30])]
    # Its scores stay marked queued (the sweep does not queue them a third time).
    assert sorted(QueuedScore.objects.filter(pair_id=answered).values_list("config_id", flat=True)) == lev_wer()


def test_the_backlog_copy_of_an_answered_pair_is_skipped_once_scored(
    enabled, queue_dir: Path, django_capture_on_commit_callbacks
) -> None:
    pairs, answered = import_then_answer(django_capture_on_commit_callbacks)
    first = runner.score_config_batch(lev_wer()[0], [answered])
    assert first is not None and first.scored == 1
    again = runner.score_config_batch(lev_wer()[0], pairs[20:30])  # the backlog message, later
    assert again is not None and again.scored == 9  # the answered pair is not scored twice


def test_an_answer_marks_its_scores_queued_in_one_statement(settings, queue_dir: Path) -> None:
    """Four metrics, one already queued behind an import: one write of the markers, all now."""
    settings.PARAEVAL_METRICS = ["lev", "wer", "bleu", "sacrebleu"]
    pair = make_pair()
    ids = sorted(config.id for config in configs.enabled())
    assert len(ids) == 4
    before = timezone.now() - timedelta(hours=1)
    QueuedScore.objects.create(pair_id=pair.pk, config_id=ids[0], queued_at=before)
    with CaptureQueriesContext(connection) as queries:
        result = dispatch.queue_answered([pair.pk])
    assert result.scores == 4 and result.not_sent == 0
    writes = [q["sql"] for q in queries if "scoring_queuedscore" in q["sql"] and not q["sql"].startswith("SELECT")]
    assert len(writes) == 1, writes
    markers = dict(QueuedScore.objects.filter(pair_id=pair.pk).values_list("config_id", "queued_at"))
    assert sorted(markers) == ids
    assert all(moment > before for moment in markers.values())  # the old marker was refreshed too


def test_an_answer_with_nothing_missing_sends_nothing(enabled, queue_dir: Path) -> None:
    pair = make_pair()
    for name in ("lev", "wer"):
        make_score(pair, configs.ensure_metric_config(configs.build(name)))
    assert dispatch.queue_answered([pair.pk]).tasks == 0
    assert list(queue_dir.iterdir()) == []


def test_on_redis_the_answer_goes_to_the_list_the_worker_reads_first(
    enabled, redis_url: str, django_capture_on_commit_callbacks
) -> None:
    with use_broker(redis_url, redis_transport_options(60)), app.connection_for_read() as conn:
        conn.default_channel._purge("cpu")
        pairs, answered = import_then_answer(django_capture_on_commit_callbacks)
        order = taken_in_order(conn.default_channel, "cpu")
    assert order == [(0, [answered]), (9, pairs[0:10]), (9, pairs[10:20]), (9, pairs[20:30])]
    assert broker.PRIORITY_FIRST < broker.PRIORITY_BACKLOG
