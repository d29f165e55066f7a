"""What a researcher walking through the pages sees, in headless Chromium at 1366x768 and 390x844:
the upload preview naming every problem of a Latin-1 line with an empty sentence and pointing a
gold code to the value mapping, an empty campaign's progress, and the end page of a volunteer who
was given no pair (English and French)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from selenium.webdriver.common.by import By

from annotate.labels import Label
from annotate.models import PairUpload
from tests.browser_support import navigation
from tests.builders import make_campaign, make_pair, make_training_pairs
from tests.test_campaign_full_and_sessions import judged_to_target
from tests.test_campaign_platform import answer_everything, start
from tests.test_staff_browser import _fresh_caches, log_in, shoot  # noqa: F401 - autouse

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_upload_preview_lists_every_problem_and_links_the_value_mapping(  # type: ignore[no-untyped-def]
    browser, live_server, artifacts_dir: Path, tmp_path: Path, settings
):
    settings.DATA_DIR = tmp_path
    make_campaign(slug="walk", name="Walk")
    path = tmp_path / "latin1.csv"
    path.write_bytes(
        b"source,hypothesis,label\n"
        b"Caf\xe9 au lait.,Coffee with milk.,1\n"
        b",The cat is asleep.,0\n"
        b"A dog barks.,A cat sleeps.,-100\n"
        b"The cat sleeps.,The cat is asleep.,1\n"
    )
    log_in(browser, live_server, "/staff/campaigns/walk/upload/")
    browser.find_element(By.ID, "id_file").send_keys(str(path))
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    rows = {
        row.get_attribute("data-line"): row.find_elements(By.TAG_NAME, "td")[-1].text
        for row in browser.find_elements(By.CSS_SELECTOR, "#upload-preview tbody tr")
    }
    assert rows == {
        "2": "not valid UTF-8: byte 0xE9 at byte offset 27 (save the file as UTF-8)",
        "3": "source: source is empty",
        "4": "label: label '-100' is not a gold label (use 1/0, true/false, yes/no or paraphrase/not paraphrase) "
        "Say what this value means: Value mapping of the gold column, above",
        "5": "",
    }
    assert "Caf\ufffd" not in browser.find_element(By.ID, "upload-preview").text
    link = browser.find_element(By.CSS_SELECTOR, "#upload-preview a.fix-link")
    link.click()
    assert browser.current_url.endswith("#id_gold_map")
    browser.execute_script("document.getElementById('preview-title').scrollIntoView()")
    shoot_here(browser, artifacts_dir, "upload_preview_problems")
    assert PairUpload.objects.get().state == "uploaded"


def shoot_here(browser, folder: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    """Screenshots at both sizes of the part of the page in view (not scrolled back to the top)."""
    from tests.test_staff_browser import DESKTOP, PHONE, no_sideways_scroll, window

    for size, suffix in ((DESKTOP, "desktop"), (PHONE, "phone")):
        window(browser, size)
        browser.execute_script("document.getElementById('upload-preview').scrollIntoView()")
        browser.save_screenshot(str(folder / f"{name}_{suffix}.png"))
        assert no_sideways_scroll(browser)
    window(browser, DESKTOP)


def test_an_empty_campaign_and_an_end_page_without_a_pair(  # type: ignore[no-untyped-def]
    browser, live_server, artifacts_dir: Path
):
    make_campaign(slug="fresh", name="Fresh")
    log_in(browser, live_server, "/staff/campaigns/fresh/settings/")
    assert browser.find_element(By.ID, "campaign-state").text == "empty (no pairs yet: not open to volunteers)"
    assert browser.find_element(By.CSS_SELECTOR, '[data-count="eta"]').text == "— (no pairs yet)"
    shoot(browser, artifacts_dir, "settings_empty_campaign")

    for slug, language, heading in (
        ("plain", "en", "Nothing to judge this time"),
        ("etude", "fr", "Rien à juger cette fois"),
    ):
        campaign = make_campaign(slug=slug, language=language, quota=3, judges_per_pair=1)
        make_training_pairs(campaign, 1)
        for _ in range(3):
            make_pair(campaign)
        client = Client()
        volunteer, _ = start(client, f"/c/{slug}/")
        judged_to_target(campaign)  # the pool is taken while the volunteer trains
        end = answer_everything(client, volunteer, check_answer=Label.SAME_MEANING)[-1]
        assert "no-pair-given" in end
        browser.get(f"{live_server.url}/v/{volunteer.token}/done/")
        assert browser.find_element(By.TAG_NAME, "h1").text == heading
        assert browser.find_element(By.ID, "no-pair-given").is_displayed()
        shoot(browser, artifacts_dir, f"end_page_no_pair_{language}")
