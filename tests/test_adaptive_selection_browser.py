"""Adaptive selection in headless Chromium: the setting on the settings page (with its refusal)
and the weighted table that opens an adaptive campaign's dashboard.

Screenshots at 1366x768 and 390x844 go to test-artifacts/.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import cache
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from annotate.models import Campaign, Pair
from tests.browser_support import navigation
from tests.builders import make_campaign, make_metric_config, make_pair, make_score, make_scored_campaign
from tests.test_dashboard_browser import full_page_screenshot, wait
from tests.test_staff_browser import DESKTOP, PHONE, log_in, no_sideways_scroll, window

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_setting_refuses_an_unscored_metric_then_plans_the_order(
    browser: WebDriver, live_server, artifacts_dir: Path
) -> None:
    campaign = make_campaign(slug="study", name="Study")
    bleu, chrf = make_metric_config("bleu", label="BLEU"), make_metric_config("chrf", label="chrF")
    for x, y in ((0.1, 0.3), (0.2, 0.1), (0.3, 0.2)):
        pair = make_pair(campaign)
        make_score(pair, bleu, x)
        make_score(pair, chrf, y)
    log_in(browser, live_server, "/staff/campaigns/study/settings/")
    window(browser, DESKTOP)
    assert browser.find_element(By.ID, "help-selection").text == (
        "Balanced: every pair equally likely. Adaptive: pairs where the compared metrics disagree come first, "
        "and the dashboard weights every figure so it still describes the whole pool."
    )
    Select(browser.find_element(By.ID, "id_selection")).select_by_value("adaptive")
    browser.find_element(By.ID, "id_selection_metrics").send_keys("bleu, meteor")
    with navigation(browser):
        browser.find_element(By.ID, "save-settings").click()
    error = browser.find_element(By.CSS_SELECTOR, '[data-setting="selection_metrics"] .form-error').text
    assert error == "No scores of 'meteor' in this campaign; the metrics that scored its pairs are: bleu, chrf."
    full_page_screenshot(browser, artifacts_dir / "adaptive-settings-refused-1366x768.png")
    window(browser, PHONE)
    assert no_sideways_scroll(browser)
    full_page_screenshot(browser, artifacts_dir / "adaptive-settings-refused-390x844.png")
    window(browser, DESKTOP)
    field = browser.find_element(By.ID, "id_selection_metrics")
    field.clear()
    field.send_keys("bleu, chrf")
    with navigation(browser):
        browser.find_element(By.ID, "save-settings").click()
    assert browser.find_element(By.ID, "settings-saved").text == "Saved."
    assert Campaign.objects.get(slug="study").selection == "adaptive"
    assert not Pair.objects.filter(campaign=campaign, selection_probability__isnull=True).exists()


def test_the_dashboard_opens_with_the_weighted_table(browser: WebDriver, live_server, artifacts_dir: Path) -> None:
    cache.clear()
    built = make_scored_campaign(slug="adapt", name="Adaptive", selection="adaptive")
    pairs = list(Pair.objects.filter(campaign=built.campaign, is_training=False).order_by("id"))
    for index, pair in enumerate(pairs):
        q = 0.1 + 0.9 * (index % 5) / 4
        Pair.objects.filter(pk=pair.pk).update(selection_probability=q, selection_key=(index + 1) / 100 / q)
    log_in(browser, live_server, "/staff/dashboard/?campaign=adapt")
    window(browser, DESKTOP)
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#table-weighted h2"))
    assert browser.find_element(By.CSS_SELECTOR, "#table-weighted h2").text == (
        "Weighted for the whole pool (adaptive selection)"
    )
    caption = browser.find_element(By.CSS_SELECTOR, "#table-weighted .caption").text
    assert caption.startswith("These figures are weighted: this campaign serves the pairs where the metrics")
    headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#table-weighted thead th")]
    assert headers[-5:] == ["AUC", "AUC ± 1.96 SE", "Pearson", "Spearman", "Pairs"]
    assert browser.find_element(By.CSS_SELECTOR, "#table-weighted-delta h2").text == (
        "Weighted ΔAUC between metrics (adaptive selection)"
    )
    browser.execute_script("document.getElementById('section-weighted').scrollIntoView()")
    full_page_screenshot(browser, artifacts_dir / "adaptive-dashboard-1366x768.png")
    window(browser, PHONE)
    full_page_screenshot(browser, artifacts_dir / "adaptive-dashboard-390x844.png")
