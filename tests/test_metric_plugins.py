"""Plug in a metric: a class an installed package declares under the entry-point group
``paraeval.metrics`` is listed, chosen by spec, hashed with its package's version and computed
by a real worker on the queue it names; a plug-in that raises or miscounts fails its scores."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.core.management import call_command

from annotate.importers import import_records
from scoring.metrics.registry import InvalidSpec, build_specs
from scoring.models import MetricConfig, Score
from scoring.pipeline import configs
from tests.builders import make_campaign, make_pair
from tests.plugin_support import install_example, on_path, write_bad_plugins
from tests.workers_support import (
    WorkerProcess,
    redis_transport_options,
    shared_database_url,
    use_broker,
    wait_for,
    worker_env,
)


def jaccard(a: str, b: str, n: int = 3) -> float:
    """Written here again, independently of the plug-in: |A & B| / |A | B| of character n-grams."""
    a, b = a.lower(), b.lower()
    grams_a = {a[i : i + n] for i in range(len(a) - n + 1)} or {a}
    grams_b = {b[i : i + n] for i in range(len(b) - n + 1)} or {b}
    return len(grams_a & grams_b) / len(grams_a | grams_b)


@pytest.fixture(scope="session")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_example(tmp_path_factory.mktemp("plugin"))


@pytest.fixture
def plugins(example_site: Path, tmp_path: Path, settings) -> Iterator[dict[str, Path]]:
    bad = write_bad_plugins(tmp_path / "bad")
    settings.PARAEVAL_METRICS = ["lev"]  # a setting change forgets the cached metrics
    with _with_path(example_site, bad):
        yield {"site": example_site, "bad": bad}


@contextmanager
def _with_path(example_site: Path, bad: Path) -> Iterator[None]:
    with on_path(example_site, bad):
        configs.forget_enabled()
        yield
    configs.forget_enabled()


def test_listed_by_list_metrics(plugins):
    out = io.StringIO()
    call_command("list_metrics", "example_overlap", "--json", stdout=out)
    listed = json.loads(out.getvalue())
    assert (listed["name"], listed["queue"], listed["direction"], listed["available"]) == (
        "example_overlap",
        "example",
        "higher",
        True,
    )
    assert listed["description"] == "Jaccard overlap of character n-grams (an example plug-in)."
    out = io.StringIO()
    call_command("list_metrics", stdout=out)
    assert any(
        line.split()[:4] == ["example_overlap", "↑", "example", "example_overlap"]
        for line in out.getvalue().splitlines()
    )


def test_spec_options_and_the_package_version_make_the_configuration(plugins, tmp_path: Path):
    (three,) = build_specs("example_overlap")
    (two,) = build_specs("example_overlap[n=2]")
    package = {"name": "paraeval-example-metric", "version": "0.1.0"}
    assert three.identity() == {"n": 3, "package": package} and two.identity() == {"n": 2, "package": package}
    assert three.config_hash != two.config_hash and getattr(two, "spec", "") == "example_overlap[n=2]"
    with pytest.raises(InvalidSpec, match=r"example_overlap has no option m; it takes n"):
        build_specs("example_overlap[m=2]")
    with pytest.raises(InvalidSpec, match="the entry point's name and the class's name must be the same"):
        build_specs("test_misnamed")
    # The same class from another version of its package is another configuration.
    (old,) = build_specs("test_raising")
    newer = write_bad_plugins(tmp_path / "newer", version="0.0.2")
    with on_path(newer):
        (new,) = build_specs("test_raising")
    assert old.identity()["package"]["version"] == "0.0.1" and new.identity()["package"]["version"] == "0.0.2"
    assert old.config_hash != new.config_hash


@pytest.mark.django_db
def test_chosen_by_its_spec_in_paraeval_metrics_and_queued_on_its_queue(plugins, settings):
    from scoring.pipeline import dispatch

    settings.PARAEVAL_METRICS = ["lev", "example_overlap[n=2]"]
    configs.forget_enabled()
    campaign = make_campaign()
    pair = make_pair(campaign)
    (row,) = [config for config in configs.enabled_configs() if config.metric == "example_overlap"]
    assert (row.spec, row.queue, row.config) == (
        "example_overlap[n=2]",
        "example",
        {"n": 2, "package": {"name": "paraeval-example-metric", "version": "0.1.0"}},
    )
    tasks = dispatch.missing_tasks([pair.pk])
    assert {task.queue: tuple(task.config_ids) for task in tasks}["example"] == (row.pk,)
    assert "example" in configs.all_queues()
    out = io.StringIO()
    call_command("worker_queues", stdout=out)
    assert "example" in out.getvalue()


@pytest.mark.django_db
def test_score_pairs_command_and_failures_with_their_reason(plugins):
    campaign = make_campaign(slug="plug")
    pairs = [make_pair(campaign, source=f"The cat {i} sleeps.", hypothesis=f"A cat {i} is sleeping.") for i in range(3)]
    call_command(
        "score_pairs",
        "--campaign",
        "plug",
        "--metrics",
        "example_overlap,test_raising,test_miscounting,test_nonfinite,test_not_a_number",
        "--no-progress",
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )
    overlap = MetricConfig.objects.get(metric="example_overlap")
    assert overlap.queue == "example" and overlap.config["package"]["version"] == "0.1.0"
    values = dict(Score.objects.filter(metric_config=overlap).values_list("pair_id", "value"))
    assert values == {pair.pk: pytest.approx(jaccard(pair.source, pair.hypothesis)) for pair in pairs}
    failed = Score.objects.filter(status=Score.Status.FAILED).exclude(metric_config__metric="test_nonfinite")
    errors = dict(failed.values_list("metric_config__metric", "error").distinct())
    assert errors == {
        "test_raising": "RuntimeError: boom on purpose",
        "test_miscounting": "test_miscounting returned 2 scores for 1 pair",
        "test_not_a_number": "ValueError: could not convert string to float: 'high'",
    }
    assert failed.count() == 9
    # Non-finite values: a failed score each, with the value named; the other pairs keep theirs.
    nonfinite = Score.objects.filter(metric_config__metric="test_nonfinite").order_by("pair_id")
    assert [(score.status, score.value, score.error) for score in nonfinite] == [
        ("failed", None, "the metric returned NaN"),
        ("failed", None, "the metric returned inf"),
        ("done", 2.0, ""),
    ]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_computes_the_plugin_on_its_queue(example_site, tmp_path, settings, redis_url, redis_db):
    metrics = ["example_overlap", "test_raising", "test_miscounting", "test_nonfinite", "test_not_a_number"]
    bad = write_bad_plugins(tmp_path / "bad")
    settings.PARAEVAL_METRICS = metrics
    env = worker_env(
        DATABASE_URL=shared_database_url(),
        REDIS_URL=redis_url,
        PARAEVAL_METRICS=",".join(metrics),
        PARAEVAL_HEARTBEAT_SECONDS="1",
        DB_CONN_MAX_AGE="0",
        PYTHONPATH=os.pathsep.join([str(example_site), str(bad), os.environ.get("PYTHONPATH", "")]),
    )
    with _with_path(example_site, bad):
        assert "example" in configs.all_queues()
        with use_broker(redis_url, redis_transport_options(30)):
            worker = WorkerProcess(env, tmp_path, name="plugin", queues="example").start()
            try:
                campaign = make_campaign(slug="plugin-worker")
                records = [
                    {"id": f"r{i}", "source": f"The dog {i} runs.", "hypothesis": f"Dog {i} is running."}
                    for i in range(12)
                ]
                import_records(campaign, records)  # queues the scores after its commit
                pairs = list(campaign.pairs.order_by("id"))
                expected = len(pairs) * len(metrics)
                wait_for(
                    lambda: Score.objects.filter(pair__campaign=campaign).count() == expected,
                    timeout=90,
                    what=f"the plug-in's scores\n{worker.log()[-3000:]}",
                )
                assert worker.process is not None and worker.process.poll() is None  # still alive
            finally:
                worker.stop()
    overlap = MetricConfig.objects.get(metric="example_overlap")
    values = dict(Score.objects.filter(metric_config=overlap, status=Score.Status.DONE).values_list("pair_id", "value"))
    assert values == {pair.pk: pytest.approx(jaccard(pair.source, pair.hypothesis)) for pair in pairs}
    failed = Score.objects.filter(status=Score.Status.FAILED)
    assert set(failed.values_list("metric_config__metric", "error")) == {
        ("test_raising", "RuntimeError: boom on purpose"),
        ("test_miscounting", "test_miscounting returned 2 scores for 1 pair"),
        ("test_not_a_number", "ValueError: could not convert string to float: 'high'"),
        ("test_nonfinite", "the metric returned NaN"),
        ("test_nonfinite", "the metric returned inf"),
    }
    assert failed.count() == 3 * len(pairs) + 8  # the pairs 0, 3, 6, 9 (NaN) and 1, 4, 7, 10 (inf)
    kept = Score.objects.filter(metric_config__metric="test_nonfinite", status=Score.Status.DONE)
    assert sorted(kept.values_list("value", flat=True)) == [2.0, 5.0, 8.0, 11.0]
