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


def test_the_dashboard_leads_to_pairs_from_its_worst_disagreements_and_its_points(
    browser: WebDriver, live_server, artifacts_dir: Path
) -> None:
    """A pair's page is reached from the dashboard's table of a metric's worst
    disagreements and from the points of the score / edit-distance figure (the paper's Figure 2)."""
    from django.core.cache import cache
    from selenium.webdriver.common.action_chains import ActionChains

    from scoring.reports.service import shared_cache
    from tests.builders import make_scored_campaign
    from tests.test_staff_browser import wait

    cache.clear()
    shared_cache().clear()
    built = make_scored_campaign(slug="linked", name="Linked")
    names = {pair.pk: pair.external_id for pair in built.pairs}
    log_in(browser, live_server, "/staff/dashboard/?campaign=linked")
    window(browser, DESKTOP)
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#worst-tables a[data-pair]"))
    section = browser.find_element(By.ID, "section-worst")
    browser.execute_script("arguments[0].scrollIntoView()", section)
    browser.save_screenshot(str(artifacts_dir / "dashboard-worst-1366x768.png"))
    window(browser, PHONE)
    assert no_sideways_scroll(browser)
    browser.execute_script("arguments[0].scrollIntoView()", section)
    browser.save_screenshot(str(artifacts_dir / "dashboard-worst-390x844.png"))
    window(browser, DESKTOP)
    lev = built.configs["lev"].pk
    first = browser.find_element(By.CSS_SELECTOR, f'#worst-tables tr[data-metric="{lev}"] a[data-pair]')
    pair_id = int(first.get_attribute("data-pair"))
    assert first.text == names[pair_id]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", first)  # not under the bar
    with navigation(browser):
        first.click()
    assert browser.current_url == f"{live_server.url}/staff/campaigns/linked/pairs/{pair_id}/"
    assert browser.find_element(By.TAG_NAME, "h1").text.startswith(f"Pair {names[pair_id]}")

    # A point of the figure: clicked where Chart.js drew it, it opens the pair it stands for
    # (or one drawn on the same spot).
    browser.get(f"{live_server.url}/staff/dashboard/?campaign=linked")
    canvas_id = f"scatter-{lev}"
    wait(
        browser,
        lambda b: b.execute_script(
            f"const c = Chart.getChart('{canvas_id}'); return c && c.getDatasetMeta(0).data.length > 0"
        ),
    )
    canvas = browser.find_element(By.ID, canvas_id)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", canvas)
    x, y, width, height, under = browser.execute_script(
        """
        const canvas = document.getElementById(arguments[0]);
        const chart = Chart.getChart(canvas);
        const point = chart.getDatasetMeta(0).data[0];
        const under = [];
        chart.data.datasets.forEach((dataset, d) => chart.getDatasetMeta(d).data.forEach((drawn, i) => {
          const near = Math.hypot(drawn.x - point.x, drawn.y - point.y) < 6;
          if (dataset.data[i] && dataset.data[i].pair && near) under.push(dataset.data[i].pair);
        }));
        return [point.x, point.y, canvas.clientWidth, canvas.clientHeight, under];
        """,
        canvas_id,
    )
    with navigation(browser):
        ActionChains(browser).move_to_element_with_offset(canvas, x - width / 2, y - height / 2).click().perform()
    opened = int(browser.current_url.rstrip("/").rsplit("/", 1)[1])
    assert opened in under and browser.current_url.startswith(f"{live_server.url}/staff/campaigns/linked/pairs/")
    cache.clear()
    shared_cache().clear()


def test_a_large_campaigns_worst_disagreements_dated(
    browser: WebDriver, live_server, artifacts_dir: Path, settings, queue_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    """Above the dashboard's bound the list comes from the interactive worker: "being computed"
    first, then the list, then the last list dated after a new answer; no sideways scroll."""
    from django.core.cache import cache, caches

    from tests.test_staff_pair_list_scale import independent_worst, scored_campaign, work

    cache.clear()
    caches["analyses"].clear()
    settings.PARAEVAL_DASHBOARD_INLINE_PAIRS = 10
    campaign, closer, _ = scored_campaign("big", 30, seed=11)
    log_in(browser, live_server, f"/staff/campaigns/big/pairs/?metric={closer.pk}")
    window(browser, DESKTOP)
    notice = browser.find_element(By.ID, "worst-notice").text
    assert notice.startswith("The worst disagreements are being computed for the first time.")
    assert browser.find_element(By.CSS_SELECTOR, "#worst tbody").text == "The list is being computed (see above)."
    work(queue_dir)
    kept = [row[0] for row in independent_worst(campaign, closer)]
    make_judgement(pair=campaign.pairs.get(external_id="big-0"), label="same_meaning")
    browser.refresh()
    notice = browser.find_element(By.ID, "worst-notice").text
    assert notice.startswith("Worst disagreements as of ") and ", 1 answer since, refreshing." in notice
    assert [row.text for row in browser.find_elements(By.CSS_SELECTOR, "#worst tbody tr th a")] == kept
    browser.execute_script("document.getElementById('worst-title').scrollIntoView()")
    browser.save_screenshot(str(artifacts_dir / "pairs-worst-dated-1366x768.png"))
    window(browser, PHONE)
    assert no_sideways_scroll(browser)
    browser.execute_script("document.getElementById('worst-title').scrollIntoView()")
    browser.save_screenshot(str(artifacts_dir / "pairs-worst-dated-390x844.png"))
    work(queue_dir)
    browser.refresh()
    assert not browser.find_elements(By.ID, "worst-notice")
    names = [row.text for row in browser.find_elements(By.CSS_SELECTOR, "#worst tbody tr th a")]
    assert names == [row[0] for row in independent_worst(campaign, closer)]
    cache.clear()
    caches["analyses"].clear()
