"""What staff see of a served judge, in a real browser: the probe on the status page, the failed
scores and their reason on the dashboard (screenshots at 1366x768 and 390x844 in test-artifacts/).

The server is llama-cpp-python's, serving the embedded SmolLM2 (tests/served_support.py), asked
for its top 1 only, so that every pair's other answer is missing and its score fails with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from scoring.metrics.judges import parse_models
from scoring.metrics.served import forget_connections
from scoring.pipeline import configs, runner
from tests.builders import make_campaign, make_pair
from tests.served_support import LlamaServer
from tests.test_served_judge import demo_pairs
from tests.test_staff_browser import log_in, shoot

pytestmark = [pytest.mark.served, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_staff_see_the_probe_and_the_failed_answers_of_a_served_judge(
    browser, live_server, artifacts_dir: Path, settings, llama_server: LlamaServer
) -> None:
    forget_connections()
    settings.PARAPLUIE_MODELS = parse_models(
        f"laptop[server={llama_server.url},chat_template=embedded,top_logprobs=1,mode=top-k]"
    )
    settings.PARAEVAL_METRICS = ["parapluie_direct"]
    campaign = make_campaign(slug="served", name="Served judge")
    for source, hypothesis in demo_pairs()[0][:4]:
        make_pair(campaign, source=source, hypothesis=hypothesis)
    (metric,) = configs.build_enabled()[0]
    summary = runner.score_missing(metric, campaign=campaign)
    assert (summary.scored, summary.failed) == (0, 4)

    log_in(browser, live_server, reverse("staff:status"))
    section = browser.find_element(By.ID, "served-judges")
    row = section.find_element(By.CSS_SELECTOR, 'tr[data-judge="laptop"]')
    cells = [cell.text for cell in row.find_elements(By.CSS_SELECTOR, "th, td")]
    assert cells[:4] == ["laptop", llama_server.url, "SmolLM2-135M-Instruct-Q4_1", "top-1"]
    assert cells[4].splitlines() == [
        "/v1/completions: top 1 log-probabilities",
        "/v1/chat/completions: top 1 log-probabilities",
        "prompt log-probabilities (echo): yes",
    ]
    shoot(browser, artifacts_dir, "served_judge_status")
    browser.execute_script("arguments[0].scrollIntoView()", section)
    section.screenshot(str(artifacts_dir / "served_judge_probe_desktop.png"))

    browser.get(f"{live_server.url}{reverse('staff:dashboard')}?campaign=served")
    # The live poll redraws the list: read its texts in one script call, once it is drawn.
    read = "return [...document.querySelectorAll('#failure-reasons li')].map(li => li.innerText.trim());"
    WebDriverWait(browser, 30).until(lambda driver: driver.execute_script(read))
    items = browser.execute_script(read)
    label = metric.label
    assert label == f"parapluie_direct[SmolLM2-135M-Instruct-Q4_1, served at 127.0.0.1:{llama_server.port}, top-1]"
    assert sum(int(item.split(" ", 1)[0]) for item in items) == 4
    for item in items:
        assert item.split(" failed on ", 1)[1].startswith(f"{label}: '")
        assert item.endswith("' is not among the server's top 1")
    shoot(browser, artifacts_dir, "served_judge_dashboard")
