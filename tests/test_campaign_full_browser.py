"""The full-study, session-refusal and staff places pages in Chromium, at desktop and phone sizes."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.builders import make_judgement, make_volunteer
from tests.test_campaign_platform import prolific_campaign
from tests.test_staff_browser import log_in, window

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = ((1366, 768, "desktop"), (390, 844, "phone"))


def fits(browser: WebDriver) -> bool:
    """No sideways scrolling: the page is no wider than the viewport."""
    return browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")


def test_full_study_and_session_pages_and_staff_places(browser: WebDriver, live_server, artifacts_dir: Path) -> None:
    campaign = prolific_campaign(judges_per_pair=1)
    started = make_volunteer(campaign, participant_id="PID-1", session_id="S-1")
    for width, height, name in SIZES:
        window(browser, (width, height))
        browser.delete_all_cookies()
        browser.get(f"{live_server.url}/c/prolific-study/?PROLIFIC_PID={started.participant_id}&SESSION_ID=other")
        main = browser.find_element(By.TAG_NAME, "main").text
        assert "This participant ID is already taking part" in main and started.token not in browser.page_source
        assert fits(browser)
        browser.save_screenshot(str(artifacts_dir / f"crowd_session_refused_{name}.png"))
    for pair in campaign.pairs.filter(is_training=False, is_check=False):
        make_judgement(pair, make_volunteer(campaign))
        pair.judgement_count = 1
        pair.save(update_fields=["judgement_count"])
    for width, height, name in SIZES:
        window(browser, (width, height))
        browser.delete_all_cookies()
        browser.get(f"{live_server.url}/c/prolific-study/?PROLIFIC_PID=late&SESSION_ID=S-9")
        assert browser.find_element(By.TAG_NAME, "h1").text == "This study is full"
        assert not browser.find_elements(By.CSS_SELECTOR, "form.start-form")
        assert fits(browser)
        browser.save_screenshot(str(artifacts_dir / f"crowd_study_full_{name}.png"))
    log_in(browser, live_server, "/staff/campaigns/prolific-study/volunteers/")
    for width, height, name in SIZES:
        window(browser, (width, height))
        browser.get(f"{live_server.url}/staff/campaigns/prolific-study/volunteers/")
        places = browser.find_element(By.ID, "campaign-places").text
        assert places.startswith("Full: a new volunteer would get no pair")
        assert "Places remaining: 0 judgements free now, 0 held by volunteers at work, 0 still needed in all" in places
        browser.save_screenshot(str(artifacts_dir / f"crowd_staff_places_{name}.png"))
