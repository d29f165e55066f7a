"""The dashboard draws SPA's pairing, the group averages, the distance bins and the alt-test."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import cache
from selenium.webdriver.common.by import By

from annotate.models import Pair
from scoring.reports.dataset import Filters
from scoring.reports.service import compute_meta, meta_options
from tests.builders import make_scored_campaign
from tests.test_dashboard_browser import full_page_screenshot, log_in_as_staff, wait

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_new_meta_sections_render(browser_factory, live_server, artifacts_dir: Path) -> None:
    cache.clear()
    scored = make_scored_campaign(pairs_per_origin=25, slug="bins")
    for index, pair in enumerate(scored.pairs):
        Pair.objects.filter(pk=pair.pk).update(system=("sys-a", "sys-b", "sys-c")[index % 3])
    filters = Filters.build("volunteers")
    compute_meta(scored.campaign.pk, filters, meta_options(filters, None, None))
    staff = browser_factory()
    staff.set_window_size(1366, 768)
    log_in_as_staff(staff, live_server)
    staff.get(f"{live_server.url}/staff/dashboard/?campaign=bins")
    wait(staff, lambda b: b.find_elements(By.CSS_SELECTOR, "table[data-table=meta-distance-bins] tbody tr"), timeout=30)
    headers = [th.text for th in staff.find_elements(By.CSS_SELECTOR, "table[data-table=meta-distance-bins] thead th")]
    assert headers[:2] == ["Metric", "Statistic"] and len(headers) == 2 + 4
    assert all(h.startswith(f"Bin {i}: ") and h.endswith(")") for i, h in enumerate(headers[2:], start=1))
    bins = staff.find_element(By.ID, "meta-distance-bins").text
    assert "4 equal-count bins of normalised edit distance" in bins
    systems = staff.find_element(By.ID, "meta-systems").text
    assert "Soft Pairwise Accuracy over 3 system pairs: 0 compared paired on their shared sources" in systems
    assert "3 by a two-sample permutation over all items of both systems" in systems
    groups = staff.find_element(By.ID, "meta-groups").text
    assert "Spearman: every metric averaged over the same" in groups and "undefined = 0" in groups
    alt = staff.find_element(By.ID, "meta-alt-test")
    rows = alt.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == 4 and "cost-benefit margin ε = 0.1" in alt.text
    staff.execute_script("document.getElementById('section-distance-bins').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "dashboard_distance_bins_1366.png"))
    staff.execute_script("document.getElementById('section-ceiling').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "dashboard_alt_test_1366.png"))
    staff.execute_script("document.getElementById('section-systems').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "dashboard_systems_1366.png"))
    staff.set_window_size(390, 844)
    staff.execute_script("document.getElementById('section-distance-bins').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "dashboard_distance_bins_390.png"))
    staff.execute_script("document.getElementById('section-ceiling').scrollIntoView()")
    staff.save_screenshot(str(artifacts_dir / "dashboard_alt_test_390.png"))
    full_page_screenshot(staff, artifacts_dir / "dashboard_meta_new_sections_390.png")
