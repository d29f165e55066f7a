"""``scripts/run.sh`` as a new user starts it (every default metric), driven in headless Chromium
while its scoring worker warms its models and scores the demo campaign: a researcher's dry run
of a 100-pair file starts within 5 seconds (the interactive worker serves it, whatever scoring
does), and a generation request shows its state on the generate page at once. Ctrl+C (SIGINT
to run.sh's process group) stops everything at the end.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from tests.browser_support import navigation
from tests.test_dashboard_browser import full_page_screenshot
from tests.test_run_script import count, kill_what_is_left, stop_on_ctrl_c
from tests.test_staff_browser import DESKTOP, PHONE, window
from tests.workers_support import ROOT, closed_port, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.model]

PAIRS = 100
STARTS_WITHIN_SECONDS = 5.0
DEMO_PAIRS = 71
DEFAULT_METRICS = 11  # PARAEVAL_METRICS's default list


def hundred_pairs(path: Path) -> Path:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "source", "hypothesis"])
    for n in range(PAIRS):
        writer.writerow([f"mine-{n}", f"The committee met on day {n}.", f"On day {n} the committee held a meeting."])
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def upload_state(browser: WebDriver) -> tuple[str, str]:
    """The upload's state and how much of the file its task has read, as the page shows them."""
    state = browser.find_element(By.ID, "upload-state").get_attribute("data-state") or ""
    percent = browser.find_elements(By.ID, "progress-percent")
    return state, percent[0].text if percent else ""


def test_a_researchers_dry_run_and_generation_do_not_wait_behind_scoring(
    browser: WebDriver, tmp_path: Path, artifacts_dir: Path
) -> None:
    data = tmp_path / "data"
    port = closed_port()
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL", "SECRET_KEY"}}
    env.update(PARAEVAL_DATA_DIR=str(data), PORT=str(port))
    for name in ("DJANGO_SETTINGS_MODULE", "PARAEVAL_METRICS"):  # the defaults, as a new user has them
        env.pop(name, None)
    env.setdefault("NLTK_DATA", str(ROOT / "data" / "nltk_data"))
    if sys.prefix != sys.base_prefix:
        env["PARAEVAL_VENV"] = sys.prefix
    output_path = tmp_path / "run.log"
    with output_path.open("wb") as output:
        run = subprocess.Popen(
            ["scripts/run.sh"], cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    try:

        def answering() -> bool:
            assert run.poll() is None, f"run.sh ended early:\n{output_path.read_text()[-3000:]}"
            try:
                with urllib.request.urlopen(f"{base}/c/demo/", timeout=5) as response:
                    return response.status == 200
            except OSError:
                return False

        wait_for(answering, timeout=300, interval=1, what="run.sh's server to answer")
        password = (data / "admin_password.txt").read_text().strip()
        window(browser, DESKTOP)
        browser.get(f"{base}/admin/login/?next=/staff/campaigns/demo/upload/")
        browser.find_element(By.ID, "id_username").send_keys("admin")
        browser.find_element(By.ID, "id_password").send_keys(password)
        with navigation(browser):
            browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()

        browser.find_element(By.ID, "id_file").send_keys(str(hundred_pairs(tmp_path / "mine.csv")))
        with navigation(browser):
            browser.find_element(By.ID, "upload-submit").click()
        with navigation(browser):
            browser.find_element(By.ID, "run-check").click()
        clicked = time.monotonic()
        seen = [upload_state(browser)]
        while seen[-1] == ("check_queued", "0") and time.monotonic() - clicked < STARTS_WITHIN_SECONDS:
            time.sleep(0.25)
            with navigation(browser):
                browser.refresh()
            seen.append(upload_state(browser))
        waited = time.monotonic() - clicked
        assert seen[-1] != ("check_queued", "0"), f"the dry run still queued after {waited:.1f} s: {seen}"
        assert not browser.find_elements(By.ID, "no-worker"), "the page says no worker runs while one does"
        # ... while the scoring worker was still warming its models or scoring the demo's pairs.
        done = count(data / "paraeval.sqlite3", "SELECT COUNT(*) FROM scoring_score WHERE status = 'done'")
        assert done < DEMO_PAIRS * DEFAULT_METRICS, (
            f"the demo was scored already ({done} scores): nothing to wait behind"
        )
        wait_for(lambda: (browser.refresh(), upload_state(browser))[1][0] == "checked", timeout=60, what="the dry run")
        assert browser.find_element(By.ID, "state-text").text == "Dry run passed"
        full_page_screenshot(browser, artifacts_dir / "run-sh-dry-run-1366x768.png")

        # A generation request: its run, with its state, on the page the POST answers.
        browser.get(f"{base}/staff/generate/")
        Select(browser.find_element(By.ID, "id_campaign")).select_by_value(
            browser.find_element(By.CSS_SELECTOR, "#id_campaign option:not([value=''])").get_attribute("value")
        )
        with navigation(browser):
            browser.find_element(By.ID, "generate-submit").click()
        assert browser.find_element(By.ID, "generate-result").text.startswith("10 sources queued")
        runs = browser.find_elements(By.CSS_SELECTOR, "#generation-runs tbody tr[data-state]")
        assert len(runs) == 1
        assert runs[0].get_attribute("data-state") in {"queued", "running", "finished"}
        assert runs[0].find_element(By.CSS_SELECTOR, '[data-label="State:"] strong').text == runs[0].get_attribute(
            "data-state"
        )
        for size in (DESKTOP, PHONE):
            window(browser, size)
            full_page_screenshot(browser, artifacts_dir / f"run-sh-generate-{size[0]}x{size[1]}.png")

        # The workers finish their current task first: a model's batch or a generation.
        stop_on_ctrl_c(run, data, output_path, patience=120)
    finally:
        kill_what_is_left(run, data)
