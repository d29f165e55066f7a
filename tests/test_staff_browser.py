"""Staff pages on screen (headless Chromium): no dead ends, one navigation bar, a readable dashboard.

Measured at 1366x768 and 1920x1080 (desktop) and 390x844 (phone); screenshots of every page
go to test-artifacts/.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from django.core.cache import cache, caches
from django.core.management import call_command
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from annotate.models import Pair
from tests.browser_support import navigation
from tests.builders import (
    make_campaign,
    make_judgement,
    make_metric_config,
    make_pair,
    make_score,
    make_scored_campaign,
    make_staff,
    make_volunteer,
)
from tests.test_campaign_staff_quality import study
from tests.test_dashboard_browser import full_page_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "staff-browser-password"
DESKTOP = (1366, 768)
WIDE = (1920, 1080)
PHONE = (390, 844)
NAV = ["Staff home", "Dashboard", "Scoring status", "Exports", "API docs", "Documentation", "Admin"]


@pytest.fixture(autouse=True)
def _fresh_caches(settings) -> None:
    cache.clear()
    if "limits" in settings.CACHES:
        caches["limits"].clear()


def wait(browser: WebDriver, condition, timeout: float = 20):
    return WebDriverWait(browser, timeout, poll_frequency=0.2).until(condition)


def window(browser: WebDriver, size: tuple[int, int]) -> None:
    """Make the page's viewport (not the window) exactly ``size``, as a real screen would show it."""
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": size[0] < 600},
    )


def log_in(browser: WebDriver, live_server, next_path: str) -> None:
    make_staff("staff", PASSWORD, superuser=True)
    browser.get(f"{live_server.url}/admin/login/?next={next_path}")
    browser.find_element(By.ID, "id_username").send_keys("staff")
    browser.find_element(By.ID, "id_password").send_keys(PASSWORD)
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()


def nav_state(browser: WebDriver) -> list[tuple[str, bool]]:
    bars = browser.find_elements(By.CSS_SELECTOR, "nav.staff-nav")
    assert len(bars) == 1, f"{len(bars)} staff navigation bars on {browser.current_url}"
    return [(a.text, a.get_attribute("aria-current") == "page") for a in bars[0].find_elements(By.TAG_NAME, "a")]


def no_sideways_scroll(browser: WebDriver) -> bool:
    return browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")


def shoot(browser: WebDriver, folder: Path, name: str) -> None:
    for size, suffix in ((DESKTOP, "desktop"), (PHONE, "phone")):
        window(browser, size)
        browser.execute_script("window.scrollTo(0, 0)")
        browser.save_screenshot(str(folder / f"{name}_{suffix}.png"))
        assert no_sideways_scroll(browser), f"{name} scrolls sideways at {size}"
    window(browser, DESKTOP)


# --- no dead ends -------------------------------------------------------------------------------


def test_a_visitor_sees_a_neutral_home_and_the_docs_ask_for_a_login(browser, live_server, artifacts_dir, settings):
    spring = make_campaign(slug="spring", name="Spring campaign", description="Judge 50 pairs of sentences.")
    make_pair(spring)  # a campaign without a pair to judge invites nobody
    window(browser, DESKTOP)
    browser.get(f"{live_server.url}/")
    assert browser.find_element(By.TAG_NAME, "h1").text == "ParaEval"
    text = browser.find_element(By.TAG_NAME, "main").text
    assert "If you were invited to judge sentences, open the link you were given." in text
    assert "Spring campaign" not in text and not browser.find_elements(By.CSS_SELECTOR, "nav.staff-nav")
    shoot(browser, artifacts_dir, "home_visitor")

    settings.PARAEVAL_PUBLIC_CAMPAIGN = "spring"
    browser.get(f"{live_server.url}/")
    link = browser.find_element(By.ID, "public-campaign")
    assert link.text == "Take part in Spring campaign"
    with navigation(browser):
        link.click()
    assert browser.current_url == f"{live_server.url}/c/spring/"
    browser.get(f"{live_server.url}/")
    shoot(browser, artifacts_dir, "home_public_campaign")

    # The API docs send a visitor to the login page, and back to the docs after it.
    browser.get(f"{live_server.url}/api/docs/")
    assert browser.current_url == f"{live_server.url}/admin/login/?next=/api/docs/"
    make_staff("staff", PASSWORD)
    browser.find_element(By.ID, "id_username").send_keys("staff")
    browser.find_element(By.ID, "id_password").send_keys(PASSWORD)
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    assert browser.current_url == f"{live_server.url}/api/docs/"
    title = wait(browser, ec.visibility_of_element_located((By.CSS_SELECTOR, "#swagger-ui .info .title")))
    assert title.text.startswith("ParaEval API")
    assert nav_state(browser) == [(name, name == "API docs") for name in NAV]


def test_every_staff_page_has_one_navigation_bar_and_leads_on(browser, live_server, artifacts_dir, settings):
    settings.SITE_URL = live_server.url
    call_command("load_demo", verbosity=0)
    window(browser, DESKTOP)
    log_in(browser, live_server, "/")
    # "/" for staff: the campaigns with their volunteer links and the staff pages.
    assert browser.current_url == f"{live_server.url}/"
    assert nav_state(browser) == [(name, name == "Staff home") for name in NAV]
    link = browser.find_element(By.CSS_SELECTOR, "tr[data-campaign=demo] a.volunteer-link")
    assert link.text == f"{live_server.url}/c/demo/"
    row = browser.find_element(By.CSS_SELECTOR, "tr[data-campaign=demo]").text
    assert "71" in row and "Pairs (JSONL)" in row and "Judgements (CSV)" in row
    shoot(browser, artifacts_dir, "staff_home")

    pages = {
        "Staff home": ("/staff/", "Staff home"),
        "Dashboard": ("/staff/dashboard/", "Agreement dashboard"),
        "Scoring status": ("/staff/status/", "Scoring status"),
        "Exports": ("/staff/export/", "Exports"),
        "API docs": ("/api/docs/", None),
        "Admin": ("/admin/", "Site administration"),
    }
    for name, (path, heading) in pages.items():
        # Follow the bar's own link, as a person would.
        link = next(a for a in browser.find_elements(By.CSS_SELECTOR, "nav.staff-nav a") if a.text == name)
        with navigation(browser):
            link.click()
        assert browser.current_url == f"{live_server.url}{path}", name
        assert nav_state(browser) == [(other, other == name) for other in NAV], name
        if heading:
            assert browser.find_element(By.TAG_NAME, "h1").text.startswith(heading), name
        else:
            wait(browser, ec.visibility_of_element_located((By.CSS_SELECTOR, "#swagger-ui .info .title")))
        shoot(browser, artifacts_dir, "staff_" + path.strip("/").replace("/", "_"))

    # The admin's "View site" goes back to the staff's home page.
    browser.get(f"{live_server.url}/admin/annotate/campaign/")
    assert nav_state(browser) == [(other, other == "Admin") for other in NAV]
    with navigation(browser):
        browser.find_element(By.LINK_TEXT, "VIEW SITE").click()
    assert browser.current_url == f"{live_server.url}/"
    assert browser.find_element(By.TAG_NAME, "h1").text == "Staff home"

    # /api/ answers with DRF's API root.
    browser.get(f"{live_server.url}/api/?format=json")
    assert '"campaigns":' in browser.find_element(By.TAG_NAME, "body").text


def test_the_status_page_says_nothing_pending_when_all_is_scored(
    browser, live_server, artifacts_dir, settings, queue_dir
):
    from scoring.pipeline import configs

    settings.PARAEVAL_METRICS = ["lev"]
    campaign = make_campaign(slug="done")
    pairs = [make_pair(campaign) for _ in range(3)]
    lev = configs.ensure_metric_config(configs.build("lev"))
    for pair in pairs[:2]:
        make_score(pair, lev, 0.2)
    window(browser, DESKTOP)
    log_in(browser, live_server, "/staff/status/")
    assert browser.find_element(By.ID, "pending").text == "1 score pending"
    make_score(pairs[2], lev, 0.3)
    # The page polls every 5 s and redraws the line without a reload.
    wait(browser, lambda b: b.find_element(By.ID, "pending").text == "Nothing pending", timeout=15)
    assert browser.find_element(By.ID, "pairs").text == "3 campaign pairs"
    assert browser.find_element(By.ID, "done").text == "3 scores done"
    shoot(browser, artifacts_dir, "staff_status_nothing_pending")


# --- dashboard readability ------------------------------------------------------------------------


EXTRA_METRICS = ["wer", "meteor", "sbert", "parascore", "bertscore", "bleu", "parapluie_fs_direct", "lev"]


def _many_metrics(built) -> None:
    """Eight more metric configurations (12 in all), each with a score for every pair."""
    rng = random.Random(3)
    for index, metric in enumerate(EXTRA_METRICS):
        config = make_metric_config(metric, label=f"{metric.split('_')[0].upper()} variant {index + 1}")
        for pair in built.pairs:
            paraphrase = built.truth[pair.pk]
            make_score(pair, config, (0.6 if paraphrase else 0.4) + rng.gauss(0, 0.15 + 0.02 * index))


def test_the_dashboard_is_readable_at_1366_and_1920(browser, live_server, artifacts_dir):
    built = make_scored_campaign(
        slug="many", name="Twelve metrics", origins=("mrpc", "paws", "llm", "demo"), judges=3, judges_per_pair=3
    )
    _many_metrics(built)
    window(browser, DESKTOP)
    log_in(browser, live_server, "/staff/dashboard/?campaign=many")
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#legend-roc .legend-item"))
    assert nav_state(browser) == [(name, name == "Dashboard") for name in NAV]

    for size in (DESKTOP, WIDE):
        window(browser, size)
        # Table 1 fits: no horizontal scrolling inside its box nor on the page.
        fit = browser.execute_script(
            "const box = document.querySelector('#table-table1 .table-scroll');"
            "return [box.scrollWidth, box.clientWidth, document.documentElement.scrollWidth, window.innerWidth];"
        )
        assert fit[0] <= fit[1] and fit[2] <= fit[3], (size, fit)

    window(browser, DESKTOP)
    # Every curve of the ROC chart: its AUC in full in the legend, exactly as the Ranking table prints it.
    ranking = browser.find_element(By.CSS_SELECTOR, "table[data-table=ranking]")
    columns = [th.text for th in ranking.find_elements(By.CSS_SELECTOR, "thead th")]
    global_column = columns.index("Global") - 2  # after Metric, Statistic
    table_auc = {}
    for row in ranking.find_elements(By.CSS_SELECTOR, "tbody tr"):
        heads = row.find_elements(By.CSS_SELECTOR, "th.row-head")
        if heads:
            metric = heads[0].text
            table_auc[metric] = row.find_elements(By.CSS_SELECTOR, "td:not(.stat-name)")[global_column].text
    assert len(table_auc) == 12
    items = browser.find_elements(By.CSS_SELECTOR, "#legend-roc .legend-text")
    texts = [item.text for item in items]
    assert texts[:-1] == [f"{metric} — AUC {auc}" for metric, auc in table_auc.items()]
    assert texts[-1] == "chance (AUC 0.500)"
    for item in items:  # nothing cut: each name is wholly visible
        assert item.is_displayed()
        assert browser.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth + 1", item)
    # 12 curves, 12 different (colour, dash) pairs, all from the colour-blind-safe palette.
    styles = browser.execute_script(
        "return Chart.getChart(document.getElementById('chart-roc')).data.datasets"
        ".map(d => [d.borderColor, (d.borderDash || []).join(',')])"
    )
    assert len({tuple(style) for style in styles[:-1]}) == 12
    okabe_ito = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"}
    assert {colour for colour, _ in styles[:-1]} == okabe_ito
    assert sum(1 for _, dash in styles[:-1] if dash) == 4  # the 9th-12th curves are dashed
    hint = browser.find_element(By.CSS_SELECTOR, "#figure-5 .legend-hint")
    assert hint.text == "Click a name in the legend to hide its curve." and hint.is_displayed()
    # Clicking a name hides its curve; the choice survives the next live redraw.
    first = browser.find_elements(By.CSS_SELECTOR, "#legend-roc .legend-item")[0]
    first.click()
    visible = "return Chart.getChart(document.getElementById('chart-roc')).isDatasetVisible(0)"
    assert browser.execute_script(visible) is False
    first = browser.find_elements(By.CSS_SELECTOR, "#legend-roc .legend-item")[0]
    assert first.get_attribute("aria-pressed") == "true"
    before = browser.find_element(By.ID, "count-judgements").text
    make_judgement(built.pairs[0], make_volunteer(built.campaign), "same_meaning")  # new data: a redraw
    browser.execute_script("return window.paraevalDashboard.refresh()")
    wait(browser, lambda b: b.find_element(By.ID, "count-judgements").text != before)
    assert browser.execute_script(visible) is False
    first = browser.find_elements(By.CSS_SELECTOR, "#legend-roc .legend-item")[0]
    assert first.get_attribute("aria-pressed") == "true"
    first.click()
    assert browser.execute_script(visible) is True

    # Contents bar: one jump link per section, and the link lands on it.
    links = browser.find_elements(By.CSS_SELECTOR, "#contents a")
    assert [(a.text, a.get_attribute("hash")) for a in links] == [
        ("Counts", "#summary"),
        ("Table 1 · Means", "#section-table1"),
        ("Table 2 · Best threshold", "#section-table2"),
        ("Table 3 · Edit distance", "#section-table3"),
        ("Worst disagreements", "#section-worst"),
        ("Table 4 · EER", "#section-table4"),
        ("Table 5 · Natural threshold", "#section-table5"),
        ("Ranking", "#section-ranking"),
        ("Top-k", "#section-topk"),
        ("Agreement", "#section-agreement"),
        ("Volunteers", "#section-volunteers"),
        ("Paired tests", "#section-paired"),
        ("Threshold honesty", "#section-thresholds"),
        ("Ties", "#section-ties"),
        ("Systems", "#section-systems"),
        ("Distance bins", "#section-distance-bins"),
        ("Human ceiling", "#section-ceiling"),
        ("Calibration", "#section-calibration"),
        ("Robustness", "#section-robustness"),
        ("ParaPLUIE calibration", "#section-temperature"),
        ("PARAPHRASUS", "#section-paraphrasus"),
        ("How to read", "#section-methods"),
    ]
    links[8].click()  # Top-k
    wait(
        browser,
        lambda b: b.execute_script(
            "const r = document.getElementById('section-topk').getBoundingClientRect();return r.top >= 0 && r.top < 200"
        ),
    )
    assert browser.find_element(By.ID, "contents").is_displayed()  # sticky: still there

    # No two figures share a name.
    captions = browser.execute_script(
        "return [...document.querySelectorAll('figcaption, h3.chart-title')].map(e => e.textContent.trim())"
    )
    names = [re.match(r"(Figure \w+) — ", caption).group(1) for caption in captions]
    # Figures 6 and 7: the meta-evaluation sections; 8: a reliability panel per ParaPLUIE configuration (2).
    assert len(names) == len(set(names)) == 7 + 2 * 12 + 1 + 2
    assert names[:3] == ["Figure 1", "Figure 1a", "Figure 1b"]
    assert "Figure 4l" in names and "Figure 5" in names
    assert names[-5:] == ["Figure 6", "Figure 7", "Figure 8", "Figure 8a", "Figure 8b"]

    for size, suffix in ((DESKTOP, "1366"), (WIDE, "1920"), (PHONE, "phone")):
        window(browser, size)
        browser.execute_script("window.scrollTo(0, 0)")
        browser.save_screenshot(str(artifacts_dir / f"dashboard_readable_{suffix}.png"))
        roc = browser.find_element(By.ID, "figure-5")
        browser.execute_script("arguments[0].scrollIntoView({block: 'end'})", roc)
        roc.screenshot(str(artifacts_dir / f"dashboard_roc_{suffix}.png"))
    window(browser, DESKTOP)
    full_page_screenshot(browser, artifacts_dir / "dashboard_readable_full.png")


def test_counts_are_pluralised_on_the_dashboard(browser, live_server, artifacts_dir):
    campaign = make_campaign(slug="tiny", name="Tiny", judges_per_pair=2)
    pair = make_pair(campaign, origin="mrpc", gold_label=True)
    make_pair(campaign, origin="mrpc", gold_label=False)
    for _ in range(2):
        make_judgement(pair, make_volunteer(campaign), "same_meaning")
    make_score(pair, make_metric_config("lev", label="LEV"), 0.1)
    window(browser, DESKTOP)
    log_in(browser, live_server, "/staff/dashboard/?campaign=tiny")
    wait(browser, lambda b: b.find_element(By.ID, "count-judgements").text == "2")
    assert browser.find_element(By.ID, "label-pairs").text == "pairs"
    assert browser.find_element(By.ID, "label-judgements").text == "judgements"
    assert browser.find_element(By.ID, "count-scores").text == "1"
    assert browser.find_element(By.ID, "label-scores").text == "score"
    assert browser.find_element(By.ID, "detail-pairs").text == "1 unjudged · 1 corpus"
    assert browser.find_element(By.ID, "detail-labelled").text == "1 paraphrase · 0 not · 0 ties"
    assert browser.find_element(By.ID, "detail-judgements").text.startswith("2 volunteers · ")
    assert browser.find_element(By.ID, "detail-scores").text == "1 metric config · 0 failed · 1 missing"
    assert browser.find_element(By.ID, "live-text").text.startswith("Based on 2 judgements and 1 score · ")
    caption = browser.find_element(By.CSS_SELECTOR, "#table-agreement .caption").text
    assert caption.startswith("1 pair has two or more graded judgements (mean 2.00 judgements per judged pair).")
    Pair.objects.filter(campaign=campaign).exclude(pk=pair.pk).delete()
    browser.execute_script("return window.paraevalDashboard.refresh()")
    wait(browser, lambda b: b.find_element(By.ID, "count-pairs").text == "1")
    assert browser.find_element(By.ID, "label-pairs").text == "pair"
    browser.save_screenshot(str(artifacts_dir / "dashboard_plurals.png"))


def test_the_volunteers_page_shows_flagged_volunteers_first_and_saves_an_override(
    browser, live_server, artifacts_dir
) -> None:
    _, _, bad, _ = study()
    log_in(browser, live_server, "/staff/campaigns/crowd/volunteers/")
    assert nav_state(browser)[0] == ("Staff home", False)
    rows = browser.find_elements(By.CSS_SELECTOR, "#volunteers tbody tr")
    assert "excluded: failed 1 of 1 checks" in rows[0].text
    shoot(browser, artifacts_dir, "staff_volunteers")
    rows[0].find_element(By.CSS_SELECTOR, "select[name=override] option[value=include]").click()
    rows[0].find_element(By.CSS_SELECTOR, "input[name=note]").send_keys("misread")
    with navigation(browser):
        rows[0].find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    assert "kept by staff (rule: failed 1 of 1 checks)" in browser.find_element(By.ID, "volunteers").text
    bad.refresh_from_db()
    assert (bad.exclusion_override, bad.exclusion_note) == ("include", "misread")
