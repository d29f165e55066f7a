"""The README's main command, ``scripts/run.sh``, as a new user runs it on the embedded defaults.

It sets up (a no-op here but for the check), migrates a fresh SQLite folder, loads the demo
campaign, creates the staff account, starts the worker and gunicorn and prints the links; the
demo pairs get their scores through the filesystem broker; Ctrl+C stops everything.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.workers_support import ROOT, closed_port, wait_for

pytestmark = pytest.mark.worker

METRICS = ("lev", "wer")  # cheap ones: the orchestration is under test, the models are tested elsewhere


def count(database: Path, sql: str) -> int:
    if not database.exists():
        return 0
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
    try:
        return connection.execute(sql).fetchone()[0]
    except sqlite3.OperationalError:  # tables not migrated yet
        return 0
    finally:
        connection.close()


def rows_of(database: Path, sql: str) -> list[tuple]:
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def processes_mentioning(text: str) -> list[str]:
    listing = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout  # full lines
    return [line for line in listing.splitlines() if text in line and "ps -eo" not in line]


def stop_on_ctrl_c(run: subprocess.Popen[bytes], data: Path, output_path: Path, patience: float = 60) -> None:
    """Ctrl+C in run.sh's terminal (its process group); again after ``patience`` seconds (Celery's
    cold shutdown) when a worker is still finishing a task; then the server and workers are gone."""
    os.killpg(run.pid, signal.SIGINT)
    try:
        run.wait(timeout=patience)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGINT)
        run.wait(timeout=60)
    assert "[run] stopping the server and the workers" in output_path.read_text()
    wait_for(
        lambda: not (processes_mentioning(str(data)) or processes_mentioning(f"-{run.pid}@")),
        timeout=30,
        what="the server and workers to exit",
    )


def kill_what_is_left(run: subprocess.Popen[bytes], data: Path) -> None:
    """After a failure: nothing of run.sh may outlive the test."""
    if run.poll() is None:
        os.killpg(run.pid, signal.SIGKILL)
    for line in processes_mentioning(str(data)):
        os.kill(int(line.split()[0]), signal.SIGKILL)


def test_run_script_serves_the_demo_campaign_scores_it_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    data = tmp_path / "data"
    port = closed_port()
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL", "SECRET_KEY"}}
    env.update(
        PARAEVAL_DATA_DIR=str(data),
        PORT=str(port),
        PARAEVAL_METRICS=",".join(METRICS),
        PARAEVAL_SWEEP_SECONDS="5",
        NLTK_DATA=os.environ.get("NLTK_DATA", str(ROOT / "data" / "nltk_data")),
    )
    env.pop("DJANGO_SETTINGS_MODULE", None)
    if sys.prefix != sys.base_prefix:  # the virtual environment running these tests
        env["PARAEVAL_VENV"] = sys.prefix
    output_path = tmp_path / "run.log"
    with output_path.open("wb") as output:
        run = subprocess.Popen(
            ["scripts/run.sh"], cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        volunteer_link = f"http://127.0.0.1:{port}/c/demo/"

        def volunteer_page() -> bytes | None:
            assert run.poll() is None, f"run.sh ended early:\n{output_path.read_text()[-3000:]}"
            try:
                with urllib.request.urlopen(volunteer_link, timeout=5) as response:
                    return response.read() if response.status == 200 else None
            except OSError:
                return None

        page = wait_for(volunteer_page, timeout=300, interval=1, what="the volunteer link to answer")
        assert b"consent" in page.lower()
        printed = output_path.read_text()
        for link in ("Volunteer link:   " + volunteer_link, f"Admin:            http://127.0.0.1:{port}/admin/"):
            assert link in printed
        password_file = data / "admin_password.txt"
        password = password_file.read_text().strip()
        assert password and password not in printed  # the terminal never shows the password
        assert f"Created staff account: admin (password in {password_file})" in printed
        assert f"Staff password:   in {password_file} (cat it; readable by you only)" in printed
        assert f"Staff home:       http://127.0.0.1:{port}/staff/" in printed

        database = data / "paraeval.sqlite3"
        campaign_pairs = count(database, "SELECT COUNT(*) FROM annotate_pair WHERE NOT is_training")
        assert campaign_pairs == 71, "the demo campaign is 71 pairs plus 5 training pairs"
        wait_for(
            lambda: (
                count(database, "SELECT COUNT(*) FROM scoring_score WHERE status = 'done'")
                == campaign_pairs * len(METRICS)
            ),
            timeout=180,
            interval=1,
            what=f"the demo pairs' scores\n{(data / 'logs' / 'worker.log').read_text()[-3000:]}",
        )

        # The scoring worker runs on the CPU time the pages leave (SCHED_IDLE, children included);
        # the interactive worker beside it at normal priority, so scoring never starves it.
        # Named after run.sh's own pid: <role>-<pid>@<host>.
        scoring = [int(line.split()[0]) for line in processes_mentioning(f"--hostname scoring-{run.pid}@")]
        interactive = [int(line.split()[0]) for line in processes_mentioning(f"--hostname interactive-{run.pid}@")]
        celery = scoring + interactive
        assert len(scoring) >= 2 and len(interactive) >= 2, f"each worker and its pool process: {celery}"
        assert {os.sched_getscheduler(pid) for pid in scoring} == {os.SCHED_IDLE}
        assert {os.sched_getscheduler(pid) for pid in interactive} == {os.SCHED_OTHER}
        # Two names, one per process, each with its queues (the status page counts them per queue).
        heartbeats = wait_for(
            lambda: (lambda rows: rows if len(rows) == 2 else None)(
                rows_of(database, "SELECT hostname, queues FROM scoring_workerheartbeat ORDER BY hostname")
            ),
            timeout=60,
            what="a heartbeat of each worker",
        )
        assert [(name.split("-")[0], queues.split(",")[0]) for name, queues in heartbeats] == [
            ("interactive", "interactive"),
            ("scoring", "cpu"),
        ]

        stop_on_ctrl_c(run, data, output_path)
    finally:
        kill_what_is_left(run, data)
