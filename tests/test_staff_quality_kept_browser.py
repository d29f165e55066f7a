"""The volunteers page of a large campaign in headless Chromium: the verdicts being computed,
then the kept ones dated while they refresh; screenshots at 1366x768 and 390x844 in
test-artifacts/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.cache import cache, caches
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.builders import make_judgement, make_volunteer
from tests.test_dashboard_browser import full_page_screenshot
from tests.test_staff_browser import DESKTOP, PHONE, log_in, no_sideways_scroll, window
from tests.test_staff_quality_kept import LABELS, study, work

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_volunteers_page_says_how_old_its_verdicts_are(
    browser: WebDriver, live_server, artifacts_dir: Path, settings, queue_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    cache.clear()
    caches["analyses"].clear()
    settings.PARAEVAL_INLINE_QUALITY_JUDGEMENTS = 10  # the study has 20 corpus judgements
    campaign, pairs, _ = study("looked")
    log_in(browser, live_server, "/staff/campaigns/looked/volunteers/")
    window(browser, DESKTOP)
    notice = browser.find_element(By.ID, "verdicts-notice").text
    assert notice.startswith("Quality verdicts are being computed for the first time. Quality verdicts: waiting")
    assert browser.find_elements(By.ID, "volunteer-summary") == []  # no count rather than zeros
    full_page_screenshot(browser, artifacts_dir / "volunteers-computing-1366x768.png")

    work(queue_dir)  # the interactive worker's refresh
    newcomer = make_volunteer(campaign)
    make_judgement(pairs[0], newcomer, LABELS[0])
    make_judgement(pairs[1], newcomer, LABELS[1])
    browser.refresh()
    notice = browser.find_element(By.ID, "verdicts-notice").text
    assert re.fullmatch(
        r"Quality verdicts as of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, 2 answers since, refreshing\. "
        r"Quality verdicts: waiting for an interactive worker, queued at \d\d:\d\d:\d\d UTC; "
        r"queued again at \d\d:\d\d:\d\d UTC if no worker has started it\.",
        notice,
    ), notice
    assert browser.find_element(By.CSS_SELECTOR, '[data-count="started"]').text == "4"
    full_page_screenshot(browser, artifacts_dir / "volunteers-stale-1366x768.png")
    window(browser, PHONE)
    assert no_sideways_scroll(browser)
    full_page_screenshot(browser, artifacts_dir / "volunteers-stale-390x844.png")
