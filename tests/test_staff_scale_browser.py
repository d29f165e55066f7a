"""The volunteers table in pages and the pair list with a metric chosen, in headless Chromium:
the pager's words and links, the rows of page 2, and screenshots at 1366x768 and 390x844
(test-artifacts/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from annotate.pseudonyms import volunteer_pseudonym
from staff.views import volunteers as volunteers_view
from tests.browser_support import navigation
from tests.builders import make_campaign, make_judgement, make_metric_config, make_pair, make_score, make_volunteer
from tests.test_dashboard_browser import full_page_screenshot
from tests.test_staff_browser import DESKTOP, PHONE, log_in, no_sideways_scroll, window

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LABELS = ("same_meaning", "very_different", "mostly_similar")


def shots(browser: WebDriver, folder: Path, name: str) -> None:
    for size in (DESKTOP, PHONE):
        window(browser, size)
        assert no_sideways_scroll(browser), f"{name} scrolls sideways at {size}"
        full_page_screenshot(browser, folder / f"{name}-{size[0]}x{size[1]}.png")
    window(browser, DESKTOP)


def test_volunteers_in_pages_and_a_metrics_worst_pairs(
    browser: WebDriver, live_server, monkeypatch: pytest.MonkeyPatch, artifacts_dir: Path
) -> None:
    monkeypatch.setattr(volunteers_view, "PAGE_SIZE", 3)
    campaign = make_campaign(slug="paged", name="Paged study", exclude_failed_checks=None)
    config = make_metric_config("lev", label="lev[chars]")
    pairs = [
        make_pair(campaign, external_id=f"p{n}", origin="mrpc", source=f"Cat {n} sat.", hypothesis=f"A cat {n} sat.")
        for n in range(6)
    ]
    for n, pair in enumerate(pairs):
        make_score(pair, config, n / 10)
    people = [make_volunteer(campaign) for _ in range(7)]
    for v, volunteer in enumerate(people):
        for n, pair in enumerate(pairs):
            make_judgement(pair=pair, volunteer=volunteer, label=LABELS[(n + v) % 3])

    log_in(browser, live_server, "/staff/campaigns/paged/volunteers/")
    window(browser, DESKTOP)
    assert browser.find_element(By.ID, "volunteer-pages").text == "Volunteers 1\u20133 of 7, page 1 of 3. Next"
    with navigation(browser):
        browser.find_element(By.ID, "next-page").click()
    assert browser.find_element(By.ID, "volunteer-pages").text == "Volunteers 4\u20136 of 7, page 2 of 3. Previous Next"
    rows = browser.find_elements(By.CSS_SELECTOR, "#volunteers tbody tr th code")
    assert [row.text for row in rows] == [volunteer_pseudonym(v.token) for v in people[3:6]]
    assert browser.find_element(By.CSS_SELECTOR, '[data-count="started"]').text == "7"
    shots(browser, artifacts_dir, "staff-volunteers-page-2")

    browser.get(f"{live_server.url}/staff/campaigns/paged/pairs/")
    assert browser.find_element(By.ID, "pair-count").text.startswith("6 pairs.")
    Select(browser.find_element(By.ID, "id_metric")).select_by_visible_text("lev[chars]")
    with navigation(browser):
        browser.find_element(By.ID, "worst-submit").click()
    worst = browser.find_elements(By.CSS_SELECTOR, "#worst tbody tr")
    assert worst, "the worst disagreements are listed"
    assert [o.text for o in Select(browser.find_element(By.ID, "id_origin")).options] == ["any", "mrpc"]
    shots(browser, artifacts_dir, "staff-pair-list-metric")
