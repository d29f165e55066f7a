"""The settings form, a clone and a definition file round-tripped, in headless Chromium.

Screenshots of the settings page at 1366x768 and 390x844 go to test-artifacts/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

import paraeval
from annotate.models import Campaign, Pair
from tests.browser_support import navigation
from tests.builders import make_campaign, make_judgement, make_pair, make_training_pairs, make_volunteer
from tests.test_dashboard_browser import full_page_screenshot
from tests.test_staff_browser import DESKTOP, PHONE, log_in, no_sideways_scroll, window

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_settings_clone_and_definition_round_trip(
    browser: WebDriver, live_server, tmp_path: Path, artifacts_dir: Path
) -> None:
    campaign = make_campaign(slug="study", name="Study", judges_per_pair=3, check_every=10)
    make_training_pairs(campaign, 2)
    make_pair(campaign, source="Check A.", hypothesis="Check B.", is_check=True, expected_label="same_meaning")
    judged = make_pair(campaign, external_id="p1", source="A cat.", hypothesis="A feline.")
    make_judgement(pair=judged, volunteer=make_volunteer(campaign))

    log_in(browser, live_server, "/staff/")
    window(browser, DESKTOP)
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, 'tr[data-campaign="study"] a.settings-link').click()
    help_line = browser.find_element(By.ID, "help-judges_per_pair").text
    assert help_line == "How many volunteers judge each pair; 2 or more makes agreement measurable."
    field = browser.find_element(By.ID, "id_quota")
    field.clear()
    field.send_keys("25")
    with navigation(browser):
        browser.find_element(By.ID, "save-settings").click()
    assert browser.find_element(By.ID, "settings-saved").text == "Saved."
    assert Campaign.objects.get(slug="study").quota == 25
    full_page_screenshot(browser, artifacts_dir / "campaign-settings-1366x768.png")
    window(browser, PHONE)
    assert no_sideways_scroll(browser)
    full_page_screenshot(browser, artifacts_dir / "campaign-settings-390x844.png")
    window(browser, DESKTOP)

    browser.find_element(By.ID, "id_clone_slug").send_keys("study-again")
    with navigation(browser):
        browser.find_element(By.ID, "clone-submit").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Settings of Study (copy)"
    assert browser.find_element(By.CSS_SELECTOR, '[data-count="training"]').text == "2"
    assert browser.find_element(By.CSS_SELECTOR, '[data-count="checks"]').text == "1"
    assert browser.find_element(By.CSS_SELECTOR, '[data-count="pairs"]').text == "0"
    clone = Campaign.objects.get(slug="study-again")
    assert (clone.quota, clone.judges_per_pair, clone.check_every, clone.volunteers.count()) == (25, 3, 10, 0)
    assert clone.team is not None and clone.team.name == "Lab"  # a clone stays in its campaign's team

    # The definition file, as the download link serves it, read back as a new campaign.
    href = browser.find_element(By.ID, "definition-download-pairs").get_attribute("href")
    text = browser.execute_async_script(
        "const done = arguments[arguments.length - 1]; fetch(arguments[0]).then(r => r.text()).then(done);", href
    )
    data = json.loads(text)
    assert data["paraeval_version"] == paraeval.__version__
    path = tmp_path / "study-again-definition.json"
    path.write_text(text)
    browser.get(f"{live_server.url}/staff/campaigns/new/")
    browser.find_element(By.ID, "id_definition").send_keys(str(path))
    browser.find_element(By.ID, "id_definition_slug").send_keys("elsewhere")
    with navigation(browser):
        browser.find_element(By.ID, "definition-submit").click()
    assert browser.find_element(By.ID, "definition-loaded").text == (
        f"Created from a definition written by ParaEval {paraeval.__version__}: 3 pairs imported."
    )
    assert Campaign.objects.get(slug="elsewhere").team.name == "Lab"  # the one team, chosen by default
    fields = ("is_training", "is_check", "source", "hypothesis", "expected_label", "training_position")
    assert list(Pair.objects.filter(campaign__slug="elsewhere").order_by("id").values_list(*fields)) == list(
        Pair.objects.filter(campaign=clone).order_by("id").values_list(*fields)
    )
    full_page_screenshot(browser, artifacts_dir / "campaign-from-definition-1366x768.png")
