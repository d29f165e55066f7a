"""A plug-in cannot stop scoring: on a real worker, a metric that ends its process or never
answers becomes failed scores with the reason (crash budget, time limit) while the other metric
of the same pairs and the same message is still stored; a metric taken out of the settings has
its queued work dropped, and the worker restarted without it does not crash on that work."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar
from unittest import mock

import pytest
from django.db import OperationalError

from annotate.importers import import_records
from scoring.metrics.base import Metric, Pair
from scoring.metrics.lexical import Levenshtein
from scoring.models import MetricConfig, QueuedScore, Score, ScoreAttempt
from scoring.pipeline import attempts, configs, dispatch, limits, runner
from tests.builders import make_campaign, make_pair
from tests.plugin_support import install_example, on_path, write_bad_plugins
from tests.test_metric_plugins import jaccard
from tests.workers_support import (
    WorkerProcess,
    redis_transport_options,
    shared_database_url,
    use_broker,
    wait_for,
    worker_env,
)

PAIRS = 4


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_example(tmp_path_factory.mktemp("plugin"))


@pytest.fixture
def plugins(example_site: Path, tmp_path: Path) -> Iterator[list[Path]]:
    bad = write_bad_plugins(tmp_path / "bad")
    with on_path(example_site, bad):
        configs.forget_enabled()
        yield [example_site, bad]
    configs.forget_enabled()


def start_worker(plugins: list[Path], tmp_path: Path, redis_url: str, metrics: list[str], **env: str) -> WorkerProcess:
    environment = worker_env(
        DATABASE_URL=shared_database_url(),
        REDIS_URL=redis_url,
        PARAEVAL_METRICS=",".join(metrics),
        PARAEVAL_HEARTBEAT_SECONDS="1",
        DB_CONN_MAX_AGE="0",
        PYTHONPATH=os.pathsep.join([*(str(folder) for folder in plugins), os.environ.get("PYTHONPATH", "")]),
        **env,
    )
    return WorkerProcess(environment, tmp_path, name="isolation", queues="example").start()


def import_pairs(slug: str) -> list:
    campaign = make_campaign(slug=slug)
    records = [
        {"id": f"r{i}", "source": f"The dog {i} runs.", "hypothesis": f"Dog {i} is running."} for i in range(PAIRS)
    ]
    import_records(campaign, records)  # queues one message on "example" after its commit
    return list(campaign.pairs.order_by("id"))


def assert_overlap_scored(pairs: list) -> None:
    overlap = MetricConfig.objects.get(metric="example_overlap")
    values = dict(Score.objects.filter(metric_config=overlap, status=Score.Status.DONE).values_list("pair_id", "value"))
    assert values == {pair.pk: pytest.approx(jaccard(pair.source, pair.hypothesis)) for pair in pairs}


def failed_errors(metric: str) -> list[tuple[str, str]]:
    rows = Score.objects.filter(metric_config__metric=metric).order_by("pair_id")
    return list(rows.values_list("status", "error"))


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_plugin_that_ends_its_process_becomes_failed_scores_and_the_other_metric_arrives(
    plugins, tmp_path, settings, redis_url, redis_db
):
    # test_exiting first: its configuration comes first in the message, before example_overlap.
    metrics = ["test_exiting", "example_overlap"]
    settings.PARAEVAL_METRICS = metrics
    configs.forget_enabled()
    with use_broker(redis_url, redis_transport_options(30)):
        worker = start_worker(plugins, tmp_path, redis_url, metrics)
        try:
            pairs = import_pairs("plugin-exit")
            wait_for(
                lambda: Score.objects.filter(pair__in=pairs).count() == 2 * PAIRS,
                timeout=120,
                what=f"every score, failed or not\n{worker.log()[-3000:]}",
            )
            assert worker.process is not None and worker.process.poll() is None  # the worker is still there
        finally:
            worker.stop()
    assert_overlap_scored(pairs)
    reason = "the worker died 3 times while computing metric test_exiting"
    assert failed_errors("test_exiting") == [("failed", reason)] * PAIRS
    # The metric that killed a worker goes last in the redelivered message: the other metric's
    # scores were stored after the first death, not behind the whole budget.
    overlap_stored = Score.objects.filter(metric_config__metric="example_overlap").latest("computed_at").computed_at
    given_up = Score.objects.filter(metric_config__metric="test_exiting").earliest("computed_at").computed_at
    assert overlap_stored < given_up
    # The budget (3) was spent, no more: three pool processes lost, then the message completed.
    log = worker.log()
    assert log.count("exited with 'exitcode 3'") == 3, log[-6000:]
    assert not ScoreAttempt.objects.exists() and not QueuedScore.objects.exists()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_plugin_that_never_answers_is_stopped_at_its_time_limit(plugins, tmp_path, settings, redis_url, redis_db):
    metrics = ["test_sleeping", "example_overlap"]
    settings.PARAEVAL_METRICS = metrics
    settings.PARAEVAL_METRIC_TIME_LIMITS = {"test_sleeping": 2}
    configs.forget_enabled()
    with use_broker(redis_url, redis_transport_options(30)):
        worker = start_worker(plugins, tmp_path, redis_url, metrics, PARAEVAL_METRIC_TIME_LIMITS="test_sleeping=2")
        try:
            pairs = import_pairs("plugin-sleep")
            wait_for(
                lambda: Score.objects.filter(pair__in=pairs).count() == 2 * PAIRS,
                timeout=90,
                what=f"every score, failed or not\n{worker.log()[-3000:]}",
            )
            assert worker.process is not None and worker.process.poll() is None
        finally:
            worker.stop()
    assert_overlap_scored(pairs)
    assert failed_errors("test_sleeping") == [("failed", "metric test_sleeping exceeded its time limit of 2 s")] * PAIRS
    assert "WorkerLostError" not in worker.log()
    assert not ScoreAttempt.objects.exists() and not QueuedScore.objects.exists()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_restarted_without_the_plugin_drops_its_queued_work(plugins, tmp_path, settings, redis_url, redis_db):
    queued_with = ["test_exiting", "example_overlap"]
    settings.PARAEVAL_METRICS = queued_with
    configs.forget_enabled()
    with use_broker(redis_url, redis_transport_options(30)):
        pairs = import_pairs("plugin-removed")  # queued while no worker runs: [test_exiting, example_overlap]
        exiting = MetricConfig.objects.get(metric="test_exiting")
        assert QueuedScore.objects.filter(config_id=exiting.pk).count() == PAIRS
        worker = start_worker(plugins, tmp_path, redis_url, ["example_overlap"])
        try:
            wait_for(
                lambda: not QueuedScore.objects.exists(),
                timeout=90,
                what=f"the queued work to be done or dropped\n{worker.log()[-3000:]}",
            )
            assert worker.process is not None and worker.process.poll() is None
        finally:
            worker.stop()
    assert_overlap_scored(pairs)
    assert not Score.objects.filter(metric_config=exiting).exists()  # not computed, not failed: dropped
    log = worker.log()
    assert "WorkerLostError" not in log
    assert "test_exiting is not in this worker's PARAEVAL_METRICS; 4 queued scores dropped" in log


@pytest.mark.django_db
def test_the_sweep_drops_the_markers_of_a_metric_taken_out(settings):
    settings.PARAEVAL_METRICS = ["lev", "wer"]
    configs.forget_enabled()
    pair = make_pair(make_campaign())
    lev, wer = (config.id for config in configs.enabled())
    QueuedScore.objects.bulk_create(
        [QueuedScore(pair_id=pair.pk, config_id=lev), QueuedScore(pair_id=pair.pk, config_id=wer)]
    )
    settings.PARAEVAL_METRICS = ["lev"]
    configs.forget_enabled()
    dispatch.queue_sweep()
    assert not QueuedScore.objects.filter(config_id=wer).exists()


@pytest.mark.django_db
def test_each_message_carries_the_hard_time_limit_of_its_metrics(settings):
    settings.PARAEVAL_METRICS = ["lev", "wer", "bleu"]
    settings.PARAEVAL_METRIC_TIME_LIMIT = 100
    settings.PARAEVAL_METRIC_TIME_LIMITS = {"wer": 7}
    configs.forget_enabled()
    pair = make_pair(make_campaign())
    (task,) = dispatch.missing_tasks([pair.pk])
    assert len(task.config_ids) == 3
    assert task.time_limit == 100 + 7 + 100 + limits.TASK_GRACE_SECONDS
    assert task.message().time_limit == task.time_limit


class Stubborn(Metric):
    """Sleeps, and swallows every ``Exception`` it meets while sleeping (as careless code does)."""

    name: ClassVar[str] = "stubborn"

    def _score(self, pairs: list[Pair]) -> list[float]:
        for _ in range(100):
            with contextlib.suppress(Exception):  # the careless part, on purpose
                time.sleep(0.5)
        return [0.0] * len(pairs)


def test_the_deadline_interrupts_a_metric_that_swallows_exceptions():
    started = time.monotonic()
    outcomes = runner.compute(Stubborn(), [("a b", "a c"), ("d", "e")], time_limit=1)
    assert time.monotonic() - started < 10
    assert [(outcome.value, outcome.error) for outcome in outcomes] == [
        (None, "metric stubborn exceeded its time limit of 1 s")
    ] * 2
    # Disarmed afterwards: nothing fires later in this process.
    time.sleep(1.5)


@pytest.mark.django_db
def test_a_start_that_never_ended_is_a_death_and_an_error_the_process_survives_is_not(settings):
    settings.PARAEVAL_METRICS = ["lev"]
    settings.PARAEVAL_METRIC_CRASH_BUDGET = 2
    configs.forget_enabled()
    pair = make_pair(make_campaign())
    config = configs.ensure_metric_config(Levenshtein())
    failing_store = mock.patch.object(runner, "store_outcomes", side_effect=OperationalError("database gone"))
    with failing_store, pytest.raises(OperationalError):
        runner.score_missing(Levenshtein(), pair_ids=[pair.pk])
    assert not ScoreAttempt.objects.exists()  # retried by the task: no death counted
    assert attempts.begin(config.pk, [pair.pk]) == {}
    assert attempts.begin(config.pk, [pair.pk]) == {pair.pk: 1}  # the first start never ended
    summary = runner.score_missing(Levenshtein(), pair_ids=[pair.pk])  # two deaths: the budget
    assert (summary.scored, summary.failed) == (0, 1)
    score = Score.objects.get(pair=pair)
    assert (score.status, score.value, score.error) == (
        "failed",
        None,
        "the worker died 2 times while computing metric lev",
    )
    assert not ScoreAttempt.objects.exists()
