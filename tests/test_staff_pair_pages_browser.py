"""The pair list and a pair's page in headless Chromium: from the list to the pair, no sideways
scroll on a phone; screenshots at 1366x768 and 390x844 in test-artifacts/."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.browser_support import navigation
from tests.builders import make_campaign, make_judgement, make_metric_config, make_pair, make_score, make_volunteer
from tests.test_dashboard_browser import full_page_screenshot
from tests.test_staff_browser import DESKTOP, PHONE, log_in, no_sideways_scroll, window

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_from_the_pair_list_to_a_pair(browser: WebDriver, live_server, artifacts_dir: Path) -> None:
    campaign = make_campaign(slug="look", name="Look")
    pair = make_pair(
        campaign,
        external_id="1089874-1089925",
        source="PCCW's chief operating officer, Mike Butcher, and Alex Arena, the chief financial officer, "
        "will report directly to Mr So.",
        hypothesis="Current Chief Operating Officer Mike Butcher and Group Chief Financial Officer Alex Arena "
        "will report to So.",
        gold_label=True,
        origin="mrpc",
    )
    make_pair(campaign, external_id="other", source="Dogs bark.", hypothesis="Dogs yap.", origin="paws")
    for label in ("same_meaning", "mostly_similar", "same_meaning"):
        make_judgement(pair=pair, volunteer=make_volunteer(campaign), label=label)
    make_score(pair, make_metric_config("lev", label="lev[words]"), 0.4127)
    log_in(browser, live_server, "/staff/campaigns/look/pairs/")
    window(browser, DESKTOP)
    browser.find_element(By.ID, "id_q").send_keys("Butcher")
    with navigation(browser):
        browser.find_element(By.ID, "search-submit").click()
    assert browser.find_element(By.ID, "pair-count").text.startswith("1 pair.")
    full_page_screenshot(browser, artifacts_dir / "pairs-1366x768.png")
    window(browser, PHONE)
    assert no_sideways_scroll(browser)
    full_page_screenshot(browser, artifacts_dir / "pairs-390x844.png")
    window(browser, DESKTOP)
    with navigation(browser):
        browser.find_element(By.LINK_TEXT, "1089874-1089925").click()
    assert browser.find_element(By.ID, "judgements-title").text == "3 judgements"
    marked = [mark.text for mark in browser.find_elements(By.CSS_SELECTOR, "mark.diff")]
    assert "PCCW's" in marked
    full_page_screenshot(browser, artifacts_dir / "pair-1366x768.png")
    window(browser, PHONE)
    assert no_sideways_scroll(browser)
    full_page_screenshot(browser, artifacts_dir / "pair-390x844.png")
