"""The import-scores and generate pages in Chromium: a file uploaded, the result shown, no sideways scroll."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from scoring.metrics.judges import parse_models
from scoring.models import Score
from tests.browser_support import navigation
from tests.builders import make_campaign, make_pair
from tests.test_staff_browser import _fresh_caches, log_in, shoot  # noqa: F401 - the autouse fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_import_scores_and_generate_pages(browser, live_server, artifacts_dir: Path, tmp_path: Path, settings):
    settings.PARAPLUIE_MODELS = parse_models("smollm2[model=embedded]")
    campaign = make_campaign(slug="shots", name="Screenshots")
    pairs = [make_pair(campaign) for _ in range(3)]
    log_in(browser, live_server, "/staff/scores/import/")
    shoot(browser, artifacts_dir, "score_import_form")
    scores = tmp_path / "scores.csv"
    scores.write_text("pair_id,score\n" + "".join(f"{pair.pk},{index / 4}\n" for index, pair in enumerate(pairs)))
    browser.find_element(By.ID, "id_campaign").send_keys("shots")
    browser.find_element(By.ID, "id_file").send_keys(str(scores))
    browser.find_element(By.ID, "id_name").send_keys("my_metric")
    browser.find_element(By.ID, "id_version").send_keys("1.0")
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "form.staff-form button[type=submit]").click()
    result = browser.find_element(By.ID, "import-result").text
    assert result.startswith("3 scores stored as my_metric 1.0 (imported)")
    assert Score.objects.count() == 3
    shoot(browser, artifacts_dir, "score_import_done")
    browser.get(f"{live_server.url}/staff/generate/")
    shoot(browser, artifacts_dir, "generate_form")
