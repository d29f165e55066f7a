"""Helpers of the worker tests: real Celery worker processes, brokers, waiting, judging over HTTP."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

import kombu.pools
import pytest
from django.db import connection
from django.test import Client

from paraeval import broker
from paraeval.celery import app as celery_app

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


def shared_database_url() -> str:
    """The URL of the database this test uses, for a worker process to share it.

    pytest-django's SQLite test database lives in memory, out of another process's reach:
    worker tests need PostgreSQL (the embedded-broker test uses its own SQLite file instead).
    """
    if connection.vendor != "postgresql":
        pytest.skip("a worker process shares the test database only on PostgreSQL: set DATABASE_URL")
    settings = connection.settings_dict
    auth = quote(settings["USER"] or "postgres")
    if settings.get("PASSWORD"):
        auth += ":" + quote(settings["PASSWORD"])
    return f"postgres://{auth}@{settings.get('HOST') or '127.0.0.1'}:{settings.get('PORT') or 5432}/{settings['NAME']}"


def redis_transport_options(visibility_timeout: int) -> dict[str, object]:
    return {
        "visibility_timeout": visibility_timeout,
        "unacked_restore_interval": 2,
        "unacked_restore_throttle": 1,
        "socket_connect_timeout": 2.0,
        "socket_timeout": 15.0,
    }


def _reset_pools() -> None:
    # kombu keeps pools per connection in a global registry: clear it, or the closed pool of
    # an equal URL would come back.
    kombu.pools.reset()
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@contextmanager
def use_broker(url: str, transport_options: dict[str, object]) -> Iterator[None]:
    """Point this process's Celery app (what the web side sends with) at another broker."""
    conf = celery_app.conf
    saved = (conf.broker_url, conf.broker_transport_options)
    conf.broker_url = url
    conf.broker_transport_options = transport_options
    _reset_pools()
    broker.gate.reset()
    try:
        yield
    finally:
        conf.broker_url, conf.broker_transport_options = saved
        _reset_pools()
        broker.gate.reset()


def wait_for(predicate: Callable[[], T], *, timeout: float, interval: float = 0.25, what: str = "condition") -> T:
    """Poll ``predicate`` until it returns something truthy; fail with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


class WorkerProcess:
    """A real ``celery -A paraeval worker`` subprocess in its own process group."""

    def __init__(
        self,
        env: dict[str, str],
        log_dir: Path,
        *,
        name: str = "worker",
        queues: str = "llm,cpu",
        beat: bool = False,
        pool: str = "prefork",
    ) -> None:
        self.hostname = f"{name}-{uuid.uuid4().hex[:8]}@h5test"
        self.log_path = log_dir / f"{self.hostname.split('@')[0]}.log"
        self.command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "paraeval",
            "worker",
            "-Q",
            queues,
            "--concurrency",
            "1",
            "--pool",
            pool,
            "--hostname",
            self.hostname,
            "--loglevel",
            "INFO",
            "--without-mingle",
            "--without-gossip",
        ]
        if beat:
            self.command += ["--beat", "--schedule", str(log_dir / f"beat-{uuid.uuid4().hex[:8]}")]
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> WorkerProcess:
        self._log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            self.command, cwd=ROOT, env=self.env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def kill(self) -> None:
        """SIGKILL the whole worker (main process and pool children): no clean-up at all."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        """Warm shutdown (SIGTERM), then SIGKILL if it takes too long.

        Only the main process gets the SIGTERM, as under a process manager: it lets its pool
        child finish the task in hand and then ends it. A SIGTERM to the whole group would kill
        that child mid-task, which the worker reports as a ``WorkerLostError``.
        """
        if self.process is None:
            return
        if self.process.poll() is None:
            try:
                os.kill(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
            except ProcessLookupError:
                pass
        # Whatever is left of the group (a main process past its time, a stray child) goes now.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        self._log.close()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def worker_env(**overrides: str) -> dict[str, str]:
    """The environment of a worker subprocess: this process's, plus ``overrides``."""
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(overrides)
    return env


_PAIR_INPUT = re.compile(r'name="pair" value="(\d+)"')


@contextmanager
def judge_workers_env(
    settings: object, redis_url: str, models: str, metric: str = "parapluie_direct", **extra: str
) -> Iterator[dict[str, str]]:
    """The test process and its worker processes configured alike for ParaPLUIE judges
    (``PARAPLUIE_MODELS`` entries ``models``, one ``metric``), on the tests' Redis broker; the
    workers' environment is yielded (``extra``: more variables for them)."""
    from scoring.metrics.judges import parse_models

    settings.PARAPLUIE_MODELS = parse_models(models)  # type: ignore[attr-defined]
    settings.PARAEVAL_METRICS = [metric]  # type: ignore[attr-defined]
    env = worker_env(
        DATABASE_URL=shared_database_url(),
        REDIS_URL=redis_url,
        PARAEVAL_METRICS=metric,
        PARAPLUIE_MODELS=models,
        PARAEVAL_HEARTBEAT_SECONDS="1",
        DB_CONN_MAX_AGE="0",
        **extra,
    )
    with use_broker(redis_url, redis_transport_options(60)):
        yield env


def judge_through_http(client: Client, slug: str, campaign_answers: int, label: str = "same_meaning") -> list[int]:
    """Take the campaign as a volunteer over HTTP: consent, training, then ``campaign_answers`` pairs.

    Returns the ids of the campaign pairs answered (training pairs excluded).
    """
    from annotate.models import Assignment

    response = client.post(f"/c/{slug}/", {"consent": "on", "english_level": "good"})
    assert response.status_code == 302, response.content[:500]
    pair_url = response["Location"]
    token = pair_url.rstrip("/").rsplit("/", 1)[-1]
    answered: list[int] = []
    for _ in range(campaign_answers + 50):
        page = client.get(pair_url)
        if page.status_code == 302 and page["Location"].endswith(("/guidelines/", "/training-done/")):
            client.post(page["Location"])  # the guidelines step, the end-of-training page
            continue
        if page.status_code == 302:  # the end page
            break
        assert page.status_code == 200, page.content[:500]
        match = _PAIR_INPUT.search(page.content.decode())
        assert match, "the pair page has no pair input"
        item = int(match.group(1))  # the page names the pair by the volunteer's item number
        pair_id = Assignment.objects.filter(volunteer__token=token, position=item).latest("id").pair_id
        response = client.post(f"/v/{token}/answer/", {"pair": item, "label": label})
        assert response.status_code == 302, response.content[:500]
        if "/training/" not in response["Location"]:
            answered.append(pair_id)
            if len(answered) >= campaign_answers:
                break
    return answered


@contextmanager
def filesystem_broker(base: Path) -> Iterator[Path]:
    """Point this process at a filesystem broker in a fresh folder; yields its queue folder."""
    folder = base / "queue"
    for name in ("queue", "processed", "control"):
        (base / name).mkdir()
    options = {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "processed_folder": str(base / "processed"),
        "control_folder": str(base / "control"),
    }
    with use_broker("paraevalfs://", options):
        yield folder


def messages_in(folder: Path) -> list[tuple[str, str, list]]:
    """(queue, task name, args) of every message waiting in a filesystem broker folder."""
    found = []
    for path in sorted(folder.iterdir()):
        payload = json.loads(path.read_text())
        queue = path.name.split(".")[1]
        body = json.loads(base64.b64decode(payload["body"]))
        found.append((queue, payload["headers"]["task"], body[0]))
    return found


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
