"""Real Celery workers on the real Redis and PostgreSQL: every score arrives, exactly once.

The test process plays the web side (imports, volunteers answering over HTTP); worker
processes started here share its test database and a Redis database of their own.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import redis
from django.db.models import Count
from django.test import Client
from django.utils import timezone

from annotate.importers import import_records
from annotate.models import Campaign, Judgement, Pair
from scoring.models import MetricConfig, Score, WorkerHeartbeat
from scoring.pipeline import dispatch
from tests.builders import make_campaign, make_training_pairs
from tests.workers_support import (
    WorkerProcess,
    judge_through_http,
    redis_transport_options,
    shared_database_url,
    use_broker,
    wait_for,
    worker_env,
)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

METRICS = ["lev", "wer", "test_slow"]
PLUGINS = "tests.worker_metrics"
BATCH_SIZE = 10
SLOW_SECONDS = "0.2"  # per pair: a batch of 10 keeps the llm worker busy for 2 s
VISIBILITY_TIMEOUT = 8  # seconds before a killed worker's message goes back to the queue


@pytest.fixture
def scoring_env(settings, monkeypatch, redis_url: str, redis_db: redis.Redis, tmp_path: Path) -> dict[str, str]:
    """Same metric settings here and in the workers; this process sends to the test Redis."""
    settings.PARAEVAL_METRICS = METRICS
    settings.PARAEVAL_METRIC_PLUGINS = [PLUGINS]
    settings.PARAEVAL_SCORING_BATCH_SIZE = BATCH_SIZE
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    monkeypatch.setenv("PARAEVAL_TEST_SLOW_SECONDS", SLOW_SECONDS)
    markers = tmp_path / "markers"
    markers.mkdir()
    env = worker_env(
        DATABASE_URL=shared_database_url(),
        REDIS_URL=redis_url,
        PARAEVAL_METRICS=",".join(METRICS),
        PARAEVAL_METRIC_PLUGINS=PLUGINS,
        PARAEVAL_SCORING_BATCH_SIZE=str(BATCH_SIZE),
        PARAEVAL_TEST_SLOW_SECONDS=SLOW_SECONDS,
        PARAEVAL_TEST_MARKER_DIR=str(markers),
        CELERY_VISIBILITY_TIMEOUT=str(VISIBILITY_TIMEOUT),
        PARAEVAL_HEARTBEAT_SECONDS="1",
        DB_CONN_MAX_AGE="0",
    )
    env["MARKERS"] = str(markers)
    with use_broker(redis_url, redis_transport_options(VISIBILITY_TIMEOUT)):
        yield env


def import_pairs(campaign: Campaign, phase: int, count: int) -> list[Pair]:
    records = [
        {
            "id": f"phase{phase}-{i}",
            "source": f"Phase {phase}: the cat number {i} is alive.",
            "hypothesis": f"Cat {i} lives.",
        }
        for i in range(count)
    ]
    import_records(campaign, records)  # announces pairs_created after commit: scoring is queued
    return list(Pair.objects.filter(campaign=campaign, external_id__startswith=f"phase{phase}-"))


def complete(pairs: list[Pair]) -> bool:
    """Every pair has a score for every enabled configuration."""
    configs = MetricConfig.objects.filter(metric__in=METRICS).count()
    return configs == len(METRICS) and Score.objects.filter(pair__in=pairs).count() == len(pairs) * len(METRICS)


def markers_of(env: dict[str, str]) -> list[dict]:
    found = []
    for path in Path(env["MARKERS"]).glob("*.json"):
        try:
            found.append(json.loads(path.read_text()))
        except ValueError:  # being written
            continue
    return found


def test_every_score_arrives_exactly_once_even_through_a_killed_worker(scoring_env, tmp_path: Path) -> None:
    campaign = make_campaign(slug="workers", quota=5)
    make_training_pairs(campaign)
    first = WorkerProcess(scoring_env, tmp_path, name="first").start()
    try:
        phase1 = import_pairs(campaign, 1, 30)
        judged = judge_through_http(Client(), "workers", 5)
        assert len(judged) == 5
        assert Judgement.objects.filter(is_training=False).count() == 5
        assert Judgement.objects.filter(is_training=True).count() == 5

        wait_for(lambda: complete(phase1), timeout=90, what=f"phase 1 scores\n{first.log()[-3000:]}")
        assert not Score.objects.filter(pair__is_training=True).exists()
        assert (
            wait_for(
                lambda: WorkerHeartbeat.objects.filter(hostname=first.hostname).first(), timeout=10, what="a heartbeat"
            ).queues
            == "cpu,llm"
        )

        # Phase 2: catch the worker in the middle of a slow batch, and kill it outright.
        phase2 = import_pairs(campaign, 2, 30)
        sources = {pair.source: pair for pair in phase2}
        busy = wait_for(
            lambda: [m for m in markers_of(scoring_env) if m["sources"][0] in sources],
            timeout=60,
            interval=0.05,
            what="the worker to start a phase-2 batch",
        )[0]
        first.kill()
        interrupted = [sources[source] for source in busy["sources"]]
        slow = MetricConfig.objects.get(metric="test_slow")
        # It was killed before storing anything of that batch.
        assert not Score.objects.filter(metric_config=slow, pair__in=interrupted).exists()
        killed_at = timezone.now()

        second = WorkerProcess(scoring_env, tmp_path, name="second").start()
        try:
            wait_for(
                lambda: complete(phase1 + phase2),
                timeout=120,
                what=f"every score after the kill\n{second.log()[-3000:]}",
            )
        finally:
            second.stop()
    finally:
        first.stop()

    everything = phase1 + phase2
    assert Score.objects.filter(pair__in=everything).count() == len(everything) * len(METRICS)
    doubled = Score.objects.values("pair", "metric_config").annotate(n=Count("id")).filter(n__gt=1)
    assert not doubled.exists()
    assert not Score.objects.exclude(status=Score.Status.DONE).exists()
    # The interrupted batch was redelivered (late acknowledgement + visibility timeout) and
    # scored by the second worker, after the kill.
    redone = Score.objects.filter(metric_config=slow, pair__in=interrupted)
    assert redone.count() == len(interrupted)
    assert all(score.computed_at > killed_at for score in redone)
    assert Pair.objects.filter(campaign=campaign, is_training=False).count() == 60


def test_a_judgement_queues_its_pair_and_the_sweep_the_rest(scoring_env, tmp_path: Path) -> None:
    campaign = make_campaign(slug="judged", quota=3)
    make_training_pairs(campaign)
    # Stored without announcing them: only a judgement, or the sweep, can queue their scores.
    Pair.objects.bulk_create(
        [
            Pair(campaign=campaign, external_id=f"q{i}", source=f"Quiet pair {i}.", hypothesis="Unannounced.")
            for i in range(12)
        ]
    )
    pairs = list(Pair.objects.filter(campaign=campaign, is_training=False))
    worker = WorkerProcess(scoring_env, tmp_path, name="judged").start()
    try:
        judged = judge_through_http(Client(), "judged", 3)
        judged_pairs = [pair for pair in pairs if pair.pk in judged]
        wait_for(lambda: complete(judged_pairs), timeout=60, what=f"the judged pairs' scores\n{worker.log()[-3000:]}")
        time.sleep(1.0)
        others = [pair for pair in pairs if pair.pk not in judged]
        assert not Score.objects.filter(pair__in=others).exists()

        result = dispatch.queue_sweep()
        assert result.sent > 0 and result.error is None
        wait_for(lambda: complete(pairs), timeout=60, what="the sweep's scores")
    finally:
        worker.stop()
    assert Score.objects.count() == len(pairs) * len(METRICS)
    # A clean shutdown removes the worker from the status page.
    assert not WorkerHeartbeat.objects.filter(hostname=worker.hostname).exists()
