"""A served judge whose server hangs in the middle of a batch, in a real worker with the time limits.

Real parts: llama-cpp-python's server (stopped with SIGSTOP mid-batch: it keeps its connections
and never answers, a hung server), a real Celery worker on Redis, the test PostgreSQL database.
The per-metric time limit (``PARAEVAL_METRIC_TIME_LIMITS``, a SIGALRM in the worker) interrupts
the batch: its pairs are stored as failed with the reason, and the worker scores the next batch
once the server is back. Run this file alone (it starts a model server and a worker).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from scoring.metrics.served import forget_connections
from scoring.models import Score
from scoring.pipeline import dispatch, limits
from tests.builders import make_campaign, make_pair
from tests.served_support import LlamaServer
from tests.test_served_judge import demo_pairs
from tests.workers_support import (
    WorkerProcess,
    judge_workers_env,
    wait_for,
)

pytestmark = [
    pytest.mark.served,
    pytest.mark.worker,
    pytest.mark.model,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

LIMIT = 20  # seconds the served judge's batch may take in the worker
COMPLETION = '"POST /v1/completions HTTP/1.1" 200'


@pytest.fixture
def served_env(settings, redis_url: str, redis_db, llama_server: LlamaServer) -> Iterator[dict[str, str]]:
    # One request a second, two in flight: the batch of 8 pairs takes several seconds.
    models = f"served[server={llama_server.url},chat_template=embedded,concurrency=2,rate=1,mode=top-k]"
    forget_connections()
    settings.PARAEVAL_METRIC_TIME_LIMITS = {"parapluie_direct": LIMIT}
    limits = f"parapluie_direct={LIMIT}"
    with judge_workers_env(settings, redis_url, models, PARAEVAL_METRIC_TIME_LIMITS=limits) as env:
        yield env


def test_a_server_that_hangs_mid_batch_ends_as_failed_scores_within_the_time_limit(
    served_env: dict[str, str], llama_server: LlamaServer, tmp_path: Path
) -> None:
    campaign = make_campaign()
    pairs = [make_pair(campaign, source=s, hypothesis=h) for s, h in demo_pairs()[0][:8]]
    assert dispatch.queue_missing([pair.pk for pair in pairs]).scores == 8
    worker = WorkerProcess(served_env, tmp_path, name="served", queues="llm.served").start()
    try:
        # The worker probed the server, then its batch's requests began: hang the server now.
        wait_for(lambda: "served judge SmolLM2-135M-Instruct-Q4_1" in worker.log(), timeout=120, what=worker.log())
        probed = llama_server.log().count(COMPLETION)
        wait_for(lambda: llama_server.log().count(COMPLETION) > probed, timeout=60, what="a first answer of the batch")
        assert llama_server.process is not None
        llama_server.process.send_signal(signal.SIGSTOP)
        wait_for(
            lambda: Score.objects.filter(pair__in=pairs).count() == 8,
            timeout=LIMIT + 120,
            what="the batch's 8 scores\n" + worker.log()[-3000:],
        )
        rows = list(Score.objects.filter(pair__in=pairs).values_list("status", "value", "error"))
        reason = limits.timed_out_reason("parapluie_direct", LIMIT)
        assert rows == [("failed", None, reason)] * 8
        assert worker.process is not None and worker.process.poll() is None  # not stuck, not dead

        # The server is back: the same worker scores the next pairs.
        llama_server.process.send_signal(signal.SIGCONT)
        more = [make_pair(campaign, source=s, hypothesis=h) for s, h in demo_pairs()[0][8:10]]
        dispatch.queue_missing([pair.pk for pair in more])
        wait_for(
            lambda: Score.objects.filter(pair__in=more, status=Score.Status.DONE).count() == 2,
            timeout=180,
            what="two scores after the server came back\n" + worker.log()[-3000:],
        )
    finally:
        worker.stop()
