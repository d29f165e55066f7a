"""A served judge and the local embedded judge side by side on one campaign, each on its own queue.

Real parts throughout: llama-cpp-python's server serving the embedded SmolLM2 GGUF on a loopback
port, two Celery worker processes on Redis (``-Q llm.smollm2`` loads the model in-process,
``-Q llm.served`` only asks the server), the test PostgreSQL database, the staff status page.
Run this file alone (it starts a model server and two workers).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from paraeval import broker
from scoring.metrics.served import forget_connections
from scoring.models import MetricConfig, Score
from scoring.pipeline import dispatch
from tests.builders import make_campaign, make_pair, make_staff
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


@pytest.fixture
def side_by_side(settings, redis_url: str, redis_db, llama_server: LlamaServer) -> Iterator[dict[str, str]]:
    served = f"served[server={llama_server.url},chat_template=embedded,concurrency=4]"
    forget_connections()
    with judge_workers_env(settings, redis_url, f"smollm2[model=embedded,batch_size=4]; {served}") as env:
        yield env


def test_a_served_judge_and_the_embedded_judge_score_one_campaign_each_through_its_own_queue(
    side_by_side: dict[str, str], llama_server: LlamaServer, tmp_path: Path
) -> None:
    campaign = make_campaign()
    pairs = [make_pair(campaign, source=source, hypothesis=hypothesis) for source, hypothesis in demo_pairs()[0][:6]]
    result = dispatch.queue_missing([pair.pk for pair in pairs])
    assert (result.tasks, result.sent, result.scores) == (2, 2, 12)
    assert broker.queue_lengths(["llm.smollm2", "llm.served"]).lengths == {"llm.smollm2": 1, "llm.served": 1}
    local_row, served_row = MetricConfig.objects.order_by("id")
    assert (local_row.label, local_row.queue) == ("parapluie_direct[SmolLM2-135M-Instruct]", "llm.smollm2")
    served_label = (
        f"parapluie_direct[SmolLM2-135M-Instruct-Q4_1, served at 127.0.0.1:{llama_server.port}, top-20 + exact]"
    )
    assert (served_row.label, served_row.queue) == (served_label, "llm.served")
    # Its identity is what the server reports, and the chat template's hash; never the local model's.
    assert served_row.config["model"]["served"] == "SmolLM2-135M-Instruct-Q4_1"
    assert len(served_row.config["model"]["chat_template"]) == 64
    assert served_row.config_hash != local_row.config_hash

    workers = [
        WorkerProcess(side_by_side, tmp_path, name="smollm2", queues="llm.smollm2").start(),
        WorkerProcess(side_by_side, tmp_path, name="served", queues="llm.served").start(),
    ]
    try:
        wait_for(
            lambda: Score.objects.filter(status=Score.Status.DONE).count() == 12,
            timeout=300,
            what="twelve scores from the two workers\n" + "\n".join(w.log()[-2000:] for w in workers),
        )
        staff = make_staff("staff", "pw-for-tests")
        client = Client()
        client.force_login(staff)
        data = client.get(reverse("staff:status-json")).json()
        assert data["served"] == [
            {
                "judge": "served",
                "server": llama_server.url,
                "model": "SmolLM2-135M-Instruct-Q4_1",
                "mode": "top-20 + exact",
                "probe": [
                    "/v1/completions: top 20 log-probabilities",
                    "/v1/chat/completions: top 20 log-probabilities",
                    "prompt log-probabilities (echo): yes",
                ],
            }
        ]
        rows = {row["queue"]: row for row in data["queue_status"]}
        assert rows["llm.served"]["serves"] == f"served (served at {llama_server.url})"
        page = client.get(reverse("staff:status")).content.decode()
        assert "<h2>Served judge models</h2>" in page and "<li>/v1/completions: top 20 log-probabilities</li>" in page
    finally:
        for worker in workers:
            worker.stop()
    local_log, served_log = (worker.log() for worker in workers)
    assert "ParaPLUIE judge model loaded: SmolLM2-135M-Instruct (embedded)" in local_log
    assert "ParaPLUIE judge model loaded" not in served_log  # it only asked the server
    assert f"served judge SmolLM2-135M-Instruct-Q4_1 at {llama_server.url}: top-20 + exact" in served_log
    local = dict(Score.objects.filter(metric_config=local_row).values_list("pair_id", "value"))
    served = dict(Score.objects.filter(metric_config=served_row).values_list("pair_id", "value"))
    assert set(local) == set(served) == {pair.pk for pair in pairs}
    # The same model computed by llama.cpp from the Q4_1 file: close, not equal (tests/test_served_judge.py).
    assert all(abs(local[pair_id] - served[pair_id]) <= 0.5 for pair_id in local)
