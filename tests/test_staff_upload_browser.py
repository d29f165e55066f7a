"""The upload page in headless Chromium, with real MRPC pairs: upload, preview, mapping, a dry
run that names a bad line, then the corrected file imported with its progress and summary.

The task the page queues is run by the test (as the worker would) while the page waits, so the
progress bar is seen before and after a reload. Screenshots at 1366x768 and 390x844 go to
test-artifacts/.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from annotate import uploads
from annotate.models import Pair, PairUpload
from paraeval import broker
from tests.browser_support import navigation
from tests.builders import make_campaign
from tests.corpora import MISSING_REASON, MRPC
from tests.test_dashboard_browser import full_page_screenshot
from tests.test_staff_browser import DESKTOP, PHONE, log_in, no_sideways_scroll, wait, window

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROWS = 40
BAD_LINE = 8  # the file's line (header is line 1) whose second sentence is blanked


def mrpc_rows(count: int) -> list[list[str]]:
    """The first ``count`` MRPC test pairs as they are distributed (tab-separated, quotes plain)."""
    path = MRPC / "msr_paraphrase_test.txt"
    if not path.exists():
        pytest.skip(MISSING_REASON)
    lines = path.read_text(encoding="utf-8-sig").splitlines()[1 : count + 1]
    return [line.split("\t") for line in lines]


def own_csv(rows: list[list[str]], *, blank_line: int | None = None) -> str:
    """The pairs as a researcher's own CSV: other column names, a column of notes."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["pair", "sentence_a", "sentence_b", "quality", "note"])
    for line, (quality, first_id, second_id, first, second) in enumerate(rows, start=2):
        writer.writerow([f"{first_id}-{second_id}", first, "" if line == blank_line else second, quality, "x"])
    return out.getvalue()


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[broker.TaskMessage]:
    messages: list[broker.TaskMessage] = []

    def send(batch: list[broker.TaskMessage]) -> broker.SendResult:
        messages.extend(batch)
        return broker.SendResult(len(batch), 0)

    monkeypatch.setattr(broker, "send", send)
    return messages


def upload_file(browser: WebDriver, path: Path) -> None:
    browser.find_element(By.ID, "id_file").send_keys(str(path))
    with navigation(browser):
        browser.find_element(By.ID, "upload-submit").click()


def map_columns(browser: WebDriver) -> None:
    for column, label in [
        ("pair", "Id"),
        ("sentence_a", "Sentence 1 (source)"),
        ("sentence_b", "Sentence 2 (hypothesis)"),
        ("quality", "Gold label (paraphrase or not)"),
    ]:
        Select(browser.find_element(By.NAME, f"column:{column}")).select_by_visible_text(label)
    with navigation(browser):
        browser.find_element(By.ID, "save-mapping").click()


def run_and_wait(browser: WebDriver, sent: list[broker.TaskMessage], button: str, shots: Path, name: str) -> None:
    """Click the button, see the progress, reload, run the task as a worker would, see the page follow."""
    with navigation(browser):
        browser.find_element(By.ID, button).click()
    assert browser.find_element(By.ID, "upload-progress").get_attribute("value") == "0"
    window(browser, DESKTOP)
    browser.save_screenshot(str(shots / f"upload-{name}-running-1366x768.png"))
    with navigation(browser):
        browser.refresh()  # the progress survives a reload
    assert browser.find_element(By.ID, "progress-percent").text == "0"
    assert len(sent) == 1
    uploads.run_upload(*sent.pop().args)  # type: ignore[arg-type]
    wait(browser, lambda b: not b.find_elements(By.ID, "upload-progress"), timeout=20)


def test_upload_preview_mapping_dry_run_then_import(
    browser: WebDriver, live_server, sent, settings, tmp_path: Path, artifacts_dir: Path
) -> None:
    settings.DATA_DIR = tmp_path / "data"
    rows = mrpc_rows(ROWS)
    campaign = make_campaign(slug="mine", name="My study")
    broken = tmp_path / "mrpc-own.csv"
    broken.write_text(own_csv(rows, blank_line=BAD_LINE))
    fixed = tmp_path / "mrpc-own-fixed.csv"
    fixed.write_text(own_csv(rows))

    log_in(browser, live_server, "/staff/")
    window(browser, DESKTOP)
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, 'tr[data-campaign="mine"] a.upload-link').click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Upload pairs into My study"
    browser.save_screenshot(str(artifacts_dir / "upload-form-1366x768.png"))
    upload_file(browser, broken)

    # The preview: no column has a pair field's name, so all are ignored until mapped.
    assert browser.find_element(By.ID, "ignored-columns").text == (
        "Ignored columns: pair, sentence_a, sentence_b, quality, note"
    )
    map_columns(browser)
    assert browser.find_element(By.ID, "ignored-columns").text == "Ignored columns: note"
    first = browser.find_elements(By.CSS_SELECTOR, "#upload-preview tbody tr")[0]
    quality, first_id, second_id, source, hypothesis = rows[0]
    headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#upload-preview thead th")]
    assert headers == ["Line", "Id", "Sentence 1", "Sentence 2", "Gold label", "Check", "Problems"]
    cells = [cell.text for cell in first.find_elements(By.TAG_NAME, "td")]
    assert cells == ["2", f"{first_id}-{second_id}", source, hypothesis, "yes" if quality == "1" else "no", "no", ""]
    bad_row = browser.find_element(By.CSS_SELECTOR, f'#upload-preview tr[data-line="{BAD_LINE}"]')
    assert bad_row.find_elements(By.TAG_NAME, "td")[-1].text == "sentence_b: sentence_b is empty"
    window(browser, DESKTOP)
    full_page_screenshot(browser, artifacts_dir / "upload-preview-1366x768.png")
    window(browser, PHONE)
    assert no_sideways_scroll(browser)
    full_page_screenshot(browser, artifacts_dir / "upload-preview-390x844.png")
    window(browser, DESKTOP)

    # The dry run names the bad line and its field; nothing is stored.
    run_and_wait(browser, sent, "run-check", artifacts_dir, "check")
    assert browser.find_element(By.ID, "problems-title").text == "1 problem: nothing was stored"
    problem = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#upload-problems tbody td")]
    assert problem == [str(BAD_LINE), "sentence_b", "sentence_b is empty"]
    full_page_screenshot(browser, artifacts_dir / "upload-refused-1366x768.png")
    assert Pair.objects.filter(campaign=campaign).count() == 0

    # The corrected file: uploaded, mapped, imported with its progress and summary.
    browser.get(f"{live_server.url}/staff/campaigns/mine/upload/")
    upload_file(browser, fixed)
    map_columns(browser)
    run_and_wait(browser, sent, "run-import", artifacts_dir, "import")
    summary = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#upload-summary li")]
    positives = sum(row[0] == "1" for row in rows)
    assert summary == [
        f"Imported {ROWS} pairs (csv).",
        "Training pairs: 0",
        "Check pairs: 0",
        "Systems: none named",
        f"Gold labels: paraphrase {positives}, not paraphrase {ROWS - positives}, none 0",
        "Ignored columns: note",
    ]
    assert browser.find_element(By.ID, "state-text").text == "Imported"
    stored = list(Pair.objects.filter(campaign=campaign).order_by("id").values_list("external_id", "hypothesis"))
    assert stored == [(f"{row[1]}-{row[2]}", row[4]) for row in rows]
    assert PairUpload.objects.filter(campaign=campaign, state="imported").count() == 1
    full_page_screenshot(browser, artifacts_dir / "upload-imported-1366x768.png")
    window(browser, PHONE)
    assert no_sideways_scroll(browser)
    full_page_screenshot(browser, artifacts_dir / "upload-imported-390x844.png")
