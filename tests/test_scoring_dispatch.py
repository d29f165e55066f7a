"""Dispatch and tasks in this process: what is missing, how it is batched, routed and sent."""

from __future__ import annotations

import time
from pathlib import Path
from unittest import mock

import pytest
from django.db import OperationalError

from annotate.signals import announce_judgement_recorded, announce_pairs_created
from scoring import broker, configs, dispatch, runner, tasks
from scoring.models import MetricConfig, Score
from tests.builders import make_campaign, make_judgement, make_pair, make_score, make_training_pairs
from tests.workers_support import closed_port, messages_in, redis_transport_options, use_broker

pytestmark = pytest.mark.django_db


@pytest.fixture
def enabled(settings):
    settings.PARAEVAL_METRICS = ["lev", "wer", "test_slow"]
    settings.PARAEVAL_METRIC_PLUGINS = ["tests.worker_metrics"]
    settings.PARAEVAL_SCORING_BATCH_SIZE = 2
    return settings


def test_missing_batches_group_pairs_per_configuration_llm_queue_first(enabled) -> None:
    campaign = make_campaign()
    make_training_pairs(campaign, 2)
    pairs = [make_pair(campaign) for _ in range(3)]
    lev = configs.ensure_metric_config(configs.build("lev"))
    make_score(pairs[0], lev)

    batches = dispatch.missing_batches([pair.pk for pair in pairs])

    ids = [pair.pk for pair in pairs]
    assert [(batch.metric, batch.queue, batch.pair_ids) for batch in batches] == [
        ("test_slow", "llm", tuple(ids[:2])),
        ("test_slow", "llm", tuple(ids[2:])),
        ("lev", "cpu", tuple(ids[1:])),
        ("wer", "cpu", tuple(ids[:2])),
        ("wer", "cpu", tuple(ids[2:])),
    ]
    # Everything, for the sweep: the same work, training pairs never included.
    assert sorted(dispatch.missing_batches(), key=lambda b: (b.metric, b.pair_ids)) == sorted(
        batches, key=lambda b: (b.metric, b.pair_ids)
    )


def test_queue_missing_sends_one_task_per_batch_to_the_right_queue(enabled, queue_dir: Path) -> None:
    campaign = make_campaign()
    pairs = [make_pair(campaign) for _ in range(3)]
    result = dispatch.queue_missing([pair.pk for pair in pairs])

    assert (result.batches, result.sent, result.not_sent, result.pairs) == (6, 6, 0, 9)
    sent = messages_in(queue_dir)
    assert {(queue, name) for queue, name, _ in sent} == {
        ("llm", "scoring.tasks.score_batch"),
        ("cpu", "scoring.tasks.score_batch"),
    }
    slow = MetricConfig.objects.get(metric="test_slow")
    # (Files sent in the same millisecond have no order: compare as sets.)
    assert sorted(args for queue, _, args in sent if queue == "llm") == [
        [slow.pk, [pairs[0].pk, pairs[1].pk]],
        [slow.pk, [pairs[2].pk]],
    ]


def test_signals_queue_after_commit(enabled, queue_dir: Path, django_capture_on_commit_callbacks) -> None:
    campaign = make_campaign()
    pair = make_pair(campaign)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        announce_pairs_created([pair.pk])
        assert list(queue_dir.iterdir()) == []  # nothing before the commit
    assert len(callbacks) == 1
    assert len(messages_in(queue_dir)) == 3

    for path in queue_dir.iterdir():
        path.unlink()
    runner.score_missing(configs.build("lev"), pair_ids=[pair.pk])
    judgement = make_judgement(pair)
    with django_capture_on_commit_callbacks(execute=True):
        announce_judgement_recorded(judgement.pk, pair.pk)
    # The pair still lacks wer and test_slow, not lev.
    assert sorted(args[0] for _, _, args in messages_in(queue_dir)) == sorted(
        MetricConfig.objects.filter(metric__in=["wer", "test_slow"]).values_list("pk", flat=True)
    )


def test_an_unreachable_broker_is_reported_not_raised_and_not_retried_at_once(enabled) -> None:
    pair = make_pair()
    url = f"redis://127.0.0.1:{closed_port()}/0"
    with use_broker(url, redis_transport_options(60)):
        started = time.monotonic()
        first = dispatch.queue_missing([pair.pk])
        second = dispatch.queue_missing([pair.pk])
        elapsed = time.monotonic() - started
        lengths = broker.queue_lengths()

    assert (first.sent, first.not_sent) == (0, 3)
    assert "Connection refused" in (first.error or "")
    assert "not tried" in (second.error or "")  # the gate: no second connection attempt
    assert lengths.lengths is None and "Connection refused" in (lengths.error or "")
    assert elapsed < 10, "a send to an unreachable broker must not hang (hang guard, not a benchmark)"


def test_a_receiver_never_raises_into_the_view(enabled, monkeypatch) -> None:
    def broken(pair_ids):
        raise OperationalError("database went away")

    monkeypatch.setattr(dispatch, "queue_missing", broken)
    dispatch.on_judgement_recorded(sender=None, judgement_id=1, pair_id=1)  # logged, not raised


def test_the_sweep_leaves_a_queue_with_a_backlog_alone(enabled, queue_dir: Path) -> None:
    for _ in range(2):
        make_pair()
    first = dispatch.queue_sweep()
    assert (first.sent, first.skipped_queues) == (3, [])  # one batch of 2 pairs per configuration
    waiting = len(list(queue_dir.iterdir()))
    second = dispatch.queue_sweep()
    assert second.skipped_queues == ["cpu", "llm"]
    assert second.sent == 0
    assert len(list(queue_dir.iterdir())) == waiting


def test_score_batch_task_scores_and_is_idempotent(enabled) -> None:
    pairs = [make_pair() for _ in range(3)]
    config = configs.ensure_metric_config(configs.build("wer"))
    ids = [pair.pk for pair in pairs]
    first = tasks.score_batch.apply(args=(config.pk, ids)).get()
    again = tasks.score_batch.apply(args=(config.pk, ids)).get()
    assert (first["scored"], again["scored"], again["total"]) == (3, 0, 0)
    assert Score.objects.filter(metric_config=config, status=Score.Status.DONE).count() == 3


def test_score_batch_retries_a_transient_error_then_succeeds(enabled) -> None:
    pair = make_pair()
    config = configs.ensure_metric_config(configs.build("lev"))
    real = runner.score_config_batch
    calls = {"n": 0}

    def flaky(config_id, pair_ids, *, attempts):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real(config_id, pair_ids, attempts=attempts)

    with mock.patch.object(runner, "score_config_batch", side_effect=flaky):
        tasks.score_batch.apply(args=(config.pk, [pair.pk]))
    score = Score.objects.get(metric_config=config, pair=pair)
    assert (score.status, score.attempts, calls["n"]) == (Score.Status.DONE, 2, 2)


def test_score_batch_gives_up_after_the_last_retry_and_stores_the_error(enabled) -> None:
    enabled.PARAEVAL_SCORING_MAX_RETRIES = 2
    pair = make_pair()
    config = configs.ensure_metric_config(configs.build("lev"))
    with mock.patch.object(runner, "score_config_batch", side_effect=OperationalError("database is down")):
        tasks.score_batch.apply(args=(config.pk, [pair.pk]))
    score = Score.objects.get(metric_config=config, pair=pair)
    assert score.status == Score.Status.FAILED
    assert score.attempts == 3
    assert score.error == "gave up after 3 attempts: OperationalError: database is down"


def test_score_batch_stores_a_non_transient_error_at_once(enabled) -> None:
    pair = make_pair()
    config = configs.ensure_metric_config(configs.build("lev"))
    with mock.patch.object(runner, "score_config_batch", side_effect=RuntimeError("boom")) as patched:
        tasks.score_batch.apply(args=(config.pk, [pair.pk]))
    assert patched.call_count == 1
    score = Score.objects.get(metric_config=config, pair=pair)
    assert (score.status, score.error) == (Score.Status.FAILED, "RuntimeError: boom")


def test_backoff_grows_and_stays_under_the_cap(settings) -> None:
    settings.PARAEVAL_SCORING_RETRY_MAX_SECONDS = 60
    for retries in range(10):
        delay = tasks.backoff_seconds(retries)
        assert 0 <= delay <= min(60, 5 * 2**retries)
