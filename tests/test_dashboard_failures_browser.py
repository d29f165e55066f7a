"""The dashboard's "Failed scores" section follows the live poll: a score that fails while the page
is open appears without a reload, and the section goes away when the failures are retried."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import cache
from django.utils import timezone
from selenium.webdriver.common.by import By

from scoring.models import Score
from tests.builders import make_scored_campaign
from tests.test_dashboard_browser import counter, log_in_as_staff, wait

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REASON = "served judge SmolLM2 at 127.0.0.1:8080: 'No' is not among the server's top 20"


@pytest.fixture(autouse=True)
def _fresh_report_cache() -> None:
    cache.clear()


def failure_lines(browser) -> list[str]:
    return [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#failure-list li")]


def test_failed_scores_are_redrawn_by_the_live_poll(browser_factory, live_server, artifacts_dir: Path) -> None:
    built = make_scored_campaign(slug="failing", name="Failing", judges=3, failed_scores=0)
    staff = browser_factory()
    staff.set_window_size(1366, 768)
    log_in_as_staff(staff, live_server)
    wait(staff, lambda b: counter(b, "judgements") == "72")
    staff.execute_script("window.__sameDocument = true;")  # gone if the page reloads
    section = staff.find_element(By.ID, "failure-reasons")
    assert not section.is_displayed() and failure_lines(staff) == []

    # A worker stores two ParaPLUIE scores as failed with the server's reason.
    parapluie = built.configs["parapluie"]
    failing = list(Score.objects.filter(metric_config=parapluie).order_by("pair_id").values_list("pk", flat=True)[:2])
    Score.objects.filter(pk__in=failing).update(
        value=None, status=Score.Status.FAILED, error=REASON, computed_at=timezone.now()
    )
    wait(staff, lambda b: b.find_element(By.ID, "failure-reasons").is_displayed(), timeout=15)
    assert staff.execute_script("return window.__sameDocument === true")
    assert failure_lines(staff) == [f"2 pairs failed on {parapluie.label}: {REASON}"]
    link = staff.find_element(By.CSS_SELECTOR, "#failure-list li a").get_attribute("href")
    assert link.endswith(f"/admin/scoring/score/?status__exact=failed&metric_config__id__exact={parapluie.pk}")
    staff.save_screenshot(str(artifacts_dir / "dashboard_failures_live_1366.png"))
    staff.set_window_size(390, 844)
    staff.execute_script("document.getElementById('failure-reasons').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "dashboard_failures_live_390.png"))

    # Retried and scored: the section goes away, still without a reload.
    Score.objects.filter(pk__in=failing).update(
        value=0.5, status=Score.Status.DONE, error="", computed_at=timezone.now()
    )
    wait(staff, lambda b: not b.find_element(By.ID, "failure-reasons").is_displayed(), timeout=15)
    assert failure_lines(staff) == [] and staff.execute_script("return window.__sameDocument === true")
