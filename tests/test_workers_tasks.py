"""A worker knows every task the project sends: each ``tasks`` module is found by the Celery app's
autodiscovery (``paraeval/celery.py``), not by a chance import elsewhere."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workers_support import WorkerProcess, wait_for

ROOT = Path(__file__).resolve().parent.parent
TASK_NAME = re.compile(r"\bshared_task\([^)]*name=\"([^\"]+)\"", re.S)


def declared_tasks() -> set[str]:
    names: set[str] = set()
    for package in ("paraeval", "annotate", "scoring", "staff", "api"):
        for path in (ROOT / package).rglob("*.py"):
            names.update(TASK_NAME.findall(path.read_text()))
    return names


def test_a_fresh_worker_process_registers_every_declared_task(tmp_path: Path) -> None:
    declared = declared_tasks()
    assert {
        "scoring.pipeline.tasks.score_pairs",
        "scoring.generation.tasks.generate_candidates",
        "scoring.tuning.tasks.tune_judge",
        "scoring.probes.tasks.build_probe_set",
    } <= declared
    # What a worker does at start: set Django up, then import the default modules (autodiscovery).
    code = (
        "import django; django.setup()\n"
        "from paraeval.celery import app\n"
        "app.loader.import_default_modules()\n"
        "print('\\n'.join(sorted(f'{name} {task.__module__}' for name, task in app.tasks.items()\n"
        "    if not name.startswith('celery.'))))\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "PARAEVAL_DATA_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    modules = dict(line.split() for line in result.stdout.splitlines())
    registered = set(modules)
    assert declared <= registered, f"declared but not registered by a worker: {sorted(declared - registered)}"
    # Each task is named after the module that defines it; the former names (one release) aside.
    misnamed = {name: module for name, module in modules.items() if name.rsplit(".", 1)[0] != module}
    assert set(misnamed) == FORMER_NAMES


# The names before the tasks followed their modules, still registered for one release.
FORMER_NAMES = {
    "scoring.tasks.score_batch",
    "scoring.tasks.score_pairs",
    "scoring.tasks.sweep",
    "scoring.tasks.generate_candidates",
    "scoring.analysis_tasks.compute_meta_evaluation",
    "scoring.analysis_tasks.compute_report_intervals",
}


def test_each_former_name_runs_the_same_function_with_the_same_options() -> None:
    from scoring.generation import tasks as generation_tasks
    from scoring.pipeline import tasks as pipeline_tasks
    from scoring.reports import tasks as report_tasks

    pairs = {
        "scoring.tasks.score_batch": pipeline_tasks.score_batch,
        "scoring.tasks.score_pairs": pipeline_tasks.score_pairs,
        "scoring.tasks.sweep": pipeline_tasks.sweep,
        "scoring.tasks.generate_candidates": generation_tasks.generate_candidates,
        "scoring.analysis_tasks.compute_meta_evaluation": report_tasks.compute_meta_evaluation,
        "scoring.analysis_tasks.compute_report_intervals": report_tasks.compute_report_intervals,
    }
    former = {**pipeline_tasks.FORMER_NAMES, **generation_tasks.FORMER_NAMES, **report_tasks.FORMER_NAMES}
    assert set(former) == set(pairs) == FORMER_NAMES
    for name, current in pairs.items():
        old = former[name]
        assert old.name == name and current.name != name
        assert _function(old) is _function(current)  # the same function
        for option in ("acks_late", "ignore_result", "reject_on_worker_lost", "max_retries", "autoretry_for", "queue"):
            assert getattr(old, option, None) == getattr(current, option, None), (name, option)


def _function(task: object) -> object:
    wrapped = task.__wrapped__  # type: ignore[attr-defined]
    return getattr(wrapped, "__func__", wrapped)  # a bound task wraps a method


SETUP = """
from annotate.models import Campaign, Pair
from scoring.pipeline.configs import ensure_metric_configs
from scoring.metrics.registry import enabled_metrics
campaign = Campaign.objects.create(slug="former", name="Former names")
# Stored without announcing them: only the old-named message below asks for their scores.
pairs = Pair.objects.bulk_create([Pair(campaign=campaign, source=f"Old {i}.", hypothesis="Name.") for i in range(3)])
configs = ensure_metric_configs(enabled_metrics())
from paraeval import broker
broker.send([broker.TaskMessage("scoring.tasks.score_pairs", ([c.pk for c in configs], [p.pk for p in pairs]), "cpu")])
"""


@pytest.mark.worker
def test_a_message_queued_under_a_former_name_is_still_run_by_a_worker(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="paraeval.settings",
        SECRET_KEY="former-names-key",
        PARAEVAL_DATA_DIR=str(data),
        PARAEVAL_METRICS="lev,wer",
        PYTHONUNBUFFERED="1",
    )
    for command in (["migrate", "--noinput", "-v", "0"], ["shell", "-c", SETUP]):
        result = subprocess.run(
            [sys.executable, "manage.py", *command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, result.stderr[-3000:]
    database = data / "paraeval.sqlite3"
    worker = WorkerProcess(env, tmp_path, name="former").start()
    try:
        wait_for(
            lambda: _count(database, "SELECT COUNT(*) FROM scoring_score WHERE status = 'done'") == 3 * 2,
            timeout=90,
            what=f"the scores asked for under the former name\n{worker.log()[-3000:]}",
        )
    finally:
        worker.stop()
    assert "scoring.tasks.score_pairs[" in worker.log()  # run under its former name


def _count(database: Path, sql: str) -> int:
    import sqlite3

    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
    try:
        return int(connection.execute(sql).fetchone()[0])
    finally:
        connection.close()
