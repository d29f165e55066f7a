"""Tune a judge and set the PARAPHRASUS objectives from the staff pages, in headless Chromium:
forms filled and sent, the results shown; screenshots at 1366x768 and 390x844, no sideways scroll."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from annotate.models import CorpusObjective
from paraeval import broker
from scoring.metrics.judges import parse_models
from scoring.models import TunedJudge
from tests.browser_support import navigation
from tests.builders import make_campaign, make_pair
from tests.test_bring_browser import _whole_page
from tests.test_staff_browser import DESKTOP, PHONE, _fresh_caches, log_in, no_sideways_scroll, shoot, window  # noqa: F401 - autouse

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _submit(browser, button: str) -> None:  # type: ignore[no-untyped-def]
    with navigation(browser):
        browser.find_element(By.ID, button).click()


def test_tune_a_judge_from_the_page(  # type: ignore[no-untyped-def]
    browser, live_server, artifacts_dir: Path, tmp_path: Path, settings, monkeypatch
):
    settings.PARAPLUIE_TUNED_DIR = tmp_path / "judges"
    settings.PARAPLUIE_MODELS = parse_models("smollm2[model=embedded]")
    settings.PARAEVAL_METRICS = ["lev", "parapluie_direct"]
    sent: list[broker.TaskMessage] = []
    monkeypatch.setattr(broker, "send", lambda messages: sent.extend(messages) or broker.SendResult(len(messages), 0))
    campaign = make_campaign(slug="mrpc-train", name="MRPC train")
    for index in range(8):
        make_pair(campaign, source=f"Source {index}.", hypothesis=f"Hypothesis {index}.", gold_label=index < 4)
    make_campaign(slug="mrpc-train-2", name="MRPC train")  # same name: told apart by its slug

    log_in(browser, live_server, "/staff/campaigns/mrpc-train/settings/")
    with navigation(browser):
        browser.find_element(By.ID, "tuning-link").click()
    assert Select(browser.find_element(By.ID, "id_campaign")).first_selected_option.text == "MRPC train (mrpc-train)"
    shoot(browser, artifacts_dir, "tuning_form")
    _whole_page(browser, artifacts_dir, "tuning_form")
    labels = [label.text for label in browser.find_elements(By.CSS_SELECTOR, "#tuning-form .setting > label")]
    assert labels == [
        "Campaign",
        "Labels",
        "Judge model",
        "ParaPLUIE template",
        "Folds",
        "Epochs",
        "Pairs at most",
        "Tokens at most",
        "Learning rate",
        "Seed",
        "Start from (optional)",
    ]

    # Too many folds for 4 labels of each class: refused with the reason, nothing stored.
    Select(browser.find_element(By.ID, "id_reference")).select_by_value("gold")
    folds = browser.find_element(By.ID, "id_folds")
    folds.clear()
    folds.send_keys("5")
    _submit(browser, "tuning-submit")
    assert browser.find_element(By.ID, "tuning-error").text == (
        "campaign 'mrpc-train' has 4 pairs labelled paraphrase and 4 labelled not (gold; 0 without a label): "
        "tuning with 5 folds needs at least 5 of each"
    )
    assert not TunedJudge.objects.exists()
    shoot(browser, artifacts_dir, "tuning_refused")

    folds = browser.find_element(By.ID, "id_folds")
    folds.clear()
    folds.send_keys("2")
    _submit(browser, "tuning-submit")
    row = TunedJudge.objects.get()
    assert browser.find_element(By.ID, "tuning-queued").text.startswith(
        f"Tuning {row.pk} of smollm2 on MRPC train (mrpc-train) queued on llm.smollm2"
    )
    assert [message.queue for message in sent] == ["llm.smollm2"]
    cells = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, f'tr[data-tuning="{row.pk}"] td')]
    assert cells == [str(row.pk), "queued", "smollm2 direct", "MRPC train (mrpc-train)", "gold", "—"]
    shoot(browser, artifacts_dir, "tuning_queued")
    for size, suffix in ((DESKTOP, "desktop"), (PHONE, "phone")):  # the list of tunings, lower on the page
        window(browser, size)
        browser.execute_script("document.getElementById('tunings-title').scrollIntoView()")
        browser.save_screenshot(str(artifacts_dir / f"tuning_list_{suffix}.png"))
        assert no_sideways_scroll(browser)


def test_set_the_paraphrasus_objectives_from_the_page(browser, live_server, artifacts_dir: Path):  # type: ignore[no-untyped-def]
    campaign = make_campaign(slug="paraphrasus", name="PARAPHRASUS")
    for origin in ("amr-true", "mrpc", "stsb-hard"):
        make_pair(campaign, origin=origin)
    log_in(browser, live_server, "/staff/campaigns/paraphrasus/settings/")
    with navigation(browser):
        browser.find_element(By.ID, "objectives-link").click()
    shoot(browser, artifacts_dir, "objectives_form")
    for origin, objective in (("amr-true", "maximise"), ("mrpc", "classify"), ("stsb-hard", "minimise")):
        Select(browser.find_element(By.NAME, f"objective:{origin}")).select_by_value(objective)
    _submit(browser, "objectives-submit")
    assert browser.find_element(By.ID, "objectives-saved").text == "Saved."
    chosen = {
        origin: Select(browser.find_element(By.NAME, f"objective:{origin}")).first_selected_option.text
        for origin in ("amr-true", "mrpc", "stsb-hard")
    }
    assert chosen == {
        "amr-true": "maximise (every pair is a paraphrase)",
        "mrpc": "classify (by the gold labels)",
        "stsb-hard": "minimise (no pair is a paraphrase)",
    }
    assert dict(CorpusObjective.objects.values_list("origin", "objective")) == {
        "amr-true": "maximise",
        "mrpc": "classify",
        "stsb-hard": "minimise",
    }
    shoot(browser, artifacts_dir, "objectives_saved")
