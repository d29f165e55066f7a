"""A volunteer takes the campaign in a real headless Chromium, against a live server."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from annotate.diff import changed_words, highlight
from annotate.guidelines import EXAMPLES, INTRODUCTION
from annotate.importers.demo import load_demo_campaign
from annotate.labels import LABEL_DISPLAY, LABEL_ORDER, Label
from annotate.models import Assignment, Campaign, Judgement, Pair, Volunteer
from tests.browser_support import navigation
from tests.builders import make_campaign, make_pair, make_training_pairs

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
    """The id of the pair shown (the page names it by the volunteer's item number only)."""
    item = int(browser.find_element(By.CSS_SELECTOR, "input[name=pair]").get_attribute("value"))
    token = browser.current_url.split("/v/", 1)[1].split("/", 1)[0]
    return Assignment.objects.filter(volunteer__token=token, position=item).latest("id").pair_id


def progress_text(browser: WebDriver) -> str:
    return browser.find_element(By.ID, "progress-text").text


def sentences(browser: WebDriver) -> list[str]:
    return [element.text for element in browser.find_elements(By.CSS_SELECTOR, ".pair-card .sentence-text")]


def marked_words(browser: WebDriver, scope: str = ".pair-card") -> list[list[str]]:
    """The yellow words of each sentence on screen, top sentence first."""
    return [
        [mark.text for mark in sentence.find_elements(By.CSS_SELECTOR, "mark.diff")]
        for sentence in browser.find_elements(By.CSS_SELECTOR, f"{scope} .sentence-text")
    ]


def expected_marks(top: str, bottom: str) -> list[list[str]]:
    """What the server-side highlighter marks in the two sentences, in the order shown."""
    first, second = highlight(top, bottom)
    return [changed_words(first), changed_words(second)]


def start_campaign(browser: WebDriver, live_server, slug: str, level: int = 2, query: str = "") -> None:
    """Welcome page: an English level, consent, Start; lands on the guidelines step."""
    browser.get(f"{live_server.url}/c/{slug}/{query}")
    browser.find_element(By.CSS_SELECTOR, f"label[for=id_english_level_{level}]").click()
    browser.find_element(By.ID, "id_consent").click()
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "form.start-form button[type=submit]").click()
    assert browser.current_url.endswith("/guidelines/")


def leave_step(browser: WebDriver, selector: str) -> None:
    """Click the button of the guidelines step or of the end-of-training page."""
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, selector).click()


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
        browser.find_element(By.CSS_SELECTOR, "form.start-form button[type=submit]").click()  # no consent, no level
    assert "Please tick the consent box" in browser.find_element(By.ID, "consent-error").text
    assert not Volunteer.objects.exists()
    browser.find_element(By.CSS_SELECTOR, "label[for=id_english_level_3]").click()  # Native
    browser.find_element(By.ID, "id_consent").click()
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, "form.start-form button[type=submit]").click()
    volunteer = Volunteer.objects.get(campaign=campaign)
    assert volunteer.english_level == "native"
    # The guidelines step, between the welcome page and the training: the paper's text, its five
    # examples with their answers, and "Start the training".
    assert browser.current_url == f"{live_server.url}/v/{volunteer.token}/guidelines/"
    step = browser.find_element(By.TAG_NAME, "main")
    assert INTRODUCTION in step.text
    examples = step.find_elements(By.CSS_SELECTOR, ".example")
    assert len(examples) == 5
    for shown_example, example in zip(examples, EXAMPLES, strict=True):
        assert LABEL_DISPLAY[example.label] in shown_example.text and example.explanation in shown_example.text
    start_button = browser.find_element(By.CSS_SELECTOR, "[data-start-training]")
    assert start_button.text == "Start the training"
    browser.save_screenshot(str(artifacts_dir / "campaign_guidelines_step.png"))
    leave_step(browser, "[data-start-training]")
    assert browser.current_url == f"{live_server.url}/v/{volunteer.token}/"
    # Shown once: back to the step's address, the volunteer goes on to their pair.
    with navigation(browser):
        browser.get(f"{live_server.url}/v/{volunteer.token}/guidelines/")
    assert browser.current_url == f"{live_server.url}/v/{volunteer.token}/"

    assert "js" in browser.find_element(By.TAG_NAME, "html").get_attribute("class").split()
    assert browser.find_element(By.CSS_SELECTOR, ".keyboard-hint").is_displayed()
    # The training trial: five pairs, each followed by its expected answer and explanation.
    answers = ["1", "3", "3", "4", "5"]  # keys; the second one is "wrong" on purpose
    for position, key in enumerate(answers, start=1):
        assert progress_text(browser) == f"Pair {position} of 11"
        assert f"Training {position} of 5" in browser.find_element(By.CSS_SELECTOR, ".badge--training").text
        check_the_pair_page_looks_right(browser)
        source, hypothesis = TRAINING[position - 1][:2]
        # Training pairs are shown in their imported order, the same for everyone.
        assert sentences(browser) == [source, hypothesis]
        assert marked_words(browser) == expected_marks(source, hypothesis)
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
    # After the last training pair: the training is over, answers now count.
    assert browser.current_url == f"{live_server.url}/v/{volunteer.token}/training-done/"
    done_text = browser.find_element(By.TAG_NAME, "main").text
    assert "The training is over" in done_text and "your answers count" in done_text
    assert "6 pairs to judge: about 2 minutes." in done_text
    browser.save_screenshot(str(artifacts_dir / "campaign_training_done.png"))
    leave_step(browser, "[data-start-judging]")
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
        # The exact yellow words of each sentence, in the order shown.
        assert marked_words(browser) == expected_marks(top, bottom)
        assert all(marked_words(browser)), "both sentences have highlights"
        # Time left: the pairs not answered yet at 15 s each.
        minutes = round((11 - (5 + number)) * 15 / 60)  # 6, 5, 4 pairs left: 2, 1, 1 minutes
        assert minutes == [2, 1, 1][number]
        expected_left = f"about {minutes} minute{'s' if minutes > 1 else ''} left"
        assert browser.find_element(By.ID, "time-left").text == expected_left
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
            # The personal link to continue later, with a Copy button.
            browser.find_element(By.CSS_SELECTOR, ".resume-link summary").click()
            field = browser.find_element(By.ID, "personal-link")
            assert field.get_attribute("value") == f"http://127.0.0.1:8000/v/{volunteer.token}/"
            browser.execute_cdp_cmd(
                "Browser.grantPermissions",
                {"origin": live_server.url, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
            )
            browser.find_element(By.CSS_SELECTOR, "[data-copy-link]").click()
            wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, "[data-copy-status]").text == "Link copied.")
            copied = browser.execute_async_script(
                "const done = arguments[0]; navigator.clipboard.readText().then(done, e => done('error ' + e));"
            )
            assert copied == f"http://127.0.0.1:8000/v/{volunteer.token}/"
            browser.save_screenshot(str(artifacts_dir / "campaign_pair_link.png"))
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
    start_campaign(browser, live_server, campaign.slug, level=1)
    assert browser.find_element(By.CSS_SELECTOR, "[data-start-training]").text == "Start"  # no training
    leave_step(browser, "[data-start-training]")
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
    start_campaign(browser, live_server, campaign.slug, level=0)
    leave_step(browser, "[data-start-training]")  # a plain form POST
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


def walk_the_training(browser: WebDriver, keys: list[str]) -> list[dict[str, object]]:
    """Answer the training with ``keys``; return what each training page and its feedback showed."""
    pages = []
    for key in keys:
        page: dict[str, object] = {
            "progress": progress_text(browser),
            "sentences": sentences(browser),
            "marks": marked_words(browser),
        }
        answer_and_wait(browser, key=key)
        page["feedback"] = browser.find_element(By.CSS_SELECTOR, ".feedback").text
        page["feedback_sentences"] = [
            element.text for element in browser.find_elements(By.CSS_SELECTOR, ".pair-card .sentence-text")
        ]
        page["feedback_marks"] = marked_words(browser)
        pages.append(page)
        with navigation(browser):
            press(browser, Keys.ENTER)
    return pages


def test_two_volunteers_see_the_same_training_and_every_explanation_is_true(browser_factory, live_server) -> None:
    """Paper, section 3.1: the training trial is the same for all judges (the demo campaign)."""
    campaign = load_demo_campaign("demo").campaign
    training = list(Pair.objects.filter(campaign=campaign, is_training=True).order_by("training_position"))
    walks = []
    for level in (0, 3):
        browser = browser_factory()
        start_campaign(browser, live_server, campaign.slug, level=level)
        leave_step(browser, "[data-start-training]")
        walks.append(walk_the_training(browser, ["4", "1", "2", "3", "5"]))
        assert browser.current_url.endswith("/training-done/")
    first, second = walks
    assert first == second  # sentences, order, highlights and feedback, page by page
    for page, pair in zip(first, training, strict=True):
        assert page["sentences"] == page["feedback_sentences"] == [pair.source, pair.hypothesis]
        assert page["marks"] == page["feedback_marks"] == expected_marks(pair.source, pair.hypothesis)
        assert pair.explanation in page["feedback"]
    # The explanations that name a sentence are true on screen.
    assert "passive voice" in training[0].explanation and "was written by" in first[0]["sentences"][1]
    assert "the first sentence says what colour the ball is" in training[3].explanation
    assert "red" in first[3]["sentences"][0] and "red" not in first[3]["sentences"][1]
    assert first[3]["marks"] == [["red"], []]
    assert "The second sentence doesn't make sense" in training[4].explanation
    assert first[4]["sentences"][1] == "Roses evening the gardener every."
    # Every volunteer's training judgements are stored with the source on top.
    assert set(Judgement.objects.filter(is_training=True).values_list("source_on_top", flat=True)) == {True}


def test_on_a_phone_every_demo_pair_shows_all_five_answers_without_scrolling(
    browser: WebDriver, live_server, artifacts_dir: Path
) -> None:
    campaign = load_demo_campaign("phone").campaign
    pool = Pair.objects.filter(campaign=campaign, is_training=False).count()
    Campaign.objects.filter(pk=campaign.pk).update(quota=pool, judges_per_pair=1)
    # A phone's viewport (390 x 844 CSS pixels, the browser's own bars not included).
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}
    )
    # A touch screen: coarse pointer, no hover (the keyboard hints are hidden there).
    browser.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "pointer", "value": "coarse"}, {"name": "hover", "value": "none"}]},
    )
    start_campaign(browser, live_server, campaign.slug)
    leave_step(browser, "[data-start-training]")
    assert browser.execute_script("return matchMedia('(hover: none) and (pointer: coarse)').matches")
    seen = 0
    worst = 0.0
    while True:
        if browser.current_url.endswith("/training-done/"):
            leave_step(browser, "[data-start-judging]")
        if browser.current_url.endswith("/done/"):
            break
        if "/training/" in browser.current_url:  # feedback after a training pair
            with navigation(browser):
                browser.find_element(By.CSS_SELECTOR, "[data-continue]").click()
            continue
        bottoms = browser.execute_script(
            "return Array.from(document.querySelectorAll('button.answer')).map(b => b.getBoundingClientRect().bottom)"
        )
        height = browser.execute_script("return window.innerHeight")
        assert height == 844
        assert len(bottoms) == 5 and max(bottoms) <= height, (progress_text(browser), sentences(browser), bottoms)
        assert browser.execute_script("return window.scrollY") == 0
        assert not browser.find_element(By.CSS_SELECTOR, ".keyboard-hint").is_displayed()
        assert not any(key.is_displayed() for key in browser.find_elements(By.CSS_SELECTOR, ".answer-key"))
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 390
        if max(bottoms) > worst:
            worst = max(bottoms)
            browser.save_screenshot(str(artifacts_dir / "campaign_phone_tallest_pair.png"))
        seen += 1
        with navigation(browser):
            browser.find_elements(By.CSS_SELECTOR, "button.answer")[1].click()
    assert seen == 5 + pool  # every demo pair, training included


def test_on_a_laptop_screen_the_welcome_page_start_button_is_visible(
    browser: WebDriver, live_server, artifacts_dir: Path
) -> None:
    campaign = load_demo_campaign("laptop").campaign
    french = make_campaign(slug="etude", name="Étude de paraphrases", language="fr", quota=50)
    make_training_pairs(french, 5)
    for _ in range(60):
        make_pair(french)
    browser.set_window_size(1366, 768)
    browser.get(f"{live_server.url}/c/{campaign.slug}/")
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": 1366, "height": 768, "deviceScaleFactor": 1, "mobile": False}
    )
    for slug in (campaign.slug, "etude"):
        with navigation(browser):
            browser.get(f"{live_server.url}/c/{slug}/")
        inner = browser.execute_script("return window.innerHeight")
        bottom = browser.execute_script(
            "return document.querySelector('form.start-form button[type=submit]').getBoundingClientRect().bottom"
        )
        browser.save_screenshot(str(artifacts_dir / f"campaign_welcome_laptop_{slug}.png"))
        assert inner == 768 and bottom <= inner, (slug, bottom, inner)


def test_a_french_campaign_walked_in_french(browser: WebDriver, live_server, artifacts_dir: Path) -> None:
    campaign = make_campaign(slug="etude", name="Étude de paraphrases", language="fr", quota=2, judges_per_pair=3)
    make_pair(
        campaign,
        source="Le chat boit du lait.",
        hypothesis="Le chat boit de l'eau.",
        is_training=True,
        training_position=1,
        expected_label=Label.SLIGHTLY_SIMILAR.value,
        explanation="Les sujets et les actions sont semblables, mais l'eau n'est pas du lait.",
    )
    make_pair(campaign, source="Le musée ouvre à neuf heures.", hypothesis="Le musée ferme à neuf heures.")
    make_pair(campaign, source="Il pleut depuis ce matin.", hypothesis="Depuis ce matin, il pleut.")
    for width, height, name in ((1366, 768, "desktop"), (390, 844, "phone")):
        browser.delete_all_cookies()
        browser.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": name == "phone"},
        )
        browser.get(f"{live_server.url}/c/etude/")
        main = browser.find_element(By.TAG_NAME, "main").text
        assert "Votre tâche" in main and "Comment évaluez-vous votre niveau de français ?" in main
        browser.save_screenshot(str(artifacts_dir / f"campaign_fr_welcome_{name}.png"))
        start_campaign(browser, live_server, "etude", level=3)
        assert browser.find_element(By.CSS_SELECTOR, "[data-start-training]").text == "Commencer l'entraînement"
        browser.save_screenshot(str(artifacts_dir / f"campaign_fr_guidelines_{name}.png"))
        leave_step(browser, "[data-start-training]")
        assert progress_text(browser) == "Paire 1 sur 3"
        texts = [
            b.find_element(By.CSS_SELECTOR, ".answer-text").text
            for b in browser.find_elements(By.CSS_SELECTOR, "button.answer")
        ]
        assert texts == [
            "Très différentes",
            "Légèrement similaires",
            "Plutôt similaires",
            "Même sens",
            "Je ne sais pas",
        ]
        colours = [background(browser, b) for b in browser.find_elements(By.CSS_SELECTOR, "button.answer")]
        assert colours == [GREY, GREY, GREY, GREY, LIGHT_BLUE]
        assert marked_words(browser) == [["lait"], ["de l'eau"]] or marked_words(browser) == expected_marks(
            "Le chat boit du lait.", "Le chat boit de l'eau."
        )
        browser.save_screenshot(str(artifacts_dir / f"campaign_fr_training_{name}.png"))
        browser.find_elements(By.CSS_SELECTOR, "button.answer")[1].click()
        wait(browser, lambda b: "/training/" in b.current_url)
        assert "Bravo : c'est la réponse attendue." in browser.find_element(By.CSS_SELECTOR, ".feedback").text
        leave_step(browser, "[data-continue]")
        assert "L'entraînement est terminé" in browser.find_element(By.TAG_NAME, "h1").text
        browser.save_screenshot(str(artifacts_dir / f"campaign_fr_training_done_{name}.png"))
        leave_step(browser, "[data-start-judging]")
        assert progress_text(browser) == "Paire 2 sur 3"
        assert browser.find_element(By.ID, "time-left").text in (
            "moins d'une minute restante",
            "environ 1 minute restante",
        )
        browser.save_screenshot(str(artifacts_dir / f"campaign_fr_pair_{name}.png"))
        for _ in range(2):
            with navigation(browser):
                browser.find_elements(By.CSS_SELECTOR, "button.answer")[3].click()
        assert browser.current_url.endswith("/done/")
        assert "Merci !" in browser.find_element(By.TAG_NAME, "h1").text
        browser.save_screenshot(str(artifacts_dir / f"campaign_fr_done_{name}.png"))
    # The switch: English pages, the level question still about French.
    browser.delete_all_cookies()
    browser.get(f"{live_server.url}/c/etude/")
    with navigation(browser):
        browser.find_element(By.CSS_SELECTOR, ".language-switch button[value=en]").click()
    main = browser.find_element(By.TAG_NAME, "main").text
    assert "Your task" in main and "How would you rate your French?" in main


def prolific_study() -> Campaign:
    campaign = make_campaign(
        slug="prolific",
        name="Paraphrase study",
        quota=3,
        judges_per_pair=3,
        platform="prolific",
        completion_code="C7Q4PASS",
        screened_out_code="C7Q4SCRN",
        check_positions="2",
    )
    make_pair(
        campaign,
        source="The shop opens at nine.",
        hypothesis="The shop opens at nine.",
        is_check=True,
        expected_label=Label.SAME_MEANING.value,
    )
    for source, hypothesis in POOL[:4]:
        make_pair(campaign, source=source, hypothesis=hypothesis)
    return campaign


def walk_to_the_end(browser: WebDriver, check_answer: Label) -> list[str]:
    """Answer every pair (the check with ``check_answer``); every page's HTML on the way."""
    pages = []
    while not browser.current_url.endswith("/done/"):
        pages.append(browser.page_source)
        pair = Pair.objects.get(pk=current_pair_id(browser))
        assert not browser.find_elements(By.CSS_SELECTOR, ".badge--training")  # a check looks like any pair
        label = check_answer if pair.is_check else Label.MOSTLY_SIMILAR
        answer_and_wait(browser, label=label)
    return pages


def test_a_prolific_participant_goes_from_the_link_to_the_completion_code(
    browser_factory, live_server, artifacts_dir: Path
) -> None:
    prolific_study()
    link = f"{live_server.url}/c/prolific/?PROLIFIC_PID=5f1e2d3c4b5a69788796a5b4&STUDY_ID=s1&SESSION_ID=x1"
    browser = browser_factory()
    browser.get(link)
    browser.save_screenshot(str(artifacts_dir / "prolific_welcome.png"))
    # The hidden identifiers travel with the start form.
    start_campaign(browser, live_server, "prolific", query=link.split("/prolific/")[1])
    volunteer = Volunteer.objects.get()
    assert volunteer.participant_id == "5f1e2d3c4b5a69788796a5b4" and volunteer.session_id == "x1"
    leave_step(browser, "[data-start-training]")
    first_pair = current_pair_id(browser)

    # The same participant on another device: no second volunteer, the same pair.
    other = browser_factory()
    with navigation(other):
        other.get(link)
    assert other.current_url == f"{live_server.url}/v/{volunteer.token}/"
    assert current_pair_id(other) == first_pair
    assert Volunteer.objects.count() == 1

    pages = walk_to_the_end(browser, check_answer=Label.SAME_MEANING)
    assert all("C7Q4PASS" not in page and "C7Q4SCRN" not in page for page in pages)
    assert browser.find_element(By.ID, "completion-code").text == "C7Q4PASS"
    assert browser.find_element(By.ID, "completion-link").get_attribute("href") == (
        "https://app.prolific.com/submissions/complete?cc=C7Q4PASS"
    )
    browser.save_screenshot(str(artifacts_dir / "prolific_completion_code.png"))


def test_a_participant_who_fails_the_check_gets_the_other_code(browser: WebDriver, live_server, artifacts_dir) -> None:
    prolific_study()
    start_campaign(browser, live_server, "prolific", query="?PROLIFIC_PID=60aa11bb22cc33dd44ee55ff")
    leave_step(browser, "[data-start-training]")
    walk_to_the_end(browser, check_answer=Label.VERY_DIFFERENT)
    assert browser.find_element(By.ID, "completion-code").text == "C7Q4SCRN"
    assert "C7Q4PASS" not in browser.page_source
    browser.save_screenshot(str(artifacts_dir / "prolific_screened_out.png"))
