"""A volunteer takes the campaign in a real headless Chromium, against a live server."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from annotate.guidelines import INTRODUCTION
from annotate.labels import LABEL_ORDER, Label
from annotate.models import Judgement, Pair, Volunteer
from tests.browser_support import navigation
from tests.builders import make_campaign, make_pair

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GREY = "rgb(225, 228, 232)"  # --answer-grey
LIGHT_BLUE = "rgb(179, 229, 252)"  # --answer-dont-know
YELLOW = "rgb(255, 241, 118)"  # --highlight

TRAINING = [
    ("The cat drinks water.", "The cat eats kibble.", Label.VERY_DIFFERENT, "Drinking is not eating."),
    ("The cat drinks milk.", "The cat drinks water.", Label.SLIGHTLY_SIMILAR, "Water is not milk."),
    ("The cat drinks water.", "The cat quenches its thirst.", Label.MOSTLY_SIMILAR, "The liquid is not named."),
    ("The cat eats the mouse.", "The mouse is eaten by the cat.", Label.SAME_MEANING, "Only the voice changes."),
    ("The cat drinks tomato soup.", "Cat tomato soup.", Label.DONT_KNOW, "The second makes no sense."),
]
POOL = [
    ("Show me flights from New York to Florida.", "Show me flights from Florida to New York."),
    ("The meeting was moved to Friday.", "The meeting has been rescheduled for Friday."),
    ("Tom & Jerry <script>alert(1)</script> ran.", "Tom & Jerry ran home."),
    ("She sold her car last week.", "Last week, she sold her car."),
    ("The museum opens at nine.", "The museum closes at nine."),
    ("He rarely eats meat.", "He is a strict vegetarian."),
]


def wait(browser: WebDriver, condition, timeout: float = 30):
    return WebDriverWait(browser, timeout).until(condition)


def current_pair_id(browser: WebDriver) -> int:
    return int(browser.find_element(By.CSS_SELECTOR, "input[name=pair]").get_attribute("value"))


def progress_text(browser: WebDriver) -> str:
    return browser.find_element(By.ID, "progress-text").text


def sentences(browser: WebDriver) -> list[str]:
    return [element.text for element in browser.find_elements(By.CSS_SELECTOR, ".pair-card .sentence-text")]


def background(browser: WebDriver, element: object) -> str:
    """The computed background colour, as CSS writes it (rgb(r, g, b))."""
    return browser.execute_script("return getComputedStyle(arguments[0]).backgroundColor", element)


def press(browser: WebDriver, key: str) -> None:
    ActionChains(browser).send_keys(key).perform()


def answer_and_wait(browser: WebDriver, key: str | None = None, label: Label | None = None) -> None:
    """Answer with a key (1-5) or a click, and wait for the next page."""
    before = browser.current_url + str(current_pair_id(browser))
    with navigation(browser):
        if key is not None:
            press(browser, key)
        else:
            browser.find_element(By.CSS_SELECTOR, f"button.answer[value={label.value}]").click()
    assert browser.current_url + str(_pair_or_none(browser)) != before


def _pair_or_none(browser: WebDriver) -> int | None:
    found = browser.find_elements(By.CSS_SELECTOR, "input[name=pair]")
    return int(found[0].get_attribute("value")) if found else None


def check_the_pair_page_looks_right(browser: WebDriver) -> None:
    buttons = browser.find_elements(By.CSS_SELECTOR, "button.answer")
    assert [button.find_element(By.CSS_SELECTOR, ".answer-text").text for button in buttons] == [
        "Very different",
        "Slightly similar",
        "Mostly similar",
        "Same meaning",
        "Don't know",
    ]
    assert [button.get_attribute("value") for button in buttons] == [label.value for label in LABEL_ORDER]
    colours = [background(browser, button) for button in buttons]
    assert colours == [GREY, GREY, GREY, GREY, LIGHT_BLUE]
    for button in buttons:
        assert button.is_displayed() and button.is_enabled()


def test_a_volunteer_takes_the_campaign_in_chromium(browser: WebDriver, live_server, artifacts_dir: Path) -> None:
    campaign = make_campaign(name="Paraphrase judgements", slug="browser-study", quota=50, judges_per_pair=1)
    training = [
        make_pair(
            campaign,
            source=source,
            hypothesis=hypothesis,
            is_training=True,
            training_position=position,
            expected_label=label.value,
            explanation=explanation,
        )
        for position, (source, hypothesis, label, explanation) in enumerate(TRAINING, start=1)
    ]
    for source, hypothesis in POOL:
        make_pair(campaign, source=source, hypothesis=hypothesis)

    # Welcome: the task, the length, consent and English level.
    browser.get(f"{live_server.url}/c/{campaign.slug}/")
    assert "Paraphrase judgements" in browser.title
    page = browser.find_element(By.TAG_NAME, "main").text
    assert "5 training pairs" in page and "6 pairs" in page and "11 in all" in page
    browser.save_screenshot(str(artifacts_dir / "campaign_welcome.png"))
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()  # no consent, no level
    assert "Please tick the consent box" in browser.find_element(By.ID, "consent-error").text
    assert not Volunteer.objects.exists()
    browser.find_element(By.CSS_SELECTOR, "label[for=id_english_level_3]").click()  # Native
    browser.find_element(By.ID, "id_consent").click()
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    volunteer = Volunteer.objects.get(campaign=campaign)
    assert volunteer.english_level == "native"
    assert browser.current_url == f"{live_server.url}/v/{volunteer.token}/"

    assert "js" in browser.find_element(By.TAG_NAME, "html").get_attribute("class").split()
    assert browser.find_element(By.CSS_SELECTOR, ".keyboard-hint").is_displayed()
    # The training trial: five pairs, each followed by its expected answer and explanation.
    answers = ["1", "3", "3", "4", "5"]  # keys; the second one is "wrong" on purpose
    for position, key in enumerate(answers, start=1):
        assert progress_text(browser) == f"Pair {position} of 11"
        assert f"Training {position} of 5" in browser.find_element(By.CSS_SELECTOR, ".badge--training").text
        check_the_pair_page_looks_right(browser)
        if position == 1:
            browser.save_screenshot(str(artifacts_dir / "campaign_training.png"))
        answer_and_wait(browser, key=key)
        assert "/training/" in browser.current_url
        feedback = browser.find_element(By.CSS_SELECTOR, ".feedback").text
        source, hypothesis, expected, explanation = TRAINING[position - 1]
        assert "Expected answer" in feedback and expected.display in feedback and explanation in feedback
        if position == 2:
            assert "The expected answer was different." in feedback
            browser.save_screenshot(str(artifacts_dir / "campaign_training_feedback.png"))
        else:
            assert "Well done" in feedback
        # Continue has the focus: Enter goes on.
        assert browser.switch_to.active_element.get_attribute("data-continue") is not None
        with navigation(browser):
            press(browser, Keys.ENTER)
    stored = Judgement.objects.filter(volunteer=volunteer).order_by("answered_at")
    assert [j.pair_id for j in stored] == [pair.pk for pair in training]
    assert all(j.is_training for j in stored)

    # Campaign pairs. The guidelines open over the pair and close without losing it.
    assert progress_text(browser) == "Pair 6 of 11"
    assert not browser.find_elements(By.CSS_SELECTOR, ".badge--training")
    first_pair = current_pair_id(browser)
    browser.find_element(By.CSS_SELECTOR, ".site-header [data-guidelines-open]").click()
    dialog = browser.find_element(By.ID, "guidelines-dialog")
    wait(browser, lambda _: dialog.get_attribute("open") is not None)
    assert INTRODUCTION in dialog.text
    assert len(dialog.find_elements(By.CSS_SELECTOR, ".example")) == 5
    press(browser, "2")  # keys do not answer while the guidelines are open
    browser.save_screenshot(str(artifacts_dir / "campaign_guidelines.png"))
    press(browser, Keys.ESCAPE)
    wait(browser, lambda _: dialog.get_attribute("open") is None)
    assert current_pair_id(browser) == first_pair
    assert Judgement.objects.filter(volunteer=volunteer).count() == 5

    shown = []
    for number, how in enumerate(["click", "key", "key"]):
        pair = Pair.objects.get(pk=current_pair_id(browser))
        shown.append(pair.pk)
        check_the_pair_page_looks_right(browser)
        marks = browser.find_elements(By.CSS_SELECTOR, ".pair-card mark.diff")
        assert marks, "the differences are highlighted"
        assert {background(browser, mark) for mark in marks} == {YELLOW}
        top, bottom = sentences(browser)
        assert {top, bottom} == {pair.source, pair.hypothesis}  # shown as text, <script> included
        if number == 1:
            # Reload mid-campaign: the same pair, the same order, the same progress.
            before = (current_pair_id(browser), progress_text(browser), sentences(browser))
            with navigation(browser):
                browser.refresh()
            assert (current_pair_id(browser), progress_text(browser), sentences(browser)) == before
            # The campaign link brings the volunteer back to the same pair too (cookie).
            with navigation(browser):
                browser.get(f"{live_server.url}/c/{campaign.slug}/")
            assert (current_pair_id(browser), progress_text(browser), sentences(browser)) == before
            browser.save_screenshot(str(artifacts_dir / "campaign_pair.png"))
        assert progress_text(browser) == f"Pair {6 + number} of 11"
        if how == "click":
            answer_and_wait(browser, label=Label.MOSTLY_SIMILAR)
        else:
            answer_and_wait(browser, key="4")
        judgement = Judgement.objects.get(volunteer=volunteer, pair=pair)
        assert not judgement.is_training
        assert judgement.label == (Label.MOSTLY_SIMILAR if how == "click" else Label.SAME_MEANING).value
        assert (top == pair.source) == judgement.source_on_top
    assert progress_text(browser) == "Pair 9 of 11"
    assert len(set(shown)) == 3
    assert Judgement.objects.filter(volunteer=volunteer, is_training=False).count() == 3


def test_the_buttons_disable_once_an_answer_is_sent(browser: WebDriver, live_server) -> None:
    campaign = make_campaign(slug="double-click", quota=5)
    make_pair(campaign)
    make_pair(campaign)
    browser.get(f"{live_server.url}/c/{campaign.slug}/")
    browser.find_element(By.CSS_SELECTOR, "label[for=id_english_level_1]").click()
    browser.find_element(By.ID, "id_consent").click()
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    # Hold the submission so that the disabled state can be observed, then click twice more.
    browser.execute_script(
        "const form = document.getElementById('answer-form');"
        "form.addEventListener('submit', e => { window.__held = true; e.preventDefault(); });"
    )
    buttons = browser.find_elements(By.CSS_SELECTOR, "button.answer")
    buttons[3].click()
    assert browser.execute_script("return window.__held === true")
    assert all(not button.is_enabled() for button in buttons)
    assert browser.find_element(By.ID, "answer-form").get_attribute("aria-busy") == "true"
    hidden = browser.find_elements(By.CSS_SELECTOR, "input[type=hidden][name=label]")
    assert [element.get_attribute("value") for element in hidden] == ["same_meaning"]
    press(browser, "1")  # a key after the click does nothing either
    assert len(browser.find_elements(By.CSS_SELECTOR, "input[type=hidden][name=label]")) == 1


def test_without_javascript_on_a_phone_the_campaign_still_works(
    browser: WebDriver, live_server, artifacts_dir: Path
) -> None:
    campaign = make_campaign(slug="no-js", quota=5)
    make_pair(campaign, source="The museum opens at nine.", hypothesis="The museum closes at nine.")
    make_pair(campaign)
    browser.set_window_size(390, 844)
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    browser.get(f"{live_server.url}/c/{campaign.slug}/")
    browser.find_element(By.CSS_SELECTOR, "label[for=id_english_level_0]").click()
    browser.find_element(By.ID, "id_consent").click()
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    assert "js" not in browser.find_element(By.TAG_NAME, "html").get_attribute("class").split()
    assert not browser.find_element(By.CSS_SELECTOR, ".keyboard-hint").is_displayed()  # keys need JS
    # One column of full-width buttons, still in order, nothing wider than the screen.
    buttons = browser.find_elements(By.CSS_SELECTOR, "button.answer")
    assert len({button.location["x"] for button in buttons}) == 1
    assert [button.location["y"] for button in buttons] == sorted(button.location["y"] for button in buttons)
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 390
    browser.save_screenshot(str(artifacts_dir / "campaign_pair_phone.png"))
    # Without the dialog, the guidelines link opens them in a new tab: the pair stays put.
    link = browser.find_element(By.CSS_SELECTOR, ".site-header [data-guidelines-open]")
    assert link.get_attribute("target") == "_blank"
    first = current_pair_id(browser)
    with navigation(browser):
        buttons[2].click()  # a plain form POST
    assert current_pair_id(browser) != first
    assert Judgement.objects.get(pair_id=first).label == Label.MOSTLY_SIMILAR.value
