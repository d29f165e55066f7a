"""A probe set asked for through the API is built by a real Celery worker on the ``cpu`` queue
(Redis broker, shared PostgreSQL); the same message delivered twice builds one probe set."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.db import transaction

from annotate.models import Pair
from paraeval import broker
from scoring.models import ProbeSet
from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign, make_pair
from tests.workers_support import (
    WorkerProcess,
    redis_transport_options,
    shared_database_url,
    use_broker,
    wait_for,
    worker_env,
)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_real_worker_builds_the_queued_probe_set_once(staff_api, tmp_path: Path, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    campaign = make_campaign(slug="news")
    make_pair(
        campaign, source="Flights from Boston to Denver leave daily.", hypothesis="Daily flights.", gold_label=True
    )
    env = worker_env(
        DATABASE_URL=shared_database_url(), REDIS_URL=redis_url, PARAEVAL_METRICS="lev", DB_CONN_MAX_AGE="0"
    )
    with use_broker(redis_url, redis_transport_options(60)):
        response = staff_api.post("/api/campaigns/news/probes/", {"kinds": ["paws_swap"], "seed": 3}, format="json")
        assert response.status_code == 202
        key = response.json()["request"]
        # The broker delivers the same request a second time.
        with transaction.atomic():
            message = broker.TaskMessage(
                "scoring.probes.tasks.build_probe_set", (campaign.pk, ["paws_swap"], 3, "", key), "cpu"
            )
            transaction.on_commit(lambda: broker.send([message]))
        worker = WorkerProcess(env, tmp_path, name="probes", queues="cpu").start()
        try:
            wait_for(
                lambda: len(re.findall(r"build_probe_set\[[^\]]+\] succeeded", worker.log())) >= 2 or None,
                timeout=240,
                interval=0.5,
                what=f"both deliveries run\n{worker.log()[-3000:]}",
            )
        finally:
            worker.stop()
    probe_set = ProbeSet.objects.get()
    assert (probe_set.request_key, probe_set.seed, probe_set.campaign.slug) == (key, 3, "news-probes")
    hypotheses = sorted(Pair.objects.filter(campaign__slug="news-probes").values_list("hypothesis", flat=True))
    assert "Flights from Denver to Boston leave daily." in hypotheses
    assert len(hypotheses) == 4  # the swap and its three controls, stored once
