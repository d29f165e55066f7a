"""On screen (headless Chromium, 1366x768 and 390x844): the volunteers page shows Verdict and
Override without sideways scrolling; the training feedback page on a phone does not say "press
Enter"; the 503 page and the count definitions read right. Screenshots go to test-artifacts/."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import override_settings
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from annotate.models import Volunteer
from tests.browser_support import navigation
from tests.builders import make_campaign, make_pair, make_training_pairs
from tests.test_campaign_staff_quality import study
from tests.test_staff_browser import DESKTOP, PHONE, log_in, no_sideways_scroll, window

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def visible_right_edge(browser: WebDriver, selector: str) -> bool:
    """Whether every element matching ``selector`` ends inside the viewport (no scrolling needed)."""
    return browser.execute_script(
        "return [...document.querySelectorAll(arguments[0])].every("
        "e => e.getBoundingClientRect().right <= document.documentElement.clientWidth + 0.5)",
        selector,
    )


def test_the_volunteers_page_shows_verdict_and_override_at_1366(browser, live_server, artifacts_dir: Path) -> None:
    campaign, *_ = study()
    Volunteer.objects.filter(campaign=campaign).update(exclusion_note="answered too fast on purpose")
    log_in(browser, live_server, f"/staff/campaigns/{campaign.slug}/volunteers/")
    for size, suffix in ((DESKTOP, "desktop"), (PHONE, "phone")):
        window(browser, size)
        browser.execute_script("window.scrollTo(0, 0)")
        browser.save_screenshot(str(artifacts_dir / f"volunteers_{suffix}.png"))
        assert no_sideways_scroll(browser), suffix
        scroller = browser.find_element(By.CSS_SELECTOR, ".table-scroll")
        assert browser.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth", scroller), suffix
        assert visible_right_edge(browser, "#volunteers td.verdict, #volunteers .override-form button"), suffix


def test_the_feedback_page_on_a_phone_does_not_say_press_enter(browser, live_server, artifacts_dir: Path) -> None:
    campaign = make_campaign(slug="feedback-screen", quota=1)
    make_training_pairs(campaign, 1)
    make_pair(campaign)
    browser.get(f"{live_server.url}/c/feedback-screen/")
    browser.execute_script(
        "document.querySelector('input[name=consent]').click();"
        "document.querySelector('input[name=english_level][value=advanced]').click();"
    )
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, ".start-form button[type=submit]").click()
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "[data-start-training]").click()
    # The pair page does not tell a phone to press keys 1-5 either.
    keys = browser.find_element(By.CSS_SELECTOR, ".keyboard-hint")
    for size, suffix, shown in ((DESKTOP, "desktop", True), (PHONE, "phone", False)):
        window(browser, size)
        browser.save_screenshot(str(artifacts_dir / f"pair_keys_{suffix}.png"))
        assert keys.is_displayed() is shown, suffix
    window(browser, DESKTOP)
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "button.answer").click()
    assert "/training/" in browser.current_url
    hint = browser.find_element(By.CSS_SELECTOR, ".enter-hint")
    for size, suffix, shown in ((DESKTOP, "desktop", True), (PHONE, "phone", False)):
        window(browser, size)
        browser.save_screenshot(str(artifacts_dir / f"feedback_{suffix}.png"))
        assert hint.is_displayed() is shown, suffix


@override_settings(DEBUG=False)
def test_the_503_page_on_screen(browser, live_server, artifacts_dir: Path) -> None:
    from unittest import mock

    from django.db import OperationalError

    # The first query of a volunteer page fails as it does while PostgreSQL is down.
    with mock.patch("annotate.views._campaign_language", side_effect=OperationalError("connection refused")):
        for size, suffix in ((DESKTOP, "desktop"), (PHONE, "phone")):
            window(browser, size)
            browser.get(f"{live_server.url}/c/anything/")
            browser.save_screenshot(str(artifacts_dir / f"unavailable_{suffix}.png"))
            assert "Your answers so far are safe" in browser.page_source
            assert no_sideways_scroll(browser), suffix


def test_the_count_definitions_and_the_slug_help_on_screen(browser, live_server, artifacts_dir: Path) -> None:
    study()
    log_in(browser, live_server, "/staff/")
    for path, name in (
        ("/staff/", "staff_home"),
        ("/staff/export/", "exports"),
        ("/admin/annotate/campaign/add/", "admin_campaign_add"),
    ):
        browser.get(f"{live_server.url}{path}")
        for size, suffix in ((DESKTOP, "desktop"), (PHONE, "phone")):
            window(browser, size)
            browser.execute_script("window.scrollTo(0, 0)")
            browser.save_screenshot(str(artifacts_dir / f"{name}_{suffix}.png"))
        window(browser, DESKTOP)
        if name == "admin_campaign_add":
            help_text = browser.find_element(By.ID, "id_slug_helptext").text
            assert help_text == "Used in the volunteer link /c/SLUG/ (letters, digits, hyphens and underscores)."
        else:
            definition = browser.find_element(By.ID, "counts-definition")
            assert definition.is_displayed() and "check pairs" in definition.text
            assert no_sideways_scroll(browser), name


def test_the_api_docs_prefill_a_working_import_body(browser, live_server, artifacts_dir: Path) -> None:
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    log_in(browser, live_server, "/api/docs/")
    window(browser, DESKTOP)
    wait = WebDriverWait(browser, 30, poll_frequency=0.2)
    summary = wait.until(
        ec.element_to_be_clickable((By.CSS_SELECTOR, "#operations-pairs-pairs_create .opblock-summary"))
    )
    summary.click()
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, "#operations-pairs-pairs_create .try-out__btn"))).click()
    body = wait.until(
        ec.presence_of_element_located((By.CSS_SELECTOR, "#operations-pairs-pairs_create textarea.body-param__text"))
    )
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", body)
    browser.save_screenshot(str(artifacts_dir / "api_docs_example_desktop.png"))
    text = body.get_attribute("value")
    assert '"campaign": "demo"' in text and '"mrpc-1"' in text and '"dry_run": true' in text
