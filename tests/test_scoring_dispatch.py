"""Dispatch and tasks in this process: what is missing, how it is batched, routed and sent."""

from __future__ import annotations

import time
import tracemalloc
from datetime import timedelta
from pathlib import Path
from unittest import mock

import pytest
from celery.utils.time import get_exponential_backoff_interval
from django.db import OperationalError
from django.utils import timezone

from annotate.models import Pair
from annotate.signals import announce_judgement_recorded, announce_pairs_created
from paraeval import broker
from scoring.models import MetricConfig, QueuedScore, Score
from scoring.pipeline import configs, dispatch, runner, tasks
from tests.builders import make_campaign, make_judgement, make_pair, make_score, make_training_pairs
from tests.workers_support import closed_port, messages_in, redis_transport_options, use_broker

pytestmark = pytest.mark.django_db


@pytest.fixture
def enabled(settings):
    settings.PARAEVAL_METRICS = ["lev", "wer", "test_slow"]
    settings.PARAEVAL_METRIC_PLUGINS = ["tests.worker_metrics"]
    settings.PARAEVAL_SCORING_BATCH_SIZE = 2
    return settings


def _ids(*metrics: str) -> tuple[int, ...]:
    return tuple(sorted(MetricConfig.objects.filter(metric__in=metrics).values_list("pk", flat=True)))


def test_missing_tasks_carry_the_configurations_of_a_queue_llm_queue_first(enabled) -> None:
    campaign = make_campaign()
    make_training_pairs(campaign, 2)
    pairs = [make_pair(campaign) for _ in range(3)]
    lev = configs.ensure_metric_config(configs.build("lev"))
    make_score(pairs[0], lev)

    tasks = dispatch.missing_tasks([pair.pk for pair in Pair.objects.filter(campaign=campaign)])

    ids = [pair.pk for pair in pairs]
    assert (
        [(task.queue, task.config_ids, task.pair_ids) for task in tasks]
        == [
            ("llm", _ids("test_slow"), tuple(ids[:2])),  # batches of 2 pairs
            ("llm", _ids("test_slow"), tuple(ids[2:])),
            ("cpu", _ids("lev", "wer"), tuple(ids[1:])),  # training pairs never
            ("cpu", _ids("wer"), tuple(ids[:1])),
        ]
    )


def test_an_answer_queues_one_message_per_queue_then_nothing(enabled, queue_dir: Path) -> None:
    pair = make_pair()
    first = dispatch.queue_missing([pair.pk])

    assert (first.tasks, first.sent, first.not_sent, first.scores) == (2, 2, 0, 3)
    assert sorted((queue, name, args) for queue, name, args in messages_in(queue_dir)) == [
        ("cpu", "scoring.pipeline.tasks.score_pairs", [list(_ids("lev", "wer")), [pair.pk]]),
        ("llm", "scoring.pipeline.tasks.score_pairs", [list(_ids("test_slow")), [pair.pk]]),
    ]
    assert sorted(QueuedScore.objects.values_list("config_id", "pair_id")) == [
        (config_id, pair.pk) for config_id in _ids("lev", "wer", "test_slow")
    ]
    # Another answer on the same pair: everything is queued already, nothing is sent.
    second = dispatch.queue_missing([pair.pk])
    assert (second.tasks, second.sent) == (0, 0)
    assert len(messages_in(queue_dir)) == 2


def test_an_already_scored_pair_queues_nothing(enabled, queue_dir: Path) -> None:
    pair = make_pair()
    for name in ("lev", "wer", "test_slow"):
        make_score(pair, configs.ensure_metric_config(configs.build(name)))
    result = dispatch.queue_missing([pair.pk])
    assert (result.tasks, result.sent) == (0, 0)
    assert messages_in(queue_dir) == []
    assert not QueuedScore.objects.exists()


def test_the_worker_clears_the_markers_and_a_reset_score_is_queued_again(
    enabled, queue_dir: Path, django_capture_on_commit_callbacks
) -> None:
    pair = make_pair()
    dispatch.queue_missing([pair.pk])
    tasks.score_pairs.apply(args=(list(_ids("lev", "wer")), [pair.pk])).get()

    assert sorted(QueuedScore.objects.values_list("config_id", flat=True)) == list(_ids("test_slow"))
    lev = MetricConfig.objects.get(metric="lev")
    Score.objects.filter(pair=pair, metric_config=lev).update(status=Score.Status.FAILED, value=None, error="x")
    with django_capture_on_commit_callbacks(execute=True):
        assert dispatch.retry_failed(Score.objects.all()) == 1
    assert [args for queue, _, args in messages_in(queue_dir) if queue == "cpu"][-1] == [[lev.pk], [pair.pk]]


def test_signals_queue_after_commit(enabled, queue_dir: Path, django_capture_on_commit_callbacks) -> None:
    campaign = make_campaign()
    pair = make_pair(campaign)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        announce_pairs_created([pair.pk])
        assert list(queue_dir.iterdir()) == []  # nothing before the commit
    assert len(callbacks) == 1
    assert len(messages_in(queue_dir)) == 2

    for path in queue_dir.iterdir():
        path.unlink()
    QueuedScore.objects.all().delete()
    runner.score_missing(configs.build("lev"), pair_ids=[pair.pk])
    judgement = make_judgement(pair)
    with django_capture_on_commit_callbacks(execute=True):
        announce_judgement_recorded(judgement.pk, pair.pk)
    # The pair still lacks wer and test_slow, not lev.
    assert sorted(args[0][0] for _, _, args in messages_in(queue_dir)) == sorted(_ids("wer", "test_slow"))


def test_an_unreachable_broker_is_reported_not_raised_and_not_retried_at_once(enabled) -> None:
    pair = make_pair()
    url = f"redis://127.0.0.1:{closed_port()}/0"
    with use_broker(url, redis_transport_options(60)):
        started = time.monotonic()
        first = dispatch.queue_missing([pair.pk])
        second = dispatch.queue_missing([pair.pk])
        elapsed = time.monotonic() - started
        lengths = broker.queue_lengths()

    assert (first.sent, first.not_sent) == (0, 2)
    assert "Connection refused" in (first.error or "")
    assert (second.sent, second.not_sent) == (0, 2)  # not marked queued: tried again later
    assert "not tried" in (second.error or "")  # the gate: no second connection attempt
    assert not QueuedScore.objects.exists()  # what was not sent is left to the sweep
    assert lengths.lengths is None and "Connection refused" in (lengths.error or "")
    assert elapsed < 10, "a send to an unreachable broker must not hang (hang guard, not a benchmark)"


def test_a_receiver_never_raises_into_the_view(enabled, monkeypatch) -> None:
    def broken(pair_ids):
        raise OperationalError("database went away")

    monkeypatch.setattr(dispatch, "queue_missing", broken)
    dispatch.on_judgement_recorded(sender=None, judgement_id=1, pair_id=1)  # logged, not raised


def test_the_sweep_queues_what_nobody_queued_even_behind_a_backlog(enabled, queue_dir: Path) -> None:
    old = [make_pair() for _ in range(2)]
    first = dispatch.queue_sweep()
    assert (first.sent, first.scores, first.busy_queues) == (2, 6, [])  # one task per queue
    waiting = len(messages_in(queue_dir))

    # Nothing new: a second sweep sends nothing although the queues have a backlog.
    second = dispatch.queue_sweep()
    assert (second.sent, second.busy_queues) == (0, ["cpu", "llm"])
    assert len(messages_in(queue_dir)) == waiting
    # A pair imported while the broker was down (never queued) is queued behind the backlog,
    # and answers on the old pairs add nothing.
    new = make_pair()
    assert dispatch.queue_missing([pair.pk for pair in old]).sent == 0
    third = dispatch.queue_sweep()
    assert (third.sent, third.scores) == (2, 3)
    assert sorted(args[1] for _, _, args in messages_in(queue_dir))[-2:] == [[new.pk], [new.pk]]


def test_the_sweep_resends_stale_markers_once_the_queue_is_idle(enabled, queue_dir: Path) -> None:
    pair = make_pair()
    dispatch.queue_missing([pair.pk])
    for path in queue_dir.iterdir():
        path.unlink()  # the messages were lost (a worker killed on the embedded broker)

    soon = dispatch.queue_sweep()  # markers younger than a sweep period: maybe still running
    assert soon.sent == 0
    later = dispatch.queue_sweep(now=timezone.now() + timedelta(seconds=enabled.PARAEVAL_SWEEP_SECONDS + 1))
    assert (later.sent, later.scores) == (2, 3)
    assert QueuedScore.objects.count() == 3


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
    settings.PARAEVAL_SCORING_MAX_RETRIES = 4
    for task in (tasks.score_batch, tasks.score_pairs):
        # Celery's own back-off: factor 5 s doubled each retry, full jitter, capped.
        assert (task.retry_backoff, task.retry_jitter, task.retry_backoff_max) == (5, True, 60)
        assert task.max_retries == 4
        assert task.autoretry_for == tasks.TRANSIENT_ERRORS
        for retries in range(10):
            delay = get_exponential_backoff_interval(
                factor=task.retry_backoff, retries=retries, maximum=task.retry_backoff_max, full_jitter=True
            )
            assert 0 <= delay <= min(60, 5 * 2**retries)


def test_an_llm_task_takes_along_the_pairs_queued_behind_it(enabled, queue_dir: Path) -> None:
    enabled.PARAEVAL_SCORING_TAKE_ALONG = 3
    pairs = [make_pair() for _ in range(4)]
    for pair in pairs:  # four answers, four llm messages of one pair each
        dispatch.queue_missing([pair.pk])
    llm = [args for queue, _, args in messages_in(queue_dir) if queue == "llm"]
    assert [pair_ids for _, pair_ids in llm] == [[pair.pk] for pair in pairs]

    first = tasks.score_pairs.apply(args=tuple(llm[0])).get()
    # Its own pair and the next two queued ones, in one batch.
    assert (first[0]["metric"], first[0]["total"], first[0]["scored"], first[0]["batches"]) == ("test_slow", 3, 3, 2)
    slow = MetricConfig.objects.get(metric="test_slow")
    assert sorted(Score.objects.filter(metric_config=slow).values_list("pair_id", flat=True)) == [
        pair.pk for pair in pairs[:3]
    ]
    assert list(QueuedScore.objects.filter(config_id=slow.pk).values_list("pair_id", flat=True)) == [pairs[3].pk]
    # The second task finds its own pair done and takes the last one along; the others find nothing.
    second = tasks.score_pairs.apply(args=tuple(llm[1])).get()
    assert (second[0]["total"], second[0]["scored"]) == (1, 1)
    assert Score.objects.filter(metric_config=slow, pair=pairs[3]).exists()
    third = tasks.score_pairs.apply(args=tuple(llm[2])).get()
    assert (third[0]["total"], third[0]["scored"]) == (0, 0)
    assert not QueuedScore.objects.filter(config_id=slow.pk).exists()


@pytest.mark.slow
def test_the_dispatch_after_a_large_import_works_in_bounded_rounds(enabled, queue_dir: Path, monkeypatch) -> None:
    """After an import commits, its pairs are queued round by round: the Python memory of the
    dispatch is that of one round, not of the whole import."""
    enabled.PARAEVAL_SCORING_BATCH_SIZE = 32
    monkeypatch.setattr(dispatch, "DISPATCH_ROUND", 500)
    campaign = make_campaign()
    Pair.objects.bulk_create(
        [Pair(campaign=campaign, external_id=f"b{n}", source=f"s {n}", hypothesis=f"h {n}") for n in range(12000)]
    )
    ids = list(Pair.objects.filter(campaign=campaign).values_list("pk", flat=True))
    peaks = []
    for chunk in (ids[:1000], ids[1000:]):
        tracemalloc.start()
        result = dispatch.queue_missing(chunk)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert result.sent == result.tasks and result.scores == 3 * len(chunk)
    # Eleven times the pairs, about the same peak (measured: 1.0 MB for 11,000 pairs; one
    # round for the whole import took 9.2 MB).
    assert peaks[1] < 2 * peaks[0], peaks
    assert QueuedScore.objects.count() == 3 * 12000


def test_a_cpu_task_takes_along_a_whole_batch_so_the_cheap_metrics_keep_up(enabled, queue_dir: Path) -> None:
    """One worker serves every queue in turn: if a cpu task scored only its own pair, the cheap
    metrics would fall behind the model queues (which take pairs along) and few pairs would ever
    have all their scores."""
    enabled.PARAEVAL_SCORING_TAKE_ALONG = 2
    enabled.PARAEVAL_SCORING_BATCH_SIZE = 4
    pairs = [make_pair() for _ in range(6)]
    for pair in pairs:  # six answers, six cpu messages of one pair each
        dispatch.queue_missing([pair.pk])
    cpu = [args for queue, _, args in messages_in(queue_dir) if queue == "cpu"]
    assert [pair_ids for _, pair_ids in cpu] == [[pair.pk] for pair in pairs]

    first = tasks.score_pairs.apply(args=tuple(cpu[0])).get()
    # lev and wer: each its own pair and the next three queued ones (the batch size, not 2).
    assert [(summary["metric"], summary["total"], summary["scored"]) for summary in first] == [
        ("lev", 4, 4),
        ("wer", 4, 4),
    ]
    for metric in ("lev", "wer"):
        scored = Score.objects.filter(metric_config__metric=metric).values_list("pair_id", flat=True)
        assert sorted(scored) == [pair.pk for pair in pairs[:4]]
    # The model queue keeps its own, smaller take-along.
    llm = [args for queue, _, args in messages_in(queue_dir) if queue == "llm"]
    slow = tasks.score_pairs.apply(args=tuple(llm[0])).get()
    assert (slow[0]["metric"], slow[0]["total"]) == ("test_slow", 2)


def test_take_along_zero_turns_it_off_on_every_queue(settings) -> None:
    settings.PARAEVAL_SCORING_TAKE_ALONG = 0
    settings.PARAEVAL_SCORING_BATCH_SIZE = 32
    assert [runner.take_along_size(queue) for queue in ("cpu", "llm", "llm.smollm2")] == [0, 0, 0]
    settings.PARAEVAL_SCORING_TAKE_ALONG = 8
    assert [runner.take_along_size(queue) for queue in ("cpu", "llm", "llm.smollm2")] == [32, 8, 8]


def test_a_score_message_carries_the_argument_text_celery_would_write() -> None:
    """The scores' messages bring their own ``argsrepr`` (cheaper to build): the same text as
    Celery's, cut at Celery's limit; any other arguments are left to Celery."""
    from celery.utils.saferepr import saferepr

    short = ([3, 1, 2], [40, 41])
    assert broker.args_repr(short) == saferepr(short, broker.ARGS_REPR_LIMIT) == "([3, 1, 2], [40, 41])"
    assert broker.args_repr((7,)) == "(7,)"
    long = ([1, 2], list(range(100_000, 100_400)))
    text = broker.args_repr(long)
    assert text is not None and len(text) == broker.ARGS_REPR_LIMIT
    assert text.startswith("([1, 2], [100000, 100001, ") and text.endswith("...")
    assert broker.args_repr(("a report", {"seed": 1})) is None
    assert broker.args_repr(([1, "2"],)) is None
    assert broker.args_repr(([True],)) is None  # bool is not int here: Celery writes it
