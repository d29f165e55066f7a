"""While PostgreSQL cannot be reached: a 503 in the volunteer's language, with Retry-After,
saying their answers are safe. The database is pointed at a closed port."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from django.db import connection
from django.test import Client

from tests.builders import make_campaign, make_volunteer

pytestmark = pytest.mark.django_db(transaction=True)


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def database_down() -> Iterator[None]:
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(closed_port()))
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


def test_a_volunteer_gets_a_french_503_that_says_their_answers_are_safe(database_down) -> None:
    client = Client(raise_request_exception=False, HTTP_ACCEPT_LANGUAGE="fr")
    response = client.get("/c/some-campaign/")
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    assert response["Content-Language"] == "fr"
    page = response.content.decode()
    assert "De retour dans un instant" in page
    safe = "Vos réponses sont en sécurité : toutes celles que vous avez envoyées avant cette page ont été enregistrées."
    assert safe in page
    assert "Veuillez réessayer dans 30 secondes" in page
    assert "Server Error" not in page


def test_the_language_cookie_wins_and_english_reads_right(database_down) -> None:
    client = Client(raise_request_exception=False, HTTP_ACCEPT_LANGUAGE="fr")
    client.cookies["django_language"] = "en"
    response = client.post("/v/some-token/answer/", {"label": "same_meaning"})
    assert response.status_code == 503 and response["Retry-After"] == "30"
    page = response.content.decode()
    assert "Your answers so far are safe: every answer you sent before this page was stored." in page
    assert "Please try again in 30 seconds" in page


def test_the_api_answers_json_503(database_down) -> None:
    response = Client(raise_request_exception=False).get("/api/pairs/", HTTP_AUTHORIZATION="Token abc")
    assert response.status_code == 503 and response["Retry-After"] == "30"
    assert response.json()["detail"].startswith("The database cannot be reached right now")


def test_other_errors_stay_500(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    campaign = make_campaign(slug="boom")
    make_volunteer(campaign)

    def fail(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise ValueError("a bug")

    monkeypatch.setattr("annotate.views.render", fail)
    response = Client(raise_request_exception=False).get("/c/boom/")
    assert response.status_code == 500 and "Retry-After" not in response


def test_a_french_campaign_volunteer_with_an_english_browser_gets_french() -> None:
    campaign = make_campaign(slug="en-francais", language="fr")
    client = Client(raise_request_exception=False, HTTP_ACCEPT_LANGUAGE="en")
    assert client.get(f"/c/{campaign.slug}/").status_code == 200  # the database is up: the page sets the cookie
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(closed_port()))
    try:
        response = client.get(f"/c/{campaign.slug}/")
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)
    assert response.status_code == 503 and response["Content-Language"] == "fr"
    assert "De retour dans un instant" in response.content.decode()
