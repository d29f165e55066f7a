"""The broker is down: volunteers' answers still save at once; the sweep fills the scores in later.

A Redis server of the test's own is used, on a free port, so that "down" and "back" are the
same URL: nothing listens there while the volunteers answer, then the server starts.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.test import Client

from annotate.importers import import_records
from annotate.models import Judgement, Pair
from paraeval import broker
from scoring.models import QueuedScore, Score
from scoring.pipeline import dispatch
from tests.builders import make_campaign, make_training_pairs
from tests.workers_support import (
    WorkerProcess,
    closed_port,
    judge_through_http,
    redis_transport_options,
    shared_database_url,
    use_broker,
    wait_for,
    worker_env,
)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

METRICS = ["lev", "wer"]


@pytest.fixture
def port() -> int:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    return closed_port()


@pytest.fixture
def redis_server(port: int, tmp_path: Path) -> Iterator[callable]:
    """Start a throw-away Redis on ``port`` when called; stopped after the test."""
    processes: list[subprocess.Popen[bytes]] = []

    def start() -> str:
        process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        processes.append(process)
        url = f"redis://127.0.0.1:{port}/0"
        client = redis.Redis.from_url(url)
        wait_for(lambda: _pings(client), timeout=20, what="the test Redis server")
        return url

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=10)


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def test_answers_save_while_the_broker_is_down_and_the_sweep_catches_up(
    settings, port: int, redis_server, tmp_path: Path
) -> None:
    settings.PARAEVAL_METRICS = METRICS
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    url = f"redis://127.0.0.1:{port}/0"
    campaign = make_campaign(slug="outage", quota=4)
    make_training_pairs(campaign)

    with use_broker(url, redis_transport_options(60)):
        started = time.monotonic()
        import_records(campaign, [{"source": f"Sentence {i} here.", "hypothesis": f"Here is {i}."} for i in range(8)])
        judged = judge_through_http(Client(), "outage", 4)
        elapsed = time.monotonic() - started
        assert "Connection refused" in broker.gate.last_error  # the sends were tried, and failed

    # Everything the volunteer did is stored, and nothing hung on the dead broker.
    assert len(judged) == 4
    assert Judgement.objects.count() == 9  # 5 training + 4 campaign answers
    assert Pair.objects.filter(campaign=campaign, is_training=False).count() == 8
    assert not Score.objects.exists()
    assert elapsed < 30, f"answers took {elapsed:.1f} s with the broker down (hang guard, not a benchmark)"

    # The broker comes back. The first sweep queues every missing score, one message per queue
    # (8 pairs x 2 cpu metrics: one task). A volunteer answering meanwhile queues only the pair
    # they answered, at the front (one small message each: answered pairs are scored first),
    # never the whole backlog again, and the outstanding markers are not doubled.
    redis_server()
    with use_broker(url, redis_transport_options(60)):
        swept = dispatch.queue_sweep()
        assert (swept.sent, swept.scores) == (1, 8 * len(METRICS))
        later = judge_through_http(Client(), "outage", 4)
        assert len(later) == 4
        assert broker.queue_lengths(["cpu", "llm"]).lengths == {"cpu": 1 + len(later), "llm": 0}
    assert QueuedScore.objects.count() == 8 * len(METRICS)

    # A worker with beat (the sweep every 2 s) fills in every score.
    env = worker_env(
        DATABASE_URL=shared_database_url(),
        REDIS_URL=url,
        PARAEVAL_METRICS=",".join(METRICS),
        PARAEVAL_SWEEP_SECONDS="2",
        DB_CONN_MAX_AGE="0",
    )
    worker = WorkerProcess(env, tmp_path, name="outage", beat=True).start()
    try:
        wait_for(
            lambda: Score.objects.filter(status=Score.Status.DONE).count() == 8 * len(METRICS),
            timeout=90,
            what=f"the sweep to fill in the scores\n{worker.log()[-3000:]}",
        )
    finally:
        worker.stop()
    assert not Score.objects.filter(pair__is_training=True).exists()
    assert "scoring.pipeline.tasks.sweep" in worker.log()
    assert not QueuedScore.objects.exists()  # nothing left outstanding


def test_the_stopping_check_never_waits_on_a_dead_broker() -> None:
    """The check queued on the volunteer's answer path: one connection attempt, refused, no
    retries; the next send within the back-off is not even tried."""
    from scoring.reports import stopping_queue

    url = f"redis://127.0.0.1:{closed_port()}/0"
    with use_broker(url, redis_transport_options(60)):
        started = time.monotonic()
        assert stopping_queue.queue_check(42) is False
        assert "Connection refused" in broker.gate.last_error
        assert stopping_queue.queue_check(43) is False  # the gate is closed: not tried
        elapsed = time.monotonic() - started
    assert elapsed < 10, f"queueing the check took {elapsed:.1f} s with the broker down (hang guard)"


def _connections_accepted(client: redis.Redis) -> int:
    """Connections the server has accepted since it started (``client``'s own included)."""
    return int(client.info("stats")["total_connections_received"])


def test_sends_share_one_pooled_connection_that_recovers_after_a_broker_restart(
    settings, port: int, redis_server
) -> None:
    """Each answer's scores go out over the process's pooled connection (not one connection per
    send); when the broker restarts, that connection is replaced and sends go through again."""
    settings.PARAEVAL_BROKER_BACKOFF_SECONDS = 0.0
    url = redis_server()
    probe = redis.Redis.from_url(url, client_name="probe")
    message = broker.TaskMessage(broker.SCORE_PAIRS_TASK, ([1, 2], [7, 8, 9]), "cpu")
    with use_broker(url, redis_transport_options(60)):
        assert broker.send([message, message, message]) == broker.SendResult(3, 0)
        accepted = _connections_accepted(probe)
        for _ in range(4):
            assert broker.send([message, message, message]) == broker.SendResult(3, 0)
        assert probe.llen("cpu") == 15
        assert _connections_accepted(probe) == accepted  # twelve more messages, no new connection

        # The server goes away, losing its queues, and comes back on the same address.
        server = subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], capture_output=True)
        assert server.returncode in (0, 1)  # (the server hangs up before it answers)
        wait_for(lambda: not _pings(probe), timeout=10, what="the test Redis server to stop")
        redis_server()
        results = [broker.send([message]) for _ in range(3)]
        # However the stale connection fails (at most once), the sends after it go through, and
        # what was sent is on the queue with its arguments as the worker will read them.
        assert results[-1] == broker.SendResult(1, 0)
        assert probe.llen("cpu") == sum(result.sent for result in results) >= 2
        body = json.loads(probe.lindex("cpu", 0))
        assert json.loads(base64.b64decode(body["body"]))[0] == [[1, 2], [7, 8, 9]]
        assert body["headers"]["argsrepr"] == "([1, 2], [7, 8, 9])"
        accepted = _connections_accepted(probe)
        assert broker.send([message]) == broker.SendResult(1, 0)
        assert _connections_accepted(probe) == accepted  # pooled again
