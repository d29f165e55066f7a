"""The scoring runner: what is missing gets scored once, failures are stored with their reason."""

from __future__ import annotations

import os
import threading
import time

import pytest
from django.db import connection

from annotate.models import Pair
from scoring.metrics.base import ScoreOutcome
from scoring.metrics.lexical import Levenshtein, WordEditRate
from scoring.models import MetricConfig, Score, WorkerHeartbeat
from scoring.pipeline import configs, runner, worker
from tests.builders import make_campaign, make_metric_config, make_pair, make_score, make_training_pairs
from tests.worker_metrics import NeverAvailableMetric, PickyMetric

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign_pairs() -> tuple[object, list[Pair]]:
    campaign = make_campaign()
    make_training_pairs(campaign)
    pairs = [
        make_pair(campaign, source=f"The cat {i} is alive.", hypothesis=f"The cat {i} was alive.") for i in range(7)
    ]
    return campaign, pairs


def scores_of(metric_config: MetricConfig) -> dict[int, Score]:
    return {score.pair_id: score for score in Score.objects.filter(metric_config=metric_config)}


def test_scores_every_campaign_pair_once_and_never_the_training_pairs(campaign_pairs) -> None:
    campaign, pairs = campaign_pairs
    summary = runner.score_missing(Levenshtein(), campaign=campaign, batch_size=3)

    config = MetricConfig.objects.get(config_hash=Levenshtein().config_hash)
    stored = scores_of(config)
    assert set(stored) == {pair.pk for pair in pairs}
    assert all(score.status == Score.Status.DONE and score.error == "" for score in stored.values())
    # "The cat 0 is alive." -> "The cat 0 was alive.": 2 edits over 20 characters.
    assert stored[pairs[0].pk].value == pytest.approx(2 / 20)
    assert (summary.total, summary.scored, summary.failed, summary.batches) == (7, 7, 0, 3)
    assert not Score.objects.filter(pair__is_training=True).exists()


def test_running_again_does_nothing_and_keeps_existing_scores(campaign_pairs) -> None:
    campaign, pairs = campaign_pairs
    config = configs.ensure_metric_config(Levenshtein())
    make_score(pairs[0], config, value=42.0)  # already there: must not be recomputed or doubled

    first = runner.score_missing(Levenshtein(), campaign=campaign)
    second = runner.score_missing(Levenshtein(), campaign=campaign)

    assert (first.total, first.scored) == (6, 6)
    assert (second.total, second.scored, second.batches) == (0, 0, 0)
    assert Score.objects.filter(metric_config=config).count() == 7
    assert Score.objects.get(metric_config=config, pair=pairs[0]).value == 42.0


def test_an_interrupted_run_keeps_its_batches_and_resumes(campaign_pairs) -> None:
    campaign, pairs = campaign_pairs

    def interrupt_after_first_batch(summary: runner.RunSummary) -> None:
        if summary.batches == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        runner.score_missing(WordEditRate(), campaign=campaign, batch_size=3, progress=interrupt_after_first_batch)
    config = MetricConfig.objects.get(config_hash=WordEditRate().config_hash)
    assert set(scores_of(config)) == {pair.pk for pair in pairs[:3]}

    resumed = runner.score_missing(WordEditRate(), campaign=campaign, batch_size=3)
    assert (resumed.total, resumed.scored) == (4, 4)
    assert set(scores_of(config)) == {pair.pk for pair in pairs}


def test_scope_by_pair_ids_and_campaign(campaign_pairs) -> None:
    campaign, pairs = campaign_pairs
    other = make_pair()  # another campaign
    summary = runner.score_missing(Levenshtein(), pair_ids=[pairs[1].pk, pairs[2].pk, other.pk], campaign=campaign)
    assert summary.total == 2
    assert set(Score.objects.values_list("pair_id", flat=True)) == {pairs[1].pk, pairs[2].pk}
    with pytest.raises(ValueError, match="pair_ids or a campaign"):
        runner.score_missing(Levenshtein())


def test_a_pair_the_metric_refuses_is_stored_as_failed_with_its_error(campaign_pairs) -> None:
    campaign, pairs = campaign_pairs
    bad = make_pair(campaign, source="Please FAIL here.", hypothesis="Fine.")
    summary = runner.score_missing(PickyMetric(), campaign=campaign)

    config = MetricConfig.objects.get(metric="test_picky")
    stored = scores_of(config)
    assert stored[bad.pk].status == Score.Status.FAILED
    assert stored[bad.pk].value is None
    assert stored[bad.pk].error == "ValueError: cannot score 'Please FAIL here.'"
    assert all(stored[pair.pk].status == Score.Status.DONE for pair in pairs)
    assert (summary.scored, summary.failed) == (7, 1)
    assert summary.errors == ["ValueError: cannot score 'Please FAIL here.'"]


def test_an_unavailable_metric_fails_the_batch_with_the_reason(campaign_pairs) -> None:
    campaign, pairs = campaign_pairs
    summary = runner.score_missing(NeverAvailableMetric(), campaign=campaign)
    failed = Score.objects.filter(metric_config__metric="test_unavailable")
    assert failed.count() == len(pairs) == summary.failed
    assert set(failed.values_list("error", flat=True)) == {
        "metric unavailable: model file /nowhere/model.gguf is missing"
    }


def test_store_outcomes_never_doubles_a_score(campaign_pairs) -> None:
    _, pairs = campaign_pairs
    config = configs.ensure_metric_config(Levenshtein())
    make_score(pairs[0], config, value=0.25)
    stored = runner.store_outcomes(config, [pairs[0].pk, pairs[1].pk], [ScoreOutcome(0.9), ScoreOutcome(0.5)])
    assert (stored.scored, stored.skipped) == (1, 1)
    assert Score.objects.get(pair=pairs[0], metric_config=config).value == 0.25
    with pytest.raises(ValueError, match="2 outcomes for 1 pairs"):
        runner.store_outcomes(config, [pairs[0].pk], [ScoreOutcome(1.0), ScoreOutcome(2.0)])


class DeletesAPairWhileScoring(Levenshtein):
    """Levenshtein whose computation ends with a pair deleted (staff removing it meanwhile)."""

    def __init__(self, doomed: int) -> None:
        super().__init__()
        self.doomed = doomed

    def score_many(self, pairs: list[tuple[str, str]]) -> list[ScoreOutcome]:
        outcomes = super().score_many(pairs)
        Pair.objects.filter(pk=self.doomed).delete()  # committed at once: no transaction here
        return outcomes


@pytest.mark.django_db(transaction=True)
def test_a_pair_deleted_between_its_scoring_and_the_store_is_skipped_the_others_stored(campaign_pairs) -> None:
    # Real commits (the foreign key is checked when the store commits): one deleted pair must
    # not take the batch's other scores down with it.
    campaign, pairs = campaign_pairs
    doomed = pairs[1].pk
    summary = runner.score_missing(DeletesAPairWhileScoring(doomed), campaign=campaign, batch_size=10)

    config = MetricConfig.objects.get(config_hash=Levenshtein().config_hash)
    assert set(scores_of(config)) == {pair.pk for pair in pairs} - {doomed}
    assert (summary.total, summary.scored, summary.failed, summary.already_scored) == (7, 6, 0, 1)


def test_ensure_metric_config_stores_the_description_and_follows_the_code() -> None:
    metric = Levenshtein()
    config = configs.ensure_metric_config(metric)
    assert (config.metric, config.config, config.label, config.queue) == ("lev", metric.config(), "lev", "cpu")
    assert config.higher_is_closer is False
    assert config.natural_threshold is None
    MetricConfig.objects.filter(pk=config.pk).update(label="old label", queue="llm")
    again = configs.ensure_metric_config(metric)
    assert again.pk == config.pk
    assert (again.label, again.queue) == ("lev", "cpu")
    assert MetricConfig.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_ensure_metric_config_is_race_safe(require_postgres) -> None:
    barrier = threading.Barrier(6)
    ids: list[int] = []
    errors: list[BaseException] = []

    def create() -> None:
        try:
            barrier.wait()
            ids.append(configs.ensure_metric_config(WordEditRate()).pk)
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=create) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(set(ids)) == 1
    assert MetricConfig.objects.filter(metric="wer").count() == 1


def test_a_worker_with_other_settings_fails_the_batch_instead_of_mixing_configurations(campaign_pairs) -> None:
    _, pairs = campaign_pairs
    foreign = make_metric_config("lev", config={"unit": "byte"}, label="lev[other settings]")
    summary = runner.score_config_batch(foreign.pk, [pairs[0].pk])
    assert summary is not None and summary.failed == 1
    score = Score.objects.get(metric_config=foreign)
    assert score.status == Score.Status.FAILED
    assert score.error.startswith("configuration mismatch: this worker's settings give lev")
    assert not MetricConfig.objects.filter(config_hash=Levenshtein().config_hash, scores__isnull=False).exists()


def test_score_config_batch_scores_with_the_stored_configuration(campaign_pairs) -> None:
    _, pairs = campaign_pairs
    config = configs.ensure_metric_config(Levenshtein())
    summary = runner.score_config_batch(config.pk, [pair.pk for pair in pairs[:2]], attempts=3)
    assert summary is not None and summary.scored == 2
    assert set(Score.objects.values_list("attempts", flat=True)) == {3}
    assert runner.score_config_batch(10**9, [pairs[0].pk]) is None  # configuration deleted meanwhile


def test_unknown_or_unbuildable_metrics_are_reported_not_raised(settings) -> None:
    settings.PARAEVAL_METRICS = ["lev", "no_such_metric", "wer", "lev"]
    metrics, unavailable = configs.build_enabled()
    assert [metric.name for metric in metrics] == ["lev", "wer"]
    assert [item.name for item in unavailable] == ["no_such_metric"]
    assert "unknown metric 'no_such_metric'" in unavailable[0].reason


def test_plugin_metrics_are_built_by_name(settings) -> None:
    settings.PARAEVAL_METRIC_PLUGINS = ["tests.worker_metrics"]
    assert configs.build("test_picky").name == "test_picky"
    assert configs.canonical_name("test_slow") == "test_slow"
    assert "test_unavailable" in configs.known_metric_names()
    settings.PARAEVAL_METRIC_PLUGINS = ["tests.no_such_module"]
    with pytest.raises(Exception, match=r"cannot import 'tests\.no_such_module'"):
        configs.build("test_picky")


def test_warm_up_loads_only_the_metrics_of_the_worker_queues(settings) -> None:
    settings.PARAEVAL_METRICS = ["lev", "wer", "test_slow", "test_unavailable"]
    settings.PARAEVAL_METRIC_PLUGINS = ["tests.worker_metrics"]
    assert worker.warm_up(["cpu"]) == ["lev", "wer"]
    # Plug-ins (test_slow, test_unavailable) are never warmed up: one that ends its process there
    # would stop the pool from starting; they load on their first task, under its limits.
    assert worker.warm_up(["llm"]) == []
    assert worker.warm_up(["cpu", "llm"]) == ["lev", "wer"]


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_records_the_worker_and_forgets_it_on_shutdown() -> None:
    heartbeat = worker.Heartbeat("tester@node", ["cpu", "llm"], interval=0.1)
    heartbeat.start()
    deadline = time.monotonic() + 10
    while not WorkerHeartbeat.objects.filter(hostname="tester@node").exists():
        assert time.monotonic() < deadline, "no heartbeat recorded"
        time.sleep(0.05)
    first = WorkerHeartbeat.objects.get(hostname="tester@node")
    assert (first.queues, first.pid) == ("cpu,llm", os.getpid())
    time.sleep(0.3)
    assert WorkerHeartbeat.objects.get(hostname="tester@node").last_seen > first.last_seen
    heartbeat.stop()
    assert not WorkerHeartbeat.objects.filter(hostname="tester@node").exists()
