"""The dashboard shows each interval twice, pairs only and pairs and volunteers, with the sentence
on when each is the right one (headless Chromium, 1366x768 and 390x844)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import cache
from selenium.webdriver.common.by import By

from scoring.reports.dataset import Filters
from scoring.reports.service import compute_intervals, default_resamples, default_seed
from tests.builders import make_scored_campaign
from tests.test_dashboard_browser import log_in_as_staff, wait

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SENTENCE = (
    "Pairs only: for conclusions about these volunteers (their labels taken as fixed). Pairs and "
    "volunteers: for conclusions about volunteers like them (who happened to volunteer is resampled "
    "too; a little wide on purpose)."
)


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (390, 844)])
def test_both_intervals_side_by_side(browser_factory, live_server, artifacts_dir: Path, width, height) -> None:
    cache.clear()
    built = make_scored_campaign(slug="raters", name="Raters", judges=3)
    # What the interactive worker would do for the page's default view (no worker runs here).
    compute_intervals(built.campaign.pk, Filters.build(), default_resamples(), default_seed())
    staff = browser_factory()
    staff.set_window_size(width, height)
    log_in_as_staff(staff, live_server)
    wait(staff, lambda b: b.find_element(By.ID, "dashboard").get_attribute("data-intervals") == "ready", 90)
    table = wait(staff, lambda b: b.find_element(By.CSS_SELECTOR, "table[data-table=ranking]"))
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    first_block = [row.find_element(By.CSS_SELECTOR, "td.stat-name").text for row in rows[:9]]
    assert first_block == [
        "ROC AUC",
        "AUC 95% CI, pairs only",
        "AUC 95% CI, pairs and volunteers",
        "Pearson",
        "Pearson 95% CI, pairs only",
        "Pearson 95% CI, pairs and volunteers",
        "Spearman",
        "Spearman 95% CI, pairs only",
        "Spearman 95% CI, pairs and volunteers",
    ]
    two_way = rows[2].find_elements(By.CSS_SELECTOR, "td.ci")
    assert two_way and "\u2013" in two_way[-1].text  # an interval: low, en dash, high
    assert two_way[-1].get_attribute("title").startswith("95% bootstrap interval over pairs and ")
    caption = staff.find_element(By.CSS_SELECTOR, "#table-ranking p.caption").text
    assert caption.endswith(SENTENCE)
    staff.execute_script("document.getElementById('table-ranking').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / f"dashboard_rater_intervals_{width}x{height}.png"))
