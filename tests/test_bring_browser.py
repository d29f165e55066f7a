"""The import-scores and generate pages in Chromium: a file uploaded, the result and the refusal
shown, generation queued; screenshots at 1366x768 and 390x844, no sideways scroll."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from paraeval import broker
from scoring.metrics.judges import parse_models
from scoring.models import Score
from tests.browser_support import navigation
from tests.builders import make_campaign, make_pair
from tests.test_staff_browser import DESKTOP, PHONE, _fresh_caches, log_in, shoot, window  # noqa: F401 - autouse

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _whole_page(browser, folder: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    """The whole page at both sizes (beyond the viewport), for people to look at."""
    for size, suffix in ((DESKTOP, "desktop"), (PHONE, "phone")):
        window(browser, size)
        shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        (folder / f"{name}_{suffix}_full.png").write_bytes(base64.b64decode(shot["data"]))
    window(browser, DESKTOP)


def _submit(browser, button: str) -> None:  # type: ignore[no-untyped-def]
    with navigation(browser):
        browser.find_element(By.ID, button).click()


def test_import_scores_and_generate_pages(  # type: ignore[no-untyped-def]
    browser, live_server, artifacts_dir: Path, tmp_path: Path, settings, monkeypatch
):
    settings.PARAPLUIE_MODELS = parse_models("smollm2[model=embedded]")
    campaign = make_campaign(slug="shots", name="Screenshots")
    pairs = [make_pair(campaign, source=f"Source sentence {i}.") for i in range(3)]
    log_in(browser, live_server, "/staff/scores/import/")
    shoot(browser, artifacts_dir, "score_import_form")
    _whole_page(browser, artifacts_dir, "score_import_form")
    labels = [label.text for label in browser.find_elements(By.CSS_SELECTOR, "#import-form .setting > label")]
    assert labels == ["Campaign", "File", "Name", "Version", "Direction", "Threshold (optional)", "Options (optional)"]
    scores = tmp_path / "scores.csv"
    scores.write_text("pair_id,score\n" + "".join(f"{pair.pk},{index / 4}\n" for index, pair in enumerate(pairs)))
    browser.find_element(By.ID, "id_campaign").send_keys("shots")
    browser.find_element(By.ID, "id_file").send_keys(str(scores))
    browser.find_element(By.ID, "id_name").send_keys("my_metric")
    browser.find_element(By.ID, "id_version").send_keys("1.0")
    _submit(browser, "import-submit")
    result = browser.find_element(By.ID, "import-result").text
    assert result.startswith("3 scores stored as my_metric 1.0 (imported)")
    assert Score.objects.count() == 3
    shoot(browser, artifacts_dir, "score_import_done")

    # A refused file: every problem with its line, nothing stored.
    bad = tmp_path / "bad.csv"
    bad.write_text(f"pair_id,score\n{pairs[0].pk},nan\n{pairs[0].pk},1\n999999,2\n")
    browser.find_element(By.ID, "id_file").send_keys(str(bad))
    version = browser.find_element(By.ID, "id_version")
    version.clear()
    version.send_keys("2.0")
    _submit(browser, "import-submit")
    items = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#import-problems li")]
    assert items == ["line 2: score 'nan' is not finite", "line 4: unknown pair: no pair has id 999999"]
    assert Score.objects.count() == 3
    shoot(browser, artifacts_dir, "score_import_refused")

    # Generation: queued on the model's queue.
    sent: list[broker.TaskMessage] = []
    monkeypatch.setattr(broker, "send", lambda messages: sent.extend(messages) or broker.SendResult(len(messages), 0))
    browser.get(f"{live_server.url}/staff/generate/")
    shoot(browser, artifacts_dir, "generate_form")
    _whole_page(browser, artifacts_dir, "generate_form")
    browser.find_element(By.ID, "id_campaign").send_keys("shots")
    count = browser.find_element(By.ID, "id_count")
    count.clear()
    count.send_keys("2")
    _submit(browser, "generate-submit")
    queued = browser.find_element(By.ID, "generate-result").text
    assert queued.startswith("2 sources queued for 3 systems in 3 tasks: naive\u00d7smollm2[greedy,48tok]")
    assert {message.queue for message in sent} == {"llm.smollm2"}
    link = browser.find_element(By.CSS_SELECTOR, "#generate-result a")
    assert link.get_attribute("href").endswith("/staff/campaigns/shots/pairs/?origin=generated")
    shoot(browser, artifacts_dir, "generate_queued")


def test_an_imported_metric_on_the_dashboard_in_every_table_figure_and_the_paired_tests(  # type: ignore[no-untyped-def]
    browser, live_server, artifacts_dir: Path
):
    from django.core.cache import cache
    from selenium.webdriver.support.ui import Select

    from scoring.external.score_import import ScoreFileMetric, import_scores
    from scoring.reports.dataset import Filters
    from scoring.reports.service import compute_meta, meta_options, shared_cache
    from tests.builders import make_scored_campaign
    from tests.test_dashboard_browser import full_page_screenshot, log_in_as_staff, wait

    cache.clear()
    shared_cache().clear()
    built = make_scored_campaign(slug="shown", pairs_per_origin=8)
    data = "pair_id,score\n" + "".join(
        f"{p.pk},{(2 if built.truth[p.pk] else -2) + i % 5 - 2}\n" for i, p in enumerate(built.pairs)
    )
    import_scores(built.campaign, data.encode(), "mine.csv", ScoreFileMetric("mine", "1.0", natural_threshold=0.0))
    filters = Filters.build("volunteers")
    compute_meta(built.campaign.pk, filters, meta_options(filters, None, None)).as_json()
    label = "mine 1.0 (imported)"
    window(browser, DESKTOP)
    log_in_as_staff(browser, live_server)
    browser.get(f"{live_server.url}/staff/dashboard/?campaign=shown")
    wait(browser, lambda b: label in b.find_element(By.ID, "table-table1").text, timeout=30)
    for table in ("table1", "table2", "table3", "table4", "table5", "ranking", "topk"):
        assert label in browser.find_element(By.ID, f"table-{table}").text, table
    for legend in ("legend-rank-accuracy", "legend-rank-f1", "legend-roc"):  # Figures 2, 3 and 5
        assert label in browser.find_element(By.ID, legend).get_attribute("textContent"), legend
    for grid in ("box-grid", "scatter-grid"):  # Figures 1 and 4: a panel per metric
        captions = [
            c.get_attribute("textContent") for c in browser.find_elements(By.CSS_SELECTOR, f"#{grid} figcaption")
        ]
        assert any(label in caption for caption in captions), grid
    wait(browser, lambda b: label in b.find_element(By.ID, "meta-ranking").text, timeout=30)
    for statistic in ("auc", "spearman"):
        Select(browser.find_element(By.ID, "meta-statistic")).select_by_value(statistic)
        wait(browser, lambda b: label in b.find_element(By.ID, "meta-paired").get_attribute("textContent"))
    for section in ("meta-thresholds", "meta-ties", "meta-distance-bins", "meta-ceiling", "meta-calibration"):
        assert label in browser.find_element(By.ID, section).get_attribute("textContent"), section
    browser.execute_script("document.getElementById('section-paired').scrollIntoView()")
    shoot_here = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    (artifacts_dir / "imported_metric_paired_desktop.png").write_bytes(base64.b64decode(shoot_here["data"]))
    full_page_screenshot(browser, artifacts_dir / "imported_metric_dashboard_full.png")
