"""Two judge models, each scored through its own queue by a real worker that loads only its model.

The embedded SmolLM2 and a tiny randomly initialised Mistral-architecture model saved to a
folder with its own tokenizer files. The test process plays the web side; two worker processes
(``-Q llm.smollm2`` and ``-Q llm.tiny``) share its PostgreSQL test database and a Redis
database of their own. Run this file alone (it starts two model workers).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.test import Client
from django.urls import reverse

from paraeval import broker
from scoring.models import MetricConfig, Score
from scoring.pipeline import dispatch
from tests.builders import make_campaign, make_pair, make_staff
from tests.judge_models import save_tiny_mistral
from tests.workers_support import (
    WorkerProcess,
    judge_workers_env,
    wait_for,
)

pytestmark = [pytest.mark.worker, pytest.mark.model, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

METRICS = "parapluie_direct"


@pytest.fixture
def judges_env(settings, redis_url: str, redis_db: redis.Redis, tmp_path: Path) -> Iterator[dict[str, str]]:
    tiny = save_tiny_mistral(tmp_path / "tiny-mistral")
    models = f"smollm2[model=embedded,batch_size=4]; tiny[model={tiny},batch_size=4]"
    with judge_workers_env(settings, redis_url, models, METRICS) as env:
        yield env


def test_each_judge_model_is_scored_through_its_own_queue_by_a_worker_that_loads_only_it(
    judges_env: dict[str, str], tmp_path: Path
) -> None:
    campaign = make_campaign()
    pairs = [make_pair(campaign) for _ in range(3)]
    result = dispatch.queue_missing([pair.pk for pair in pairs])
    assert (result.tasks, result.sent, result.scores) == (2, 2, 6)
    assert broker.queue_lengths(["llm.smollm2", "llm.tiny", "llm", "cpu"]).lengths == {
        "llm.smollm2": 1,
        "llm.tiny": 1,
        "llm": 0,
        "cpu": 0,
    }
    smol_row, tiny_row = MetricConfig.objects.order_by("id")
    assert (smol_row.label, smol_row.queue) == ("parapluie_direct[SmolLM2-135M-Instruct]", "llm.smollm2")
    assert (tiny_row.label, tiny_row.queue) == ("parapluie_direct[tiny-mistral]", "llm.tiny")
    assert smol_row.config_hash != tiny_row.config_hash

    workers = [
        WorkerProcess(judges_env, tmp_path, name="smollm2", queues="llm.smollm2").start(),
        WorkerProcess(judges_env, tmp_path, name="tiny", queues="llm.tiny").start(),
    ]
    try:
        wait_for(
            lambda: Score.objects.filter(status=Score.Status.DONE).count() == 6,
            timeout=240,
            what="six scores from the two model workers\n" + "\n".join(w.log()[-2000:] for w in workers),
        )
        # The status page lists both model queues, each with its live worker and what it serves.
        staff = make_staff("staff", "pw-for-tests")
        client = Client()
        client.force_login(staff)
        wait_for(
            lambda: client.get(reverse("staff:status-json")).json()["workers_alive"] == 2,
            timeout=30,
            what="both heartbeats",
        )
        data = client.get(reverse("staff:status-json")).json()
        rows = {row["queue"]: row for row in data["queue_status"]}
        assert list(rows) == ["interactive", "cpu", "llm", "llm.smollm2", "llm.tiny"]
        assert (rows["llm.smollm2"]["waiting"], rows["llm.smollm2"]["workers_alive"]) == (0, 1)
        assert (rows["llm.tiny"]["waiting"], rows["llm.tiny"]["workers_alive"]) == (0, 1)
        assert rows["llm.tiny"]["serves"] == f"tiny ({tmp_path / 'tiny-mistral'}, cpu, float32)"
        assert rows["llm.tiny"]["per_minute"]["1"] == 3.0
        assert (rows["cpu"]["workers_alive"], rows["llm"]["workers_alive"]) == (0, 0)
        by_label = {row["label"]: (row["done"], row["pending"], row["queue"]) for row in data["configurations"]}
        assert by_label == {
            "parapluie_direct[SmolLM2-135M-Instruct]": (3, 0, "llm.smollm2"),
            "parapluie_direct[tiny-mistral]": (3, 0, "llm.tiny"),
        }
        page = client.get(reverse("staff:status")).content.decode()
        assert '<tr data-queue="llm.tiny">' in page and '<tr data-queue="llm.smollm2">' in page
    finally:
        for worker in workers:
            worker.stop()
    smol_log, tiny_log = (worker.log() for worker in workers)
    # Each worker loaded its own model and never the other's.
    assert "ParaPLUIE judge model loaded: SmolLM2-135M-Instruct (embedded)" in smol_log
    assert "ParaPLUIE judge model loaded" in tiny_log and "tiny-mistral" in tiny_log
    assert "tiny-mistral" not in smol_log
    assert "SmolLM2" not in tiny_log and "embedded" not in tiny_log
    # Distinct numbers: the random model is not the embedded one.
    values = {
        label: sorted(Score.objects.filter(metric_config__label=label).values_list("value", flat=True))
        for label in ("parapluie_direct[SmolLM2-135M-Instruct]", "parapluie_direct[tiny-mistral]")
    }
    assert values["parapluie_direct[SmolLM2-135M-Instruct]"] != values["parapluie_direct[tiny-mistral]"]
