"""The embedded default end to end: no server at all, SQLite and kombu's filesystem broker.

Everything runs in subprocesses on a fresh data folder, as ``scripts/run.sh`` runs it: the
import queues messages as files, a real worker with embedded beat scores them, and the sweep
finds the pairs nobody announced. Works on any machine (no PostgreSQL, no Redis).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workers_support import ROOT, WorkerProcess, wait_for

pytestmark = pytest.mark.worker

METRICS = "lev,wer,test_picky"

SETUP = """
from annotate.importers import import_records
from annotate.models import Campaign, Pair
campaign = Campaign.objects.create(slug="embedded", name="Embedded")
import_records(campaign, [{"source": f"Announced {i}.", "hypothesis": f"Said {i}."} for i in range(6)]
    + [{"source": "Please FAIL this.", "hypothesis": "It fails."}])
# Stored without announcing them: only the sweep can find these.
Pair.objects.bulk_create([Pair(campaign=campaign, source=f"Silent {i}.", hypothesis="Quiet.") for i in range(4)])
"""


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def query(database: Path, sql: str) -> list[tuple]:
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def test_the_embedded_worker_scores_through_the_filesystem_broker_with_its_sweep(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="paraeval.settings",
        SECRET_KEY="embedded-test-key",
        PARAEVAL_DATA_DIR=str(data),
        PARAEVAL_METRICS=METRICS,
        PARAEVAL_METRIC_PLUGINS="tests.worker_metrics",
        PARAEVAL_SWEEP_SECONDS="2",
        PARAEVAL_HEARTBEAT_SECONDS="1",
        PYTHONUNBUFFERED="1",
    )
    manage(env, "migrate", "--noinput", "-v", "0")
    manage(env, "shell", "-c", SETUP)

    # The import's scoring task waits as a file in the broker folder: one message for the queue
    # (3 metrics x 7 pairs, batches of 32), with its 21 outstanding markers.
    queued = sorted(path.name.split(".")[1] for path in (data / "broker" / "queue").iterdir())
    assert queued == ["cpu"]
    database = data / "paraeval.sqlite3"
    assert query(database, "SELECT COUNT(*) FROM scoring_queuedscore") == [(7 * 3,)]

    worker = WorkerProcess(env, tmp_path, name="embedded", beat=True).start()
    try:
        wait_for(
            lambda: query(database, "SELECT COUNT(*) FROM scoring_score")[0][0] == 11 * 3,
            timeout=90,
            what=f"every score on the embedded broker\n{worker.log()[-3000:]}",
        )
        heartbeat = wait_for(
            lambda: query(database, "SELECT hostname, queues FROM scoring_workerheartbeat"),
            timeout=10,
            what="the worker's heartbeat",
        )
        assert heartbeat == [(worker.hostname, "cpu,llm")]
    finally:
        worker.stop()

    failed = query(
        database,
        "SELECT p.source, s.error FROM scoring_score s JOIN annotate_pair p ON p.id = s.pair_id "
        "WHERE s.status = 'failed'",
    )
    assert failed == [("Please FAIL this.", "ValueError: cannot score 'Please FAIL this.'")]
    silent_scored = query(
        database,
        "SELECT COUNT(*) FROM scoring_score s JOIN annotate_pair p ON p.id = s.pair_id WHERE p.source LIKE 'Silent%'",
    )
    assert silent_scored == [(4 * 3,)]  # found by the sweep
    assert "scoring.pipeline.tasks.sweep" in worker.log()
    assert query(database, "SELECT COUNT(*) FROM scoring_queuedscore") == [(0,)]  # nothing outstanding
    # A clean shutdown takes the worker off the status page.
    assert query(database, "SELECT COUNT(*) FROM scoring_workerheartbeat") == [(0,)]
