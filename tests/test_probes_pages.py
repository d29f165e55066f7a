"""The staff page of a probe set: the cards with their readings and a sample of each kind, in
plain HTTP and in Chromium (screenshots at 1366x768 and 390x844, no sideways scroll)."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from selenium.webdriver.common.by import By

from annotate.models import Pair
from scoring.models import Score
from tests.builders import make_campaign, make_metric_config, make_pair, make_staff
from tests.test_analysis_robustness import bag_of_words_cosine, bigram_overlap
from tests.test_staff_browser import _fresh_caches, log_in, shoot  # noqa: F401 - autouse

SOURCES = [
    (
        "Flights from Boston to Denver were cancelled by the small airline after the long strike.",
        "The small airline cancelled flights from Boston to Denver after the long strike.",
    ),
    (
        "The company did not sell 3,000 cats and dogs in Paris on Monday, March 3, 2004.",
        "In Paris the company sold no cats or dogs on March 3, 2004.",
    ),
]


def probe_campaign() -> None:
    campaign = make_campaign(slug="news", name="News")
    for source, hypothesis in SOURCES:
        make_pair(campaign, source=source, hypothesis=hypothesis, gold_label=True)
    call_command("build_probes", "--campaign", "news", "--seed", "20250101", stdout=StringIO())
    cosine = make_metric_config("bow", label="bag of words")
    bigrams = make_metric_config("bigrams", label="bigrams")
    for pair in Pair.objects.filter(campaign__slug="news-probes"):
        Score.objects.create(pair=pair, metric_config=cosine, value=bag_of_words_cosine(pair.source, pair.hypothesis))
        Score.objects.create(pair=pair, metric_config=bigrams, value=bigram_overlap(pair.source, pair.hypothesis))


@pytest.mark.django_db
def test_page_shows_cards_readings_and_samples(client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.PARAEVAL_BOOTSTRAP_RESAMPLES = 0
    probe_campaign()
    client.force_login(make_staff())
    page = client.get("/staff/campaigns/news/probes/").content.decode()
    assert "Campaign <code>news-probes</code>, built from 2 pairs of\n  <code>news</code>" in page
    assert '<tr data-config="' in page and '<th scope="row">bag of words</th>' in page
    # The bag of words ties every swap with its controls: one half, on both source pairs.
    assert '<td class="num" data-label="paws_swap:">0.500<br><span class="muted small">n=2</span></td>' in page
    assert "0.5 is a metric blind to the change" in page
    for kind in ("multi_swap", "paws_swap", "number", "date", "negation", "reversed", "padded", "control", "original"):
        assert f'<tr data-kind="{kind}">' in page
    # The group key is the source pair's id, so the new leading digit depends on it: any but 3.
    assert re.search(
        r'<td data-label="Hypothesis:">The company did not sell [124-9],000 cats and dogs '
        r"in Paris on Monday, March 3, 2004.</td>",
        page,
    )


@pytest.mark.django_db
def test_page_without_a_probe_set_says_how_to_build_one(client) -> None:  # type: ignore[no-untyped-def]
    make_campaign(slug="plain")
    client.force_login(make_staff())
    page = client.get("/staff/campaigns/plain/probes/").content.decode()
    assert "<code>manage.py build_probes --campaign plain</code>" in page
    assert client.get("/staff/campaigns/nope/probes/").status_code == 404


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_page_in_chromium(browser, live_server, artifacts_dir: Path, settings) -> None:  # type: ignore[no-untyped-def]
    settings.PARAEVAL_BOOTSTRAP_RESAMPLES = 200
    probe_campaign()
    log_in(browser, live_server, "/staff/campaigns/news/probes/")
    rows = browser.find_elements(By.CSS_SELECTOR, "#robustness-cards tbody tr")
    assert [row.find_element(By.TAG_NAME, "th").text for row in rows] == ["bigrams", "bag of words"]
    shoot(browser, artifacts_dir, "probe_set")


@pytest.mark.django_db
def test_page_form_queues_a_probe_set_or_says_why_not(client, monkeypatch, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    from paraeval import broker

    sent: list[broker.TaskMessage] = []
    monkeypatch.setattr(broker, "send", lambda messages: sent.extend(messages) or broker.SendResult(len(messages), 0))
    campaign = make_campaign(slug="news")
    client.force_login(make_staff())
    empty = client.post("/staff/campaigns/news/probes/", {"kinds": ["padded"]})
    assert (empty.status_code, empty.content.decode()) == (
        400,
        "Bad request: campaign 'news' has no pairs to build probes from",
    )
    make_pair(campaign)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/staff/campaigns/news/probes/", {"kinds": ["padded", "reversed"]})
    assert response.status_code == 302 and response["Location"] == "/staff/campaigns/news/probes/?queued=1"
    assert [m.args[:2] for m in sent] == [(campaign.pk, ["padded", "reversed"])]
    assert "A new probe set is being built" in client.get(response["Location"]).content.decode()
