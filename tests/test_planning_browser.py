"""The planner's section of a campaign's settings page, in headless Chromium.

Screenshots at 1366x768 and 390x844 go to test-artifacts/ (campaign-plan-*.png).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from tests.browser_support import navigation
from tests.test_dashboard_browser import full_page_screenshot
from tests.test_planning_campaign import planned_campaign
from tests.test_staff_browser import DESKTOP, PHONE, log_in, no_sideways_scroll, window

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_grid_for_two_chosen_metrics(browser: WebDriver, live_server, artifacts_dir: Path) -> None:
    planned_campaign()
    log_in(browser, live_server, "/staff/campaigns/plan-me/settings/")
    window(browser, DESKTOP)
    assert browser.find_element(By.ID, "plan-title").text == "Plan the campaign's size"
    assert Select(browser.find_element(By.ID, "id_plan-a")).first_selected_option.text == "BLEU"
    assert Select(browser.find_element(By.ID, "id_plan-b")).first_selected_option.text == "LEV"
    for name, value in (("pairs", "100,200"), ("judges", "1,3"), ("reward", "2"), ("fee", "0.33")):
        field = browser.find_element(By.ID, f"id_plan-{name}")
        field.clear()
        field.send_keys(value)
    with navigation(browser):
        browser.find_element(By.ID, "make-plan").click()
    headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#plan-grid th")]
    assert headers == [
        "Pairs", "Judges per pair", "Judgements", "Labelled pairs", "Expected difference", "Interval width",
        "Power, fixed design", "Power, confidence sequence", "Power, group-sequential (its maximum pairs)",
        "Participants", "Cost",
    ]  # fmt: skip
    rows = [
        [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
        for tr in browser.find_elements(By.CSS_SELECTOR, "#plan-grid tbody tr")
    ]
    assert [row[:3] for row in rows] == [
        ["100", "1", "100"],
        ["100", "3", "300"],
        ["200", "1", "200"],
        ["200", "3", "600"],
    ]
    assert rows[3][-2:] == ["15", "39.90"]
    assert browser.find_element(By.ID, "plan-summary").text.startswith(
        "Paired \u0394AUC of two metrics (DeLong): BLEU vs LEV, on 240 scored pool pairs. "
        "Truth: the pool's gold labels;"
    )
    browser.execute_script("document.getElementById('plan').scrollIntoView()")  # the grid above the form
    browser.save_screenshot(str(artifacts_dir / "campaign-plan-1366x768.png"))
    window(browser, PHONE)
    assert no_sideways_scroll(browser)
    browser.execute_script("document.getElementById('plan-grid').scrollIntoView()")
    browser.save_screenshot(str(artifacts_dir / "campaign-plan-390x844.png"))
    full_page_screenshot(browser, artifacts_dir / "campaign-plan-full-390x844.png")

    # A mistake is named, the form keeps what was typed.
    window(browser, DESKTOP)
    Select(browser.find_element(By.ID, "id_plan-b")).select_by_visible_text("BLEU")
    with navigation(browser):
        browser.find_element(By.ID, "make-plan").click()
    assert browser.find_element(By.ID, "plan-problem").text == "metrics: 'BLEU' is named twice"
    assert browser.find_element(By.ID, "id_plan-pairs").get_attribute("value") == "100,200"
