"""A dashboard that waits for nothing: a computation whose task was lost is queued again after a
bounded time, and the page says what it waits for (scoring.reports.waits)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache

from annotate.models import Campaign
from scoring.reports import dataset, waits
from scoring.reports.dataset import Filters
from scoring.reports.service import compute_meta, meta_options, meta_version, shared_cache
from scoring.reports.tasks import compute_meta_evaluation, compute_report_intervals
from tests.api_support import *  # noqa: F403
from tests.builders import make_scored_campaign, make_staff
from tests.workers_support import messages_in

pytestmark = pytest.mark.django_db

META = "/api/campaigns/{slug}/meta-evaluation/?resamples=50"
DASHBOARD = "/staff/dashboard/data/"
CLOCK = r"\d\d:\d\d:\d\d UTC"


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()
    shared_cache().clear()


@pytest.fixture
def staff_client(client):  # type: ignore[no-untyped-def]
    user = make_staff("staff", "pw-for-tests")
    client.force_login(user)
    return client


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits' clock, moved by the test: ``clock[0] += 121``."""
    now = [1_790_000_000.0]  # 2026-09-21 14:13:20 UTC
    monkeypatch.setattr(waits, "_now", lambda: now[0])
    return now


def lose(queue_dir: Path) -> list[dict[str, Any]]:
    """Take every queued message away (a broker that dropped them); their keyword arguments."""
    taken = []
    for path in sorted(queue_dir.iterdir()):
        taken.append(json.loads(base64.b64decode(json.loads(path.read_text())["body"]))[1])
        path.unlink()
    return taken


def test_a_lost_meta_evaluation_is_queued_again_on_a_later_poll(staff_api, queue_dir, clock):  # type: ignore[no-untyped-def]
    scored = make_scored_campaign(pairs_per_origin=6)
    url = META.format(slug=scored.campaign.slug)
    first = staff_api.get(url).json()
    assert first["message"] == (
        "The paired comparisons: waiting for an interactive worker, queued at 14:13:20 UTC; "
        "queued again at 14:15:20 UTC if no worker has started it."
    )
    assert len(lose(queue_dir)) == 1  # the task is lost
    clock[0] += 60
    assert staff_api.get(url).json()["state"] == "computing"
    assert messages_in(queue_dir) == []  # within the bound: not queued twice
    clock[0] += 61  # 121 s after the first poll
    again = staff_api.get(url)
    assert again.status_code == 202
    assert again.json()["message"] == (
        "The paired comparisons: waiting for an interactive worker, queued at 14:15:21 UTC "
        "(queued again: no worker started it within 120 s); queued again at 14:17:21 UTC if no worker has started it."
    )
    assert again.json()["wait"] == {"phase": "queued", "attempt": 2}
    staff_api.get(url)
    queued = messages_in(queue_dir)
    meta = "scoring.reports.tasks.compute_meta_evaluation"
    assert [(queue, task) for queue, task, _ in queued] == [("interactive", meta)]
    # The worker takes the second message: the page gets its result.
    (kwargs,) = lose(queue_dir)
    assert compute_meta_evaluation(**kwargs) == first["version"]
    ready = staff_api.get(url)
    assert ready.status_code == 200 and ready.json()["meta"]["version"] == first["version"]


def test_a_worker_that_died_running_it_is_replaced_and_the_page_says_so(staff_api, queue_dir, clock):  # type: ignore[no-untyped-def]
    scored = make_scored_campaign(pairs_per_origin=6)
    url = META.format(slug=scored.campaign.slug)
    staff_api.get(url)
    (kwargs,) = lose(queue_dir)
    clock[0] += 30
    assert waits.started(kwargs["job"])  # a worker takes it, then dies
    running = staff_api.get(url).json()
    assert running["message"] == (
        "The paired comparisons: an interactive worker started at 14:13:50 UTC; "
        "queued again at 14:28:50 UTC if it has not finished."
    )
    assert running["wait"] == {"phase": "running", "attempt": 1}
    clock[0] += 899
    staff_api.get(url)
    assert messages_in(queue_dir) == []
    clock[0] += 2  # 901 s after it started
    again = staff_api.get(url).json()
    assert re.fullmatch(
        rf"The paired comparisons: waiting for an interactive worker, queued at {CLOCK} "
        rf"\(queued again: the worker that started it at 14:13:50 UTC did not finish within 15 min\); "
        rf"queued again at {CLOCK} if no worker has started it\.",
        again["message"],
    )
    assert len(messages_in(queue_dir)) == 1


def test_a_task_that_delivered_for_other_data_is_queued_again(staff_api, queue_dir, clock):  # type: ignore[no-untyped-def]
    scored = make_scored_campaign(pairs_per_origin=6)
    url = META.format(slug=scored.campaign.slug)
    staff_api.get(url)
    (kwargs,) = lose(queue_dir)
    waits.started(kwargs["job"])
    waits.finished(kwargs["job"])  # its result went to another data version
    assert staff_api.get(url).json()["wait"] == {"phase": "finishing", "attempt": 1}
    assert compute_meta_evaluation(**kwargs) is None  # a duplicate of a finished job does nothing
    clock[0] += 61
    assert staff_api.get(url).json()["wait"] == {"phase": "queued", "attempt": 2}
    assert len(messages_in(queue_dir)) == 1


def test_lost_dashboard_intervals_are_queued_again_and_the_etag_shows_it(staff_client, queue_dir, clock):  # type: ignore[no-untyped-def]
    make_scored_campaign(slug="dash", pairs_per_origin=6)
    first = staff_client.get(DASHBOARD, {"campaign": "dash"})
    version = first.json()["version"]
    assert first["ETag"] == f'"{version}-pqueued1"'
    assert first.json()["bootstrap"]["message"] == (
        "The 95% bootstrap intervals: waiting for an interactive worker, queued at 14:13:20 UTC; "
        "queued again at 14:15:20 UTC if no worker has started it."
    )
    lose(queue_dir)
    clock[0] += 121
    # A poll that carries the old ETag is answered with the new wait, not 304.
    again = staff_client.get(DASHBOARD, {"campaign": "dash"}, headers={"If-None-Match": first["ETag"]})
    assert again.status_code == 200 and again["ETag"] == f'"{version}-pqueued2"'
    assert "(queued again: no worker started it within 120 s)" in again.json()["bootstrap"]["message"]
    (kwargs,) = lose(queue_dir)
    assert compute_report_intervals(**kwargs) == version
    ready = staff_client.get(DASHBOARD, {"campaign": "dash"}, headers={"If-None-Match": again["ETag"]})
    assert ready["ETag"] == f'"{version}-i"' and ready.json()["bootstrap"]["state"] == "ready"


def test_the_worker_labels_its_result_with_the_data_it_read_not_an_older_cached_state():
    """The 22-minute wait: the rule changed, the worker's cached state (the change stamp misses rule
    edits) still had the old rule, so it stored the new result under the old version."""
    scored = make_scored_campaign(pairs_per_origin=6)
    campaign_id = scored.campaign.pk
    filters = Filters.build("volunteers", exclude_flagged=True)
    options = meta_options(filters, 50, None)
    dataset.data_state(campaign_id)  # this process has the state cached
    Campaign.objects.filter(pk=campaign_id).update(exclude_failed_checks=scored.campaign.exclude_failed_checks + 1)
    result = compute_meta(campaign_id, filters, options)
    assert result.version == meta_version(dataset.data_state(campaign_id), filters, options)


def test_one_computation_per_slot_newer_data_waits_behind_the_running_one(clock):  # type: ignore[no-untyped-def]
    """On a large live campaign every poll sees new data: it must not queue a computation each."""
    sent: list[str] = []
    old, new, newer = (waits.job_key("report:7", version) for version in ("v1", "v2", "v3"))
    assert waits.wait_for(old, "The report", lambda: sent.append(old)).phase == "queued"
    clock[0] += 30
    behind = waits.wait_for(new, "The report", lambda: sent.append(new))
    assert behind == waits.Wait(
        "behind",
        1,
        "The report: waiting for the computation for earlier data to finish (queued at 14:13:20 UTC); "
        "then queued for the current data.",
    )
    waits.started(old)
    assert waits.wait_for(newer, "The report", lambda: sent.append(newer)).message == (
        "The report: waiting for the computation for earlier data to finish "
        "(an interactive worker started it at 14:13:50 UTC); then queued for the current data."
    )
    assert sent == [old]
    # Another slot is not held up by it.
    other = waits.job_key("intervals:7", "v3")
    assert waits.wait_for(other, "The intervals", lambda: sent.append(other)).phase == "queued"
    waits.finished(old)
    assert waits.wait_for(newer, "The report", lambda: sent.append(newer)).phase == "queued"
    assert sent == [old, other, newer]


def test_a_lost_earlier_computation_does_not_hold_newer_data_back(clock):  # type: ignore[no-untyped-def]
    sent: list[str] = []
    old, new = waits.job_key("report:8", "v1"), waits.job_key("report:8", "v2")
    waits.wait_for(old, "The report", lambda: sent.append(old))
    clock[0] += 121  # no worker started it: lost
    assert waits.wait_for(new, "The report", lambda: sent.append(new)).phase == "queued"
    assert sent == [old, new]


@pytest.mark.parametrize(
    "task, arguments",
    [
        ("compute_meta_evaluation", {"filters": {}, "resamples": 50, "seed": 1}),
        ("compute_report_intervals", {"filters": {}, "resamples": 50, "seed": 1}),
        ("compute_dashboard_report", {"filters": {}, "resamples": 50, "seed": 1}),
        ("refresh_volunteer_verdicts", {}),
        ("refresh_worst_disagreements", {"config_id": 1, "limit": 20}),
    ],
)
def test_an_interactive_task_skips_a_delivered_copy_and_a_deleted_campaign(clock, task, arguments):  # type: ignore[no-untyped-def]
    from scoring.reports import tasks

    run = getattr(tasks, task)
    missing = (Campaign.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1000
    # A deleted campaign: nothing computed, nothing raised, and the wait is not marked finished
    # (the page queues the work again after its bounded time instead of waiting for a result).
    job = waits.job_key(f"{task}:{missing}", "v1")
    waits.wait_for(job, "The work", lambda: None)
    assert run.run(missing, job=job, **arguments) is None
    record = cache_record(job)
    assert (record["started_at"], record["finished_at"]) == (1_790_000_000.0, None)
    # A copy queued again after the first one delivered: skipped, on a campaign that exists.
    campaign_id = make_scored_campaign(pairs_per_origin=2).campaign.pk
    done = waits.job_key(f"{task}:{campaign_id}", "v1")
    waits.wait_for(done, "The work", lambda: None)
    waits.started(done)
    waits.finished(done)
    clock[0] += 5
    assert run.run(campaign_id, job=done, **arguments) is None
    record = cache_record(done)
    assert (record["started_at"], record["finished_at"]) == (1_790_000_000.0, 1_790_000_000.0)
    # Run afresh, it computes and says so at the time it finished.
    again = waits.job_key(f"{task}:{campaign_id}", "v2")
    waits.wait_for(again, "The work", lambda: None)
    run.run(campaign_id, job=again, **arguments)
    assert cache_record(again)["finished_at"] == 1_790_000_005.0


def cache_record(job: str) -> dict[str, Any]:
    record: dict[str, Any] = waits._cache().get(job)
    return record
