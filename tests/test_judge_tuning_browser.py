"""The dashboard of a campaign with a judge tuned on its labels, in headless Chromium (desktop and phone).

The tuned judge's row sits beside its base model's in the tables, and the note above them says its
scores on this campaign are cross-fitted. Screenshots at 1366x768 and 390x844 go to the artifacts.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from django.core.cache import cache
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec

from scoring.models import TunedJudge
from tests.builders import make_metric_config, make_score, make_scored_campaign
from tests.test_dashboard_browser import full_page_screenshot, log_in_as_staff, wait

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TUNED = "parapluie_direct[SmolLM2-135M-tuned-1a2b3c4d]"
BASE = "parapluie_direct[SmolLM2-135M-Instruct]"


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (390, 844)])
def test_the_tuned_judge_sits_beside_its_base_and_the_note_says_cross_fitted(
    browser, live_server, artifacts_dir: Path, width: int, height: int
) -> None:
    cache.clear()
    scored = make_scored_campaign(origins=("mrpc",), pairs_per_origin=24)
    base = make_metric_config("parapluie_direct", label=BASE)
    tuned = make_metric_config("parapluie_direct", label=TUNED, queue="llm.smollm2-tuned-1a2b3c4d")
    rng = random.Random(4)
    for pair in scored.pairs:
        truth = scored.truth.get(pair.pk)
        if truth is None:
            continue
        make_score(pair, base, -3.0 + rng.gauss(0, 2))  # the untuned model: everything below 0
        make_score(pair, tuned, (2.0 if truth else -2.0) + rng.gauss(0, 1.5))
    TunedJudge.objects.create(
        campaign=scored.campaign,
        reference="volunteers",
        base_judge="smollm2",
        template="direct",
        options={"folds": 5},
        status="done",
        name="smollm2-tuned-1a2b3c4d",
        label="SmolLM2-135M-tuned-1a2b3c4d",
        folds={str(pair.pk): index % 5 for index, pair in enumerate(scored.pairs)},
        metric_config=tuned,
    )
    browser.set_window_size(width, height)
    log_in_as_staff(browser, live_server)
    browser.get(f"{live_server.url}/staff/dashboard/?campaign={scored.campaign.slug}")
    note = wait(browser, ec.visibility_of_element_located((By.ID, "tuned-judges")))
    assert note.find_element(By.TAG_NAME, "h2").text == "Tuned judges"
    assert note.find_element(By.CSS_SELECTOR, "li.tuned-cross-fitted").text.startswith(
        f"{TUNED} was tuned on this campaign's own labels ({len(scored.pairs)} pairs, the volunteers' majority, "
        "excluded volunteers left out): its scores here are cross-fitted over 5 folds"
    )
    # The tables list the tuned judge right after its base model (same metric, created after it).
    table5 = wait(browser, ec.visibility_of_element_located((By.CSS_SELECTOR, "#table-table5 table")))
    rows = [th.text.rstrip(" ↑↓") for th in table5.find_elements(By.CSS_SELECTOR, "tbody th.row-head")]
    assert rows[rows.index(BASE) + 1] == TUNED
    # Nothing overflows sideways on a phone.
    overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    browser.save_screenshot(str(artifacts_dir / f"dashboard_tuned_judge_{width}x{height}.png"))
    full_page_screenshot(browser, artifacts_dir / f"dashboard_tuned_judge_{width}x{height}_full.png")
