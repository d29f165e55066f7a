"""The dashboard's off-request analyses through a real Celery worker on the interactive queue.

The web side (this process) queues the bootstrap intervals and the meta-evaluation on the
filesystem broker; a real ``celery worker -Q interactive`` subprocess computes them into the shared
``analyses`` cache; the dashboard's JSON and the meta-evaluation API then serve them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api_support import *  # noqa: F403
from tests.builders import make_scored_campaign, make_staff
from tests.workers_support import WorkerProcess, filesystem_broker, shared_database_url, wait_for, worker_env

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_intervals_and_meta_evaluation_come_from_the_cpu_worker(tmp_path: Path, settings, client, staff_api) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "data"
    (data / "broker").mkdir(parents=True)
    # This process reads the cache the worker writes: the worker's data folder's.
    settings.CACHES = {
        **settings.CACHES,
        "analyses": {**settings.CACHES["analyses"], "LOCATION": str(data / "cache" / "analyses")},
    }
    if "KEY_PREFIX" in settings.CACHES["analyses"]:
        pytest.skip("REDIS_URL is set: this test runs the file-based shared cache")
    built = make_scored_campaign(slug="worked", name="Worked", pairs_per_origin=5)
    staff = make_staff("dash", "pw-for-tests")
    client.force_login(staff)
    with filesystem_broker(data / "broker"):
        first = client.get("/staff/dashboard/data/", {"campaign": "worked"}).json()
        assert first["bootstrap"]["state"] == "computing"
        meta_url = "/api/campaigns/worked/meta-evaluation/?resamples=200"
        waiting = staff_api.get(meta_url)
        assert waiting.status_code == 202
        said = waiting.json()["message"]
        assert said.startswith("The paired comparisons: waiting for an interactive worker, queued at ")
        env = worker_env(DATABASE_URL=shared_database_url(), PARAEVAL_DATA_DIR=str(data))
        env.pop("REDIS_URL", None)
        worker = WorkerProcess(env, tmp_path, name="analyses", queues="interactive").start()
        try:
            filled = wait_for(
                lambda: (
                    body
                    if (body := client.get("/staff/dashboard/data/", {"campaign": "worked"}).json())["bootstrap"][
                        "state"
                    ]
                    == "ready"
                    else None
                ),
                timeout=120,
                what=f"the intervals from the worker\n{worker.log()[-3000:]}",
            )
            ready = wait_for(
                lambda: response if (response := staff_api.get(meta_url)).status_code == 200 else None,
                timeout=120,
                what=f"the meta-evaluation from the worker\n{worker.log()[-3000:]}",
            )
        finally:
            worker.stop()
    assert "compute_report_intervals" in worker.log() and "compute_meta_evaluation" in worker.log()
    parapluie = str(built.configs["parapluie"].pk)
    low, high = filled["results"][parapluie]["all"]["auc"]["ci"]
    assert 0 <= low <= filled["results"][parapluie]["all"]["auc"]["value"] <= high <= 1
    from scoring.reports.service import campaign_report

    assert filled["results"] == campaign_report(built.campaign.pk, use_cache=False).as_json()["results"]
    meta = ready.json()["meta"]
    assert ready.json()["state"] == "ready"
    assert [metric["label"] for metric in meta["metrics"]] == ["BERTScore", "BLEU", "LEV", "ParaPLUIE FS-DIRECT"]
    assert len(meta["paired"]) == 6 * 6


def test_a_large_campaigns_report_comes_from_the_worker(tmp_path: Path, settings, client) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "data"
    (data / "broker").mkdir(parents=True)
    settings.CACHES = {
        **settings.CACHES,
        "analyses": {**settings.CACHES["analyses"], "LOCATION": str(data / "cache" / "analyses")},
    }
    if "KEY_PREFIX" in settings.CACHES["analyses"]:
        pytest.skip("REDIS_URL is set: this test runs the file-based shared cache")
    settings.PARAEVAL_DASHBOARD_INLINE_PAIRS = 0  # every campaign is "large"
    make_scored_campaign(slug="worked", name="Worked", pairs_per_origin=5)
    client.force_login(make_staff("dash", "pw-for-tests"))
    with filesystem_broker(data / "broker"):
        first = client.get("/staff/dashboard/data/", {"campaign": "worked"})
        assert first.json()["report_status"]["state"] == "computing" and "tables" not in first.json()
        env = worker_env(DATABASE_URL=shared_database_url(), PARAEVAL_DATA_DIR=str(data))
        env.pop("REDIS_URL", None)
        worker = WorkerProcess(env, tmp_path, name="reports", queues="interactive").start()
        try:
            filled = wait_for(
                lambda: (
                    response
                    if (response := client.get("/staff/dashboard/data/", {"campaign": "worked"})).json()[
                        "report_status"
                    ]["state"]
                    == "live"
                    and response.json()["bootstrap"]["state"] == "ready"
                    else None
                ),
                timeout=120,
                what=f"the report and its intervals from the worker\n{worker.log()[-3000:]}",
            )
        finally:
            worker.stop()
    assert "compute_dashboard_report" in worker.log() and "compute_report_intervals" in worker.log()
    assert filled["ETag"] != first["ETag"] and filled.json()["tables"]
