"""Staff pages: import a score file, queue candidate generation."""

from __future__ import annotations

import html
import io
import re

import pytest

from paraeval import broker
from scoring.metrics.judges import parse_models
from scoring.models import MetricConfig, Score
from tests.builders import make_campaign, make_pair, make_staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):  # type: ignore[no-untyped-def]
    user = make_staff("staff", "pw")
    client.force_login(user)
    return client


def _text(response) -> str:  # type: ignore[no-untyped-def]
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", response.content.decode())))


def _file(data: bytes, name: str) -> io.BytesIO:
    upload = io.BytesIO(data)
    upload.name = name
    return upload


def test_pages_are_staff_only(client):
    for url in ("/staff/scores/import/", "/staff/generate/"):
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"]


def test_score_import_page(staff_client):
    campaign = make_campaign(slug="page")
    pairs = [make_pair(campaign) for _ in range(2)]
    page = staff_client.get("/staff/scores/import/")
    assert page.status_code == 200 and "Import your metric's scores" in _text(page)
    form = {"campaign": "page", "name": "mine", "version": "1", "direction": "lower", "options": '{"k": 2}'}
    good = f"pair_id,score\n{pairs[0].pk},0.5\n{pairs[1].pk},0.25\n".encode()
    response = staff_client.post("/staff/scores/import/", {**form, "file": _file(good, "s.csv")})
    config = MetricConfig.objects.get()
    assert response.status_code == 200
    assert f"2 scores stored as mine 1 (imported) (configuration {config.config_hash[:12]})" in _text(response)
    assert (config.higher_is_closer, config.config["options"]) == (False, {"k": 2})
    again = staff_client.post("/staff/scores/import/", {**form, "file": _file(good, "s.csv")})
    assert "Already imported as mine 1 (imported); nothing changed" in _text(again)
    bad = f"pair_id,score\n{pairs[0].pk},inf\n999999,1\n".encode()
    refused = staff_client.post("/staff/scores/import/", {**form, "version": "2", "file": _file(bad, "s.csv")})
    assert refused.status_code == 400
    text = _text(refused)
    assert "The file was refused; nothing was stored (2 problems):" in text
    assert "line 2: score 'inf' is not finite" in text and "line 3: unknown pair: no pair has id 999999" in text
    assert Score.objects.count() == 2 and MetricConfig.objects.count() == 1
    bad_options = staff_client.post("/staff/scores/import/", {**form, "options": "[1]", "file": _file(good, "s.csv")})
    assert bad_options.status_code == 400
    assert 'options must be a JSON object, e.g. {"model": "x"}, got list' in _text(bad_options)
    # A file wrong on every line: the page lists the first 50 problems and counts the rest.
    many = ("pair_id,score\n" + "".join(f"{900000 + i},1\n" for i in range(60))).encode()
    refused = staff_client.post("/staff/scores/import/", {**form, "version": "3", "file": _file(many, "s.csv")})
    assert refused.status_code == 400
    assert refused.content.decode().count("<li>line ") == 50
    text = _text(refused)
    assert "nothing was stored (60 problems):" in text
    assert "And 10 more, not listed: fix these and send the file again." in text
    # The result links to the campaign's own dashboard.
    new = staff_client.post("/staff/scores/import/", {**form, "version": "4", "file": _file(good, "s.csv")})
    assert 'href="/staff/dashboard/?campaign=page">dashboard of' in new.content.decode()


def test_generate_page_queues_on_the_models_queue(
    staff_client, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.PARAPLUIE_MODELS = parse_models("smollm2[model=embedded]")
    sent: list[broker.TaskMessage] = []
    monkeypatch.setattr(broker, "send", lambda messages: sent.extend(messages) or broker.SendResult(len(messages), 0))
    campaign = make_campaign(slug="gen-page")
    for i in range(3):
        make_pair(campaign, source=f"Source {i}.")
    page = staff_client.get("/staff/generate/")
    assert page.status_code == 200 and "vulgar: MISTRAL vulgar (A.1)" in _text(page)
    form = {
        "campaign": "gen-page",
        "count": "2",
        "seed": "4",
        "templates": ["naive", "vulgar"],
        "models": ["smollm2"],
        "temperature": "1",
        "max_tokens": "8",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post("/staff/generate/", form)
    assert response.status_code == 200
    assert (
        "2 sources queued for 2 systems in 2 tasks: naive\u00d7smollm2[greedy,8tok], vulgar\u00d7smollm2[greedy,8tok]."
        in _text(response)
    )
    assert [(m.name, m.queue, m.args[1], len(m.args[4])) for m in sent] == [
        ("scoring.generation.tasks.generate_candidates", "llm.smollm2", "naive", 2),
        ("scoring.generation.tasks.generate_candidates", "llm.smollm2", "vulgar", 2),
    ]
    empty = make_campaign(slug="empty")
    refused = staff_client.post("/staff/generate/", {**form, "campaign": empty.slug})
    assert refused.status_code == 400 and "campaign 'empty' has no source sentences to sample from" in _text(refused)
