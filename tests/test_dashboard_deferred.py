"""A large campaign's dashboard report is computed on the interactive queue: the poll answers at
once with the last kept report (stale, saying as of when) or "computing", and picks the new one up."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from scoring.models import StoppingRule
from scoring.reports import service, waits
from scoring.reports.service import META_TASK, REPORT_TASK, shared_cache
from scoring.reports.tasks import compute_dashboard_report, compute_meta_evaluation, compute_report_intervals
from tests.builders import make_judgement, make_scored_campaign, make_staff, make_volunteer
from tests.workers_support import closed_port, messages_in, redis_transport_options, use_broker

pytestmark = pytest.mark.django_db

DASHBOARD = "/staff/dashboard/data/"
INTERVALS_TASK = "scoring.reports.tasks.compute_report_intervals"


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()
    shared_cache().clear()


@pytest.fixture
def deferred(settings):  # type: ignore[no-untyped-def]
    """Every campaign is "large": its report goes to the interactive queue."""
    settings.PARAEVAL_DASHBOARD_INLINE_PAIRS = 0


@pytest.fixture
def staff_client(client):  # type: ignore[no-untyped-def]
    client.force_login(make_staff("staff", "pw-for-tests"))
    return client


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [1_790_000_000.0]  # 2026-09-21 14:13:20 UTC
    monkeypatch.setattr(waits, "_now", lambda: now[0])
    return now


def run_queued(queue_dir: Path) -> list[str]:
    """Run every queued message's task here (what an interactive worker does); their names."""
    tasks = {
        REPORT_TASK: compute_dashboard_report,
        INTERVALS_TASK: compute_report_intervals,
        META_TASK: compute_meta_evaluation,
    }
    ran = []
    for path in sorted(queue_dir.iterdir()):
        payload = json.loads(path.read_text())
        name = payload["headers"]["task"]
        tasks[name](**json.loads(base64.b64decode(payload["body"]))[1])
        path.unlink()
        ran.append(name)
    return ran


def computed(client: Any, queue_dir: Path) -> Any:
    """Poll until the report and its intervals are in, running the queued tasks; the last answer."""
    for _ in range(4):
        answer = client.get(DASHBOARD, {"campaign": "dash"})
        if answer.json()["report_status"]["state"] == "live" and answer.json()["bootstrap"]["state"] == "ready":
            return answer
        run_queued(queue_dir)
    raise AssertionError("the report never arrived")


def test_computing_then_the_task_delivers_and_the_etag_changes(deferred, staff_client, queue_dir, clock):  # type: ignore[no-untyped-def]
    make_scored_campaign(slug="dash", pairs_per_origin=6)
    first = staff_client.get(DASHBOARD, {"campaign": "dash"})
    assert first.status_code == 200
    body = first.json()
    assert body["report_status"] == {
        "state": "computing",
        "message": "Computing the report… The report: waiting for an interactive worker, queued at 14:13:20 UTC; "
        "queued again at 14:15:20 UTC if no worker has started it.",
    }
    assert "tables" not in body
    assert first["ETag"] == f'"{body["version"]}-rqueued1"'
    assert [(queue, task) for queue, task, _ in messages_in(queue_dir)] == [("interactive", REPORT_TASK)]
    # A second poll queues nothing more and is not modified.
    again = staff_client.get(DASHBOARD, {"campaign": "dash"}, headers={"If-None-Match": first["ETag"]})
    assert again.status_code == 304 and len(messages_in(queue_dir)) == 1
    assert run_queued(queue_dir) == [REPORT_TASK]  # the task function, called here
    arrived = staff_client.get(DASHBOARD, {"campaign": "dash"}, headers={"If-None-Match": first["ETag"]})
    assert arrived.status_code == 200 and arrived["ETag"] != first["ETag"]
    assert arrived.json()["report_status"] == {"state": "live", "message": ""}
    assert arrived.json()["version"] == body["version"] and arrived.json()["tables"]
    # The intervals follow on the same queue, as for a small campaign.
    assert arrived.json()["bootstrap"]["state"] == "computing"
    assert run_queued(queue_dir) == [INTERVALS_TASK]
    ready = staff_client.get(DASHBOARD, {"campaign": "dash"}, headers={"If-None-Match": arrived["ETag"]})
    assert ready["ETag"] == f'"{body["version"]}-i"' and ready.json()["bootstrap"]["state"] == "ready"
    # The repeat view sends the kept answer: the same bytes.
    repeat = staff_client.get(DASHBOARD, {"campaign": "dash"})
    assert repeat.content == ready.content


def test_the_figures_are_those_of_the_inline_computation(settings, staff_client, queue_dir):  # type: ignore[no-untyped-def]
    make_scored_campaign(slug="dash", pairs_per_origin=6)
    inline = staff_client.get(DASHBOARD, {"campaign": "dash"})
    assert inline.json()["report_status"]["state"] == "live"
    run_queued(queue_dir)  # the intervals
    inline = staff_client.get(DASHBOARD, {"campaign": "dash"}).json()
    assert inline["bootstrap"]["state"] == "ready"
    cache.clear()
    shared_cache().clear()
    settings.PARAEVAL_DASHBOARD_INLINE_PAIRS = 0
    queued = computed(staff_client, queue_dir).json()
    assert queued["version"] == inline["version"]
    for section in ("tables", "counts", "failures", "stopping", "bootstrap"):
        assert queued[section] == inline[section], section


def test_a_change_shows_the_kept_report_as_stale_until_the_new_one_is_in(deferred, staff_client, queue_dir, clock):  # type: ignore[no-untyped-def]
    scored = make_scored_campaign(slug="dash", pairs_per_origin=6)
    kept = computed(staff_client, queue_dir)
    volunteer = make_volunteer(scored.campaign)
    for pair in scored.pairs[:2]:
        make_judgement(pair, volunteer)
    stale = staff_client.get(DASHBOARD, {"campaign": "dash"}, headers={"If-None-Match": kept["ETag"]})
    assert stale.status_code == 200 and stale["ETag"] != kept["ETag"]
    body = stale.json()
    moment = re.escape(body["generated_at"][:10])
    assert re.fullmatch(
        moment + r" \d\d:\d\d:\d\d UTC; 2 answers since; updating\. The report: waiting for an interactive worker, "
        r"queued at 14:13:20 UTC; queued again at 14:15:20 UTC if no worker has started it\.",
        body["report_status"]["message"].removeprefix("As of "),
    )
    assert body["report_status"]["state"] == "stale"
    assert body["report_status"]["message"].startswith("As of ")
    assert body["version"] == kept.json()["version"] and body["tables"] == kept.json()["tables"]
    fresh = computed(staff_client, queue_dir).json()
    assert fresh["version"] != kept.json()["version"]
    assert fresh["counts"]["judgements"] == kept.json()["counts"]["judgements"] + 2


def test_an_unreachable_broker_is_said_not_a_500(deferred, staff_client):  # type: ignore[no-untyped-def]
    make_scored_campaign(slug="dash", pairs_per_origin=6)
    with use_broker(f"redis://127.0.0.1:{closed_port()}/0", redis_transport_options(60)):
        answer = staff_client.get(DASHBOARD, {"campaign": "dash"})
    assert answer.status_code == 200
    assert answer.json()["report_status"]["state"] == "unavailable"
    assert re.fullmatch(
        r"No report yet\. The task queue is unreachable \(\w+\): no new report for now\.",
        answer.json()["report_status"]["message"],
    )


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_page_says_computing_then_draws_the_report(deferred, browser, live_server, queue_dir, clock):  # type: ignore[no-untyped-def]
    import os

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    make_scored_campaign(slug="dash", pairs_per_origin=6)
    make_staff("staff", "pw-for-tests")
    browser.get(f"{live_server.url}/admin/login/?next=/staff/dashboard/%3Fcampaign%3Ddash")
    browser.find_element(By.ID, "id_username").send_keys("staff")
    browser.find_element(By.ID, "id_password").send_keys("pw-for-tests")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    status = WebDriverWait(browser, 20, 0.2).until(lambda b: b.find_element(By.ID, "report-status"))
    WebDriverWait(browser, 20, 0.2).until(lambda b: status.is_displayed())
    assert status.text == (
        "Computing the report… The report: waiting for an interactive worker, queued at 14:13:20 UTC; "
        "queued again at 14:15:20 UTC if no worker has started it."
    )
    folder = Path(os.environ.get("PARAEVAL_SCREENSHOTS") or queue_dir.parent)
    for width, height in ((1366, 768), (390, 844)):
        browser.set_window_size(width, height)
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", status)
        assert browser.find_element(By.ID, "live-text").text == "Computing the report…"
        # Nothing overflows sideways: the words wrap in the narrow window.
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width
        browser.save_screenshot(str(folder / f"dashboard-computing-{width}x{height}.png"))
    run_queued(queue_dir)  # the report: the next poll (every 5 s) draws it and hides the words
    WebDriverWait(browser, 30, 0.2).until(lambda b: not status.is_displayed())
    assert browser.find_element(By.ID, "dashboard").get_attribute("data-report") == "live"


def test_the_polls_after_the_worker_send_the_bytes_of_the_inline_answer(
    settings, staff_client, queue_dir, clock, monkeypatch
):  # type: ignore[no-untyped-def]
    scored = make_scored_campaign(slug="dash", pairs_per_origin=6)  # one failed score
    StoppingRule.objects.create(
        campaign=scored.campaign,
        metric_a=scored.configs["lev"],
        metric_b=scored.configs["bleu"],
        alpha=0.05,
        planned_pairs=100,
    )
    moment = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: moment)  # the reports' generated_at
    # Inline (a small campaign): the points in the request, then the intervals from the queue.
    inline_points = staff_client.get(DASHBOARD, {"campaign": "dash"})
    assert inline_points.json()["bootstrap"]["state"] == "computing"
    assert inline_points.json()["failures"][0]["pairs"] == 1 and inline_points.json()["stopping"]["question"]
    assert run_queued(queue_dir) == [INTERVALS_TASK]
    inline_ready = staff_client.get(DASHBOARD, {"campaign": "dash"})
    assert inline_ready.json()["bootstrap"]["state"] == "ready"
    cache.clear()
    shared_cache().clear()
    settings.PARAEVAL_DASHBOARD_INLINE_PAIRS = 0
    # Large: the worker computes the report, the poll picks it up, then the same for the intervals.
    assert staff_client.get(DASHBOARD, {"campaign": "dash"}).json()["report_status"]["state"] == "computing"
    assert run_queued(queue_dir) == [REPORT_TASK]
    points = staff_client.get(DASHBOARD, {"campaign": "dash"})
    assert points["ETag"] == inline_points["ETag"] and points.content == inline_points.content
    assert run_queued(queue_dir) == [INTERVALS_TASK]
    ready = staff_client.get(DASHBOARD, {"campaign": "dash"})
    assert ready["ETag"] == inline_ready["ETag"] and ready.content == inline_ready.content


def test_a_poll_after_the_worker_reads_its_bytes_and_assembles_nothing(
    deferred, staff_client, queue_dir, clock, monkeypatch
):  # type: ignore[no-untyped-def]
    make_scored_campaign(slug="dash", pairs_per_origin=6)
    staff_client.get(DASHBOARD, {"campaign": "dash"})  # computing: the report is queued
    staff_client.get(DASHBOARD, {"campaign": "dash"})  # (the session's and the campaign's reads are warm)

    def assembled(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the request assembled the report")

    def poll() -> tuple[Any, list[str]]:
        with monkeypatch.context() as patched:
            for name in ("campaign_report", "build_report", "with_intervals", "all_tables"):
                patched.setattr(service, name, assembled)
            patched.setattr(service.CampaignReport, "as_json", assembled)
            with CaptureQueriesContext(connection) as queries:
                answer = staff_client.get(DASHBOARD, {"campaign": "dash"})
        return answer, [query["sql"] for query in queries]

    assert run_queued(queue_dir) == [REPORT_TASK]
    points, statements = poll()
    assert points.json()["report_status"]["state"] == "live" and points.json()["bootstrap"]["state"] == "computing"
    assert points.json()["bootstrap"]["message"].startswith("The 95% bootstrap intervals: waiting for an interactive")
    # The session, the staff user, the campaign and its data version: nothing of the report.
    assert len(statements) == 5, statements
    assert run_queued(queue_dir) == [INTERVALS_TASK]
    ready, statements = poll()
    assert ready.json()["bootstrap"]["state"] == "ready" and ready["ETag"].endswith('-i"')
    assert len(statements) == 5, statements
