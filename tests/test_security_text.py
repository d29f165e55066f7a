"""Text PostgreSQL refuses (NUL, lone surrogates) is a 400 with a message, never a 500.

On PostgreSQL each of these requests was a ``DataError`` (500) before the guards; run the
module with ``DATABASE_URL=postgres://…`` to see it (on SQLite they are refused the same way).
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from annotate.models import Pair
from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign, make_pair, make_volunteer

pytestmark = pytest.mark.django_db

NUL = "contains a NUL character (U+0000): remove it and send the request again."


def page_text(response) -> str:  # type: ignore[no-untyped-def]
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    return response.content.decode()


@pytest.mark.parametrize("path", ["/v/%00/", "/v/x%00/done/", "/v/%00/answer/", "/c/demo%00/", "/staff/%00"])
def test_a_nul_in_the_address_of_a_page_is_a_400_with_a_message(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 400
    assert page_text(response) == f"Bad request. The address {NUL}"


def test_a_nul_in_the_volunteer_cookie_is_a_400(client: Client) -> None:
    campaign = make_campaign(slug="cookies")
    client.cookies[f"paraeval_volunteer_{campaign.pk}"] = "abc\x00"
    response = client.get("/c/cookies/")
    assert response.status_code == 400
    assert page_text(response) == f"Bad request. A cookie {NUL}"


def test_a_nul_in_a_form_answer_is_refused_by_the_form(client: Client) -> None:
    campaign = make_campaign(slug="forms")
    make_pair(campaign)
    response = client.post("/c/forms/", {"consent": "on", "english_level": "advanced\x00"})
    assert response.status_code == 400  # the welcome form, with its error


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("/api/pairs/?campaign=demo%00", "campaign"),
        ("/api/pairs/?origin=%00", "origin"),
        ("/api/pairs/?external_id=a%00b", "external_id"),
        ("/api/judgements/?volunteer=%00", "volunteer"),
        ("/api/judgements/?campaign=%00", "campaign"),
        ("/api/scores/?metric_config=lev%00", "metric_config"),
        ("/api/metric-configs/?metric=%00", "metric"),
        ("/api/campaigns/demo/report/?origin=%00", "origin"),
        ("/api/campaigns/demo/export/?level=%00", "level"),
    ],
)
def test_a_nul_in_an_api_filter_is_a_json_400_naming_it(staff_api, query: str, name: str) -> None:
    make_campaign(slug="demo")
    response = staff_api.get(query)
    assert response.status_code == 400
    assert response.json() == {"detail": f"The query parameter {name} {NUL}"}


def test_a_nul_in_the_api_path_and_token_is_a_json_400(api) -> None:
    response = api.get("/api/campaigns/demo%00/")
    assert response.status_code == 400
    assert response.json() == {"detail": f"The address {NUL}"}
    response = Client(HTTP_AUTHORIZATION="Token abc\x00").get("/api/campaigns/")
    assert response.status_code == 400
    assert response.json() == {"detail": f"The header Authorization {NUL}"}


def test_a_nul_in_the_dashboard_filters_is_a_400(admin_client: Client) -> None:
    response = admin_client.get("/staff/dashboard/data/?origin=%00")
    assert response.status_code == 400
    assert page_text(response) == f"Bad request. The query parameter origin {NUL}"


def post_json(client, path: str, body: dict):  # type: ignore[no-untyped-def]
    return client.post(path, json.dumps(body), content_type="application/json")


def test_a_nul_in_the_campaign_of_an_import_is_a_json_400(staff_api) -> None:
    make_campaign(slug="demo")
    body = {"campaign": "demo\x00", "pairs": [{"source": "a", "hypothesis": "b"}]}
    response = post_json(staff_api, "/api/pairs/", body)
    assert response.status_code == 400
    assert response.json() == {"detail": f"The field campaign {NUL}"}
    assert Pair.objects.count() == 0


def test_a_lone_surrogate_in_an_imported_record_is_named(staff_api) -> None:
    make_campaign(slug="demo")
    raw = (
        '{"campaign": "demo", "pairs": [{"source": "a", "hypothesis": "b"}, '
        '{"source": "x\\ud800y", "hypothesis": "b"}]}'
    )
    response = staff_api.post("/api/pairs/", raw, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "detail": "The field pairs[1].source contains a lone surrogate (U+D800), which is not valid Unicode "
        "text: remove it and send the request again."
    }


def test_escaped_emoji_and_a_literal_backslash_u0000_are_accepted(staff_api) -> None:
    """Surrogate pairs are valid text; the six characters \\u0000 written out are not a NUL."""
    make_campaign(slug="demo")
    raw = (
        '{"campaign": "demo", "pairs": [{"id": "e1", "source": "Nice \\ud83d\\ude00 day.", '
        '"hypothesis": "A path C:\\\\u0000 here."}]}'
    )
    response = staff_api.post("/api/pairs/", raw, content_type="application/json")
    assert response.status_code == 201, response.json()
    pair = Pair.objects.get(external_id="e1")
    assert (pair.source, pair.hypothesis) == ("Nice \U0001f600 day.", "A path C:\\u0000 here.")


def test_a_nul_in_a_new_campaign_slug_or_a_field_name_is_a_json_400(staff_api) -> None:
    response = post_json(staff_api, "/api/campaigns/", {"slug": "new\x00", "name": "New"})
    assert response.status_code == 400
    assert response.json() == {"detail": f"The field slug {NUL}"}
    response = post_json(staff_api, "/api/campaigns/", {"slug": "new", "na\x00me": "New"})
    assert response.status_code == 400
    assert response.json() == {"detail": f"A field name in the body {NUL}"}


def test_a_volunteer_token_with_a_nul_does_not_reach_the_database(client: Client) -> None:
    volunteer = make_volunteer(make_campaign(slug="tokens"))
    assert client.get(f"/v/{volunteer.token}%00/").status_code == 400
    assert client.get(f"/v/{volunteer.token}/").status_code in {200, 302}
