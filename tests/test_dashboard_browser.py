"""Staff watch the dashboard in headless Chromium while a volunteer answers in a second browser."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from django.core.cache import cache
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from annotate.models import Judgement
from tests.browser_support import navigation
from tests.builders import make_scored_campaign, make_staff

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "dashboard-test-password"


@pytest.fixture(autouse=True)
def _fresh_report_cache() -> None:
    cache.clear()


def wait(browser: WebDriver, condition, timeout: float = 20):
    return WebDriverWait(browser, timeout, poll_frequency=0.2).until(condition)


def full_page_screenshot(browser: WebDriver, path: Path) -> None:
    """The whole page, not only the window (Chrome DevTools: capture beyond the viewport)."""
    size = browser.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
    )
    shot = browser.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1},
        },
    )
    path.write_bytes(base64.b64decode(shot["data"]))


def log_in_as_staff(browser: WebDriver, live_server) -> None:
    make_staff("staff", PASSWORD)
    browser.get(f"{live_server.url}/staff/dashboard/")
    wait(browser, ec.url_contains("/admin/login/"))
    browser.find_element(By.ID, "id_username").send_keys("staff")
    browser.find_element(By.ID, "id_password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # The login page's own address holds "?next=/staff/dashboard/": wait until the dashboard's
    # filters are there, not for the address alone.
    wait(browser, lambda b: "/admin/login/" not in b.current_url and b.find_elements(By.ID, "f-reference"))


def chart_state(browser: WebDriver, canvas_id: str) -> dict:
    """Whether a Chart.js instance drew on the canvas: its datasets and painted pixels."""
    return browser.execute_script(
        """
        const canvas = document.getElementById(arguments[0]);
        if (!canvas) return {exists: false};
        const chart = Chart.getChart(canvas);
        const ctx = canvas.getContext('2d');
        const pixels = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
        let painted = 0;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) painted += 1;
        return {
          exists: true,
          chart: !!chart,
          type: chart ? chart.config.type : null,
          points: chart ? chart.data.datasets.reduce((n, d) => n + d.data.filter(v => v !== null).length, 0) : 0,
          painted: painted,
          width: canvas.width,
        };
        """,
        canvas_id,
    )


def counter(browser: WebDriver, name: str) -> str:
    return browser.find_element(By.ID, f"count-{name}").text


def volunteer_answers_one_pair(volunteer: WebDriver, live_server, slug: str) -> None:
    """The volunteer flow: welcome, five training pairs with feedback, then one campaign pair."""
    volunteer.get(f"{live_server.url}/c/{slug}/")
    volunteer.find_element(By.CSS_SELECTOR, "label[for=id_english_level_2]").click()  # Advanced
    volunteer.find_element(By.ID, "id_consent").click()
    volunteer.find_element(By.CSS_SELECTOR, "form.start-form button[type=submit]").click()
    wait(volunteer, ec.presence_of_element_located((By.CSS_SELECTOR, "[data-start-training]")))
    with navigation(volunteer):
        volunteer.find_element(By.CSS_SELECTOR, "[data-start-training]").click()  # the guidelines step
    wait(volunteer, ec.presence_of_element_located((By.ID, "answer-form")))
    for _ in range(5):
        with navigation(volunteer):
            ActionChains(volunteer).send_keys("4").perform()
        wait(volunteer, ec.url_contains("/training/"))
        ActionChains(volunteer).send_keys(Keys.ENTER).perform()
        wait(volunteer, ec.presence_of_element_located((By.CSS_SELECTOR, "#answer-form, [data-start-judging]")))
    with navigation(volunteer):
        volunteer.find_element(By.CSS_SELECTOR, "[data-start-judging]").click()  # the training is over
    wait(volunteer, ec.presence_of_element_located((By.ID, "answer-form")))
    assert not volunteer.find_elements(By.CSS_SELECTOR, ".badge--training")
    with navigation(volunteer):
        volunteer.find_element(By.CSS_SELECTOR, "button.answer[value=same_meaning]").click()


def test_staff_watch_the_dashboard_update_live(browser_factory, live_server, artifacts_dir: Path) -> None:
    # 3 corpora x 8 pairs, 3 judgements each; a 4th judge is wanted, so the volunteer gets a pair.
    built = make_scored_campaign(slug="live-demo", name="Live demo", judges=3, judges_per_pair=4)
    staff = browser_factory()
    staff.set_window_size(1400, 1000)
    log_in_as_staff(staff, live_server)
    wait(staff, lambda b: counter(b, "judgements") == "72")
    staff.execute_script("window.__sameDocument = true;")  # gone if the page reloads

    # Counts and live line.
    assert counter(staff, "pairs") == "24"
    assert counter(staff, "scores") == "95"
    assert "failed" in staff.find_element(By.ID, "detail-scores").text
    live = staff.find_element(By.ID, "live-text").text
    assert "Based on 72 judgements and 95 scores" in live and "last change" in live
    assert "ok" in staff.find_element(By.ID, "live-dot").get_attribute("class")

    # The paper's tables, with the best value of each column emphasised.
    titles = [h.text for h in staff.find_elements(By.CSS_SELECTOR, ".table-slot h2")]
    assert titles[:5] == [
        "Table 1 — Mean ± standard deviation per class",
        "Table 2 — Best-threshold classification",
        "Table 3 — Pearson correlation with the edit distance, inside each class",
        "Table 4 — Equal error rate",
        "Table 5 — Accuracy at the natural threshold",
    ]
    table1 = staff.find_element(By.CSS_SELECTOR, "table[data-table=table1]")
    assert [th.text for th in table1.find_elements(By.CSS_SELECTOR, "thead tr.groups th")][1:] == [
        "llm",
        "mrpc",
        "paws",
        "Global",
    ]
    metric_rows = [th.text for th in table1.find_elements(By.CSS_SELECTOR, "tbody th.row-head")]
    assert metric_rows == ["BERTScore ↑", "BLEU ↑", "LEV ↓", "ParaPLUIE FS-DIRECT ↑"]
    table2 = staff.find_element(By.CSS_SELECTOR, "table[data-table=table2]")
    best = table2.find_elements(By.CSS_SELECTOR, "td.best")
    assert best and all(cell.value_of_css_property("font-weight") == "700" for cell in best)
    table5 = staff.find_element(By.CSS_SELECTOR, "table[data-table=table5]")
    assert [th.text for th in table5.find_elements(By.CSS_SELECTOR, "tbody th.row-head")] == ["ParaPLUIE FS-DIRECT ↑"]
    agreement = staff.find_element(By.CSS_SELECTOR, "table[data-table=agreement]")
    assert len(agreement.find_elements(By.CSS_SELECTOR, "tbody tr")) == 4
    volunteers = staff.find_element(By.CSS_SELECTOR, "table[data-table=volunteers]")
    assert len(volunteers.find_elements(By.CSS_SELECTOR, "tbody tr")) == 5

    # Every chart exists, has data and painted its canvas.
    configs = list(built.configs.values())
    canvases = ["chart-rank-accuracy", "chart-rank-f1", "chart-roc"]
    canvases += [f"box-{config.pk}" for config in configs] + [f"scatter-{config.pk}" for config in configs]
    for canvas_id in canvases:
        state = chart_state(staff, canvas_id)
        assert state["exists"] and state["chart"], canvas_id
        assert state["points"] > 0 and state["painted"] > 500, (canvas_id, state)
    assert chart_state(staff, f"box-{built.configs['lev'].pk}")["type"] == "boxplot"
    # Figure 2 draws the natural threshold of ParaPLUIE (a red line dataset).
    labels = staff.execute_script(
        "return Chart.getChart(document.getElementById(arguments[0])).data.datasets.map(d => d.label)",
        f"scatter-{built.configs['parapluie'].pk}",
    )
    assert "natural threshold" in labels
    full_page_screenshot(staff, artifacts_dir / "dashboard_full.png")
    staff.save_screenshot(str(artifacts_dir / "dashboard_top.png"))

    # A volunteer answers through the campaign pages in a second browser.
    volunteer = browser_factory()
    volunteer_answers_one_pair(volunteer, live_server, "live-demo")
    assert Judgement.objects.filter(pair__campaign=built.campaign, is_training=False).count() == 73

    # Within one refresh (5 s) the counts change, without a reload.
    wait(staff, lambda b: counter(b, "judgements") == "73", timeout=15)
    assert staff.execute_script("return window.__sameDocument === true")
    assert "Based on 73 judgements" in staff.find_element(By.ID, "live-text").text
    volunteers = staff.find_element(By.CSS_SELECTOR, "table[data-table=volunteers]")
    assert len(volunteers.find_elements(By.CSS_SELECTOR, "tbody tr")) == 6
    staff.save_screenshot(str(artifacts_dir / "dashboard_after_judgement.png"))

    # Filters redraw from the JSON endpoint too: one corpus, imported gold labels.
    staff.find_element(By.CSS_SELECTOR, "#f-origin option[value=paws]").click()
    wait(staff, lambda b: counter(b, "pairs") == "8")
    staff.find_element(By.CSS_SELECTOR, "#f-reference option[value=gold]").click()
    wait(staff, lambda b: counter(b, "labelled") == "8")
    assert "reference=gold" in staff.current_url and "origin=paws" in staff.current_url
    assert staff.execute_script("return window.__sameDocument === true")
    full_page_screenshot(staff, artifacts_dir / "dashboard_paws_gold.png")


def test_the_demo_campaign_fills_in_as_scores_arrive(browser_factory, live_server, artifacts_dir: Path) -> None:
    from django.core.management import call_command

    from annotate.models import Pair
    from scoring.metrics.lexical import normalised_char_distance
    from tests.builders import make_metric_config, make_score

    call_command("load_demo", stdout=io.StringIO())
    call_command("team", "Lab", "--campaign", "demo", stdout=io.StringIO())  # the staff account's team
    staff = browser_factory()
    staff.set_window_size(1400, 1000)
    log_in_as_staff(staff, live_server)
    # The demo campaign is the default; nobody has judged yet: compare with its gold labels.
    staff.find_element(By.CSS_SELECTOR, "#f-reference option[value=gold]").click()
    wait(staff, lambda b: counter(b, "labelled") == "71")
    assert counter(staff, "judgements") == "0" and counter(staff, "scores") == "0"
    note = staff.find_element(By.CSS_SELECTOR, "#table-table2 .note").text
    assert "No metric configuration has scored these pairs yet" in note
    assert staff.find_element(By.ID, "detail-alpha").text == "no judgements yet"
    staff.save_screenshot(str(artifacts_dir / "dashboard_demo_empty.png"))

    # A worker stores LEV scores: the next poll draws the tables and charts.
    config = make_metric_config("lev", label="LEV")
    for pair in Pair.objects.filter(campaign__slug="demo", is_training=False):
        make_score(pair, config, normalised_char_distance(pair.source, pair.hypothesis))
    wait(staff, lambda b: counter(b, "scores") == "71", timeout=15)
    columns = staff.find_elements(By.CSS_SELECTOR, "table[data-table=table2] thead th")
    assert [th.text for th in columns] == [
        "Metric",
        "Statistic",
        "demo-non-paraphrase",
        "demo-paraphrase",
        "demo-partial",
        "demo-swap",
        "Global",
    ]
    assert chart_state(staff, f"scatter-{config.pk}")["points"] > 0
    assert chart_state(staff, "chart-roc")["chart"]
    full_page_screenshot(staff, artifacts_dir / "dashboard_demo_scored.png")


def test_meta_evaluation_sections_render_with_the_demo(browser_factory, live_server, artifacts_dir: Path) -> None:
    from django.core.management import call_command

    from annotate.models import Campaign, Pair
    from scoring.metrics.lexical import normalised_char_distance
    from scoring.reports.dataset import Filters
    from scoring.reports.service import compute_meta, meta_options
    from tests.builders import make_metric_config, make_score

    call_command("load_demo", stdout=io.StringIO())
    call_command("team", "Lab", "--campaign", "demo", stdout=io.StringIO())  # the staff account's team
    lev = make_metric_config("lev", label="LEV")
    length = make_metric_config("bleu", label="Length ratio")
    for pair in Pair.objects.filter(campaign__slug="demo", is_training=False):
        make_score(pair, lev, normalised_char_distance(pair.source, pair.hypothesis))
        make_score(
            pair, length, min(len(pair.source), len(pair.hypothesis)) / max(len(pair.source), len(pair.hypothesis), 1)
        )
    staff = browser_factory()
    staff.set_window_size(1400, 1000)
    log_in_as_staff(staff, live_server)
    staff.find_element(By.CSS_SELECTOR, "#f-reference option[value=gold]").click()
    # No worker runs here: the section says it is computing until the cpu task has run.
    # Queued, or (when the page's first request queued it for a version the click replaced)
    # waiting behind that one: either way it says what it waits for, and shows no result.
    waiting = (
        "The paired comparisons: waiting for an interactive worker, queued at ",
        "The paired comparisons: waiting for the computation for earlier data to finish (queued at ",
    )
    wait(staff, lambda b: b.find_element(By.ID, "meta-status").text.startswith(waiting))
    assert [link.text for link in staff.find_elements(By.CSS_SELECTOR, "#contents a")][-11:-4] == [
        "Paired tests",
        "Threshold honesty",
        "Ties",
        "Systems",
        "Distance bins",
        "Human ceiling",
        "Calibration",
    ]
    filters = Filters.build("gold")
    compute_meta(Campaign.objects.get(slug="demo").pk, filters, meta_options(filters, None, None))
    wait(staff, lambda b: b.find_elements(By.CSS_SELECTOR, "table[data-table=meta-ranking] tbody tr"), timeout=20)
    assert staff.find_element(By.ID, "meta-status").text.startswith("Paired comparisons ready (")
    ranking = [row.text for row in staff.find_elements(By.CSS_SELECTOR, "table[data-table=meta-ranking] tbody th")]
    assert sorted(ranking) == ["LEV ↓", "Length ratio ↑"]
    heat = staff.find_elements(By.CSS_SELECTOR, "table[data-table=meta-heatmap] tbody td")
    assert len(heat) == 4 and heat[0].get_attribute("class") == "heat-self"
    assert heat[1].get_attribute("class").startswith("heat-")
    ties = staff.find_elements(By.CSS_SELECTOR, "table[data-table=meta-ties] tbody tr")
    assert len(ties) == 2
    assert staff.find_element(By.CSS_SELECTOR, "#meta-systems .note").text.startswith("No pair names the system")
    full_page_screenshot(staff, artifacts_dir / "dashboard_meta_evaluation.png")
