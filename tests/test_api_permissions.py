"""Who may call the API: a matrix of callers by every operation of the OpenAPI schema.

Only staff get in. Anonymous callers get 401; a volunteer's token (their credential for the
campaign pages) opens nothing, whether sent as an API token, a cookie or a query parameter; a
logged-in user without the staff flag gets 403.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from annotate.models import Campaign
from annotate.views import cookie_name
from tests.api_support import *  # noqa: F403
from tests.api_support import token_client
from tests.builders import make_campaign, make_judgement, make_metric_config, make_pair, make_score, make_volunteer

pytestmark = pytest.mark.django_db


# Documents and docs pages, which are not operations of the schema but are staff-only too.
EXTRA_URLS = [("get", "/api/"), ("get", "/api/schema/"), ("get", "/api/docs/"), ("get", "/api/redoc/")]
DOCS_PAGES = {"/api/docs/", "/api/redoc/"}


def schema_operations() -> list[tuple[str, str]]:
    """(method, path template) of every operation in the generated OpenAPI document."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return sorted(
        (method, path)
        for path, item in schema["paths"].items()
        for method in item
        if method in {"get", "post", "put", "patch", "delete"}
    )


@dataclass
class World:
    campaign_slug: str
    volunteer_token: str
    ids: dict[str, int]

    def url(self, template: str) -> str:
        url = template.replace("{slug}", self.campaign_slug)
        if "{id}" in url:
            collection = url.split("/")[2]  # /api/<collection>/{id}/
            url = url.replace("{id}", str(self.ids[collection]))
        assert not re.search(r"[{}]", url), url
        return url


@pytest.fixture
def world() -> World:
    campaign = make_campaign(slug="matrix")
    pair = make_pair(campaign)
    volunteer = make_volunteer(campaign)
    judgement = make_judgement(pair, volunteer)
    config = make_metric_config("lev", label="lev")
    score = make_score(pair, config, 0.5)
    return World(
        campaign_slug="matrix",
        volunteer_token=volunteer.token,
        ids={"pairs": pair.pk, "judgements": judgement.pk, "metric-configs": config.pk, "scores": score.pk},
    )


def _call(client: APIClient, method: str, url: str, **extra):  # type: ignore[no-untyped-def]
    return getattr(client, method)(url, {} if method != "get" else None, format="json", **extra)


def _callers(world: World, django_user_model) -> dict[str, tuple[APIClient, dict]]:  # type: ignore[no-untyped-def]
    anonymous = APIClient()
    header = APIClient()
    header.credentials(HTTP_AUTHORIZATION=f"Token {world.volunteer_token}")
    bearer = APIClient()
    bearer.credentials(HTTP_AUTHORIZATION=f"Bearer {world.volunteer_token}")
    cookie = APIClient()
    cookie.cookies[cookie_name(Campaign.objects.get(slug=world.campaign_slug))] = world.volunteer_token
    cookie.cookies["sessionid"] = world.volunteer_token
    user = django_user_model.objects.create_user("not-staff", password="pw")
    user_session = APIClient()
    user_session.force_login(user)
    return {
        "anonymous": (anonymous, {}),
        "volunteer token header": (header, {}),
        "volunteer token as bearer": (bearer, {}),
        "volunteer cookie": (cookie, {}),
        "volunteer token in query": (anonymous, {"QUERY_STRING": f"token={world.volunteer_token}"}),
        "non-staff token": (token_client(user), {}),
        "non-staff session": (user_session, {}),
    }


EXPECTED = {
    "anonymous": 401,
    "volunteer token header": 401,
    "volunteer token as bearer": 401,
    "volunteer cookie": 401,
    "volunteer token in query": 401,
    "non-staff token": 403,
    "non-staff session": 403,
}


def test_the_matrix_covers_every_operation():
    operations = schema_operations()
    assert len(operations) >= 14
    assert ("post", "/api/pairs/") in operations
    assert ("get", "/api/campaigns/{slug}/export/") in operations


def test_only_staff_get_in(world, django_user_model, staff_user):
    callers = _callers(world, django_user_model)
    staff_token = token_client(staff_user)
    staff_session = APIClient()
    staff_session.force_login(staff_user)
    failures = []
    for method, template in [*schema_operations(), *EXTRA_URLS]:
        url = world.url(template)
        for name, (client, extra) in callers.items():
            status = _call(client, method, url, **extra).status_code
            expected = EXPECTED[name]
            # The HTML docs send a browser without credentials to the login page (a token still gets 401).
            if url in DOCS_PAGES and expected == 401 and "token header" not in name and "bearer" not in name:
                expected = 302
            if status != expected:
                failures.append(f"{name}: {method.upper()} {url} -> {status}, expected {expected}")
        for name, client in (("staff token", staff_token), ("staff session", staff_session)):
            status = _call(client, method, url).status_code
            if status in (401, 403):
                failures.append(f"{name}: {method.upper()} {url} -> {status}")
    assert not failures, "\n".join(failures)


def test_anonymous_answer_says_how_to_authenticate(api, world):
    response = api.get("/api/campaigns/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json() == {"detail": "Authentication credentials were not provided."}
    response = _call(_callers_header(world.volunteer_token), "get", "/api/campaigns/")
    assert response.json() == {"detail": "Invalid token."}


def _callers_header(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def test_the_volunteer_flow_stays_open_to_anonymous_callers(api, world):
    assert api.get(f"/c/{world.campaign_slug}/").status_code == 200


def test_an_inactive_staff_account_is_refused(staff_user):
    client = token_client(staff_user)
    staff_user.is_active = False
    staff_user.save()
    assert client.get("/api/campaigns/").status_code == 401


def test_a_token_made_by_drf_create_token_opens_the_api(staff_user, capsys):
    from django.core.management import call_command

    call_command("drf_create_token", staff_user.username)
    key = capsys.readouterr().out.split()[2]  # "Generated token <key> for user <name>"
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/campaigns/").status_code == 200
