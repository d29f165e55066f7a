"""The paired-tests section in headless Chromium: each matrix shows its test and the smallest
p it can reach, at desktop and phone sizes."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from django.core.cache import cache
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from scoring.reports.dataset import Filters
from scoring.reports.service import compute_meta, meta_options, shared_cache
from tests.builders import make_scored_campaign
from tests.test_dashboard_browser import log_in_as_staff, wait

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_floor_note_beside_each_matrix(browser_factory, live_server, artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    cache.clear()
    shared_cache().clear()
    scored = make_scored_campaign(slug="paired", pairs_per_origin=10)
    filters = Filters.build("volunteers")
    compute_meta(scored.campaign.pk, filters, meta_options(filters, None, None))
    staff = browser_factory()
    staff.set_window_size(1366, 768)
    log_in_as_staff(staff, live_server)
    staff.get(f"{live_server.url}/staff/dashboard/?campaign=paired")
    wait(staff, lambda b: b.find_elements(By.CSS_SELECTOR, "table[data-table=meta-heatmap]"), timeout=30)
    floor = staff.find_element(By.CSS_SELECTOR, "#meta-heatmap .meta-floor")
    assert floor.text == "DeLong test (analytic): no resampling floor on its p-values."
    assert floor.get_attribute("data-reachable") == "true"
    Select(staff.find_element(By.ID, "meta-statistic")).select_by_value("spearman")
    wait(staff, lambda b: "Permutation" in b.find_element(By.CSS_SELECTOR, "#meta-heatmap .meta-floor").text)
    floor = staff.find_element(By.CSS_SELECTOR, "#meta-heatmap .meta-floor")
    assert floor.text == (
        "Permutation test, 1199 resamples: the smallest reachable Holm-adjusted p over 6 comparisons is 0.01."
    )
    caption = staff.find_element(By.CSS_SELECTOR, "#meta-ranking .caption").text
    assert "permutation test, holm correction" in caption
    headers = [th.text for th in staff.find_elements(By.CSS_SELECTOR, "table[data-table=meta-paired] thead th")]
    assert "p DeLong" in headers
    for width, height in ((1366, 768), (390, 844)):
        staff.set_window_size(width, height)
        staff.execute_script("document.getElementById('section-paired').scrollIntoView()")
        shot = staff.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
        (artifacts_dir / f"paired_tests_{width}x{height}.png").write_bytes(base64.b64decode(shot["data"]))


def test_two_way_intervals_beside_the_pairs_only_ones(browser_factory, live_server, artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    """The paired ROC AUC (Spearman, Kendall, cross-validated accuracy) comparisons and SPA show both
    intervals, with the sentence on when each is the one to quote; screenshots of both sections at
    desktop and phone sizes."""
    from annotate.models import Pair
    from scoring.analysis.rater_bootstrap import WHEN_PAIRS_AND_VOLUNTEERS, WHEN_PAIRS_ONLY

    cache.clear()
    shared_cache().clear()
    scored = make_scored_campaign(slug="twoway", pairs_per_origin=10)
    for index, pair in enumerate(Pair.objects.filter(campaign=scored.campaign).order_by("pk")):
        Pair.objects.filter(pk=pair.pk).update(system=("sys-a", "sys-b", "sys-c")[index % 3])
    filters = Filters.build("volunteers")
    compute_meta(scored.campaign.pk, filters, meta_options(filters, None, None))
    staff = browser_factory()
    staff.set_window_size(1366, 768)
    log_in_as_staff(staff, live_server)
    staff.get(f"{live_server.url}/staff/dashboard/?campaign=twoway")
    wait(staff, lambda b: b.find_elements(By.CSS_SELECTOR, "table[data-table=meta-system-metrics]"), timeout=30)
    sentence = f"{WHEN_PAIRS_ONLY} {WHEN_PAIRS_AND_VOLUNTEERS}"
    headers = [th.text for th in staff.find_elements(By.CSS_SELECTOR, "table[data-table=meta-paired] thead th")]
    assert headers[5:7] == ["95% CI, pairs only", "95% CI, pairs and volunteers"]
    rows = staff.find_elements(By.CSS_SELECTOR, "table[data-table=meta-paired] tbody tr")
    # Every ROC AUC comparison has its two-way interval (low, en dash, high), not a dash alone.
    two_way = [row.find_elements(By.CSS_SELECTOR, "th, td")[6].text for row in rows]
    assert two_way and all(re.fullmatch("-?[0-9.]+\u2013-?[0-9.]+", text) for text in two_way), two_way
    assert sentence in staff.find_element(By.CSS_SELECTOR, "#meta-paired .caption").text
    # Spearman, Kendall and the cross-validated accuracy have their two-way intervals too.
    refit = {
        "spearman": "",
        "kendall": ", \u03c4_b recounted on each replicate's human scores",
        "accuracy_cv": ", every fold's threshold refitted on each replicate's labels",
    }
    pairs_only = {
        "spearman": "the paired bootstrap's",
        "kendall": "the jackknife's",
        "accuracy_cv": "the paired bootstrap's",
    }
    for statistic in ("spearman", "kendall", "accuracy_cv"):
        expected = "-?[0-9.]+\u2013-?[0-9.]+"
        Select(staff.find_element(By.ID, "meta-statistic")).select_by_value(statistic)
        wait(staff, lambda b, s=statistic: b.find_element(By.ID, "meta-statistic").get_attribute("value") == s)
        rows = staff.find_elements(By.CSS_SELECTOR, "table[data-table=meta-paired] tbody tr")
        cells = [row.find_elements(By.CSS_SELECTOR, "th, td")[6].text for row in rows]
        assert cells and all(re.fullmatch(expected, text) for text in cells), (statistic, cells)
        caption = staff.find_element(By.CSS_SELECTOR, "#meta-paired .caption").text
        assert caption == (
            f"95% CI, pairs only: {pairs_only[statistic]} interval of A \u2212 B. Pairs and volunteers: the two-way "
            f"bootstrap, the same draws of pairs and of volunteers for both metrics{refit[statistic]}. {sentence}"
        ), caption
        for width, height in ((1366, 768), (390, 844)):
            staff.set_window_size(width, height)
            staff.execute_script("document.getElementById('meta-paired').scrollIntoView()")
            shot = staff.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
            (artifacts_dir / f"two_way_paired_{statistic}_{width}x{height}.png").write_bytes(
                base64.b64decode(shot["data"])
            )
        staff.set_window_size(1366, 768)
    Select(staff.find_element(By.ID, "meta-statistic")).select_by_value("auc")
    spa_headers = [
        th.text for th in staff.find_elements(By.CSS_SELECTOR, "table[data-table=meta-system-metrics] thead th")
    ]
    assert spa_headers[4:6] == ["SPA 95% CI, pairs only", "SPA 95% CI, pairs and volunteers"]
    spa_caption = staff.find_element(By.CSS_SELECTOR, "#meta-systems .caption").text
    assert sentence in spa_caption and "recomputed from a draw of the" in spa_caption
    for width, height in ((1366, 768), (390, 844)):
        staff.set_window_size(width, height)
        for section in ("paired", "systems"):
            staff.execute_script(f"document.getElementById('meta-{section}').scrollIntoView()")
            shot = staff.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
            (artifacts_dir / f"two_way_{section}_{width}x{height}.png").write_bytes(base64.b64decode(shot["data"]))
