"""Abuse gets a 4xx with a reason, never a 500."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotate.models import Pair, Volunteer
from tests.api_support import staff_api, staff_user  # noqa: F401
from tests.builders import make_campaign, make_volunteer

pytestmark = pytest.mark.django_db

DEEP = "[" * 1000 + "]" * 1000


def test_a_nul_in_the_override_note_is_a_400_that_says_so(admin_client: Client) -> None:
    campaign = make_campaign(slug="nul-note")
    volunteer = make_volunteer(campaign)
    response = admin_client.post(
        "/staff/campaigns/nul-note/volunteers/",
        {"volunteer": volunteer.pk, "override": "exclude", "note": "bad\x00note"},
    )
    assert response.status_code == 400
    assert "note contains a NUL character (U+0000)" in response.content.decode()
    volunteer.refresh_from_db()
    assert volunteer.exclusion_override == ""


@pytest.mark.parametrize("value", ["abc", "1.5", "", "99999999999999999999999"])
def test_a_volunteer_that_is_not_an_id_is_a_400_that_says_so(admin_client: Client, value: str) -> None:
    make_campaign(slug="bad-id")
    response = admin_client.post("/staff/campaigns/bad-id/volunteers/", {"volunteer": value, "override": "exclude"})
    assert response.status_code == 400
    assert f"volunteer must be a volunteer's number, not {value!r}" in response.content.decode()


def test_json_nested_1000_deep_is_a_400_on_pairs(staff_api) -> None:  # noqa: F811
    make_campaign(slug="deep")
    body = '{"campaign": "deep", "pairs": [{"source": "a", "hypothesis": "b", "x": ' + DEEP + "}]}"
    response = staff_api.post("/api/pairs/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"detail": "The JSON body is nested more than 32 levels deep; records are flat objects."}
    assert not Pair.objects.exists()


def test_json_nested_1000_deep_is_a_400_on_campaigns(staff_api) -> None:  # noqa: F811
    body = '{"slug": "x", "name": ' + DEEP + "}"
    response = staff_api.post("/api/campaigns/", body, content_type="application/json")
    assert response.status_code == 400
    assert "nested more than 32 levels deep" in response.json()["detail"]


def test_json_nested_40_deep_but_parsable_is_refused_too(staff_api) -> None:  # noqa: F811
    deep = "[" * 40 + "]" * 40
    response = staff_api.post("/api/campaigns/", '{"slug": "x", "name": ' + deep + "}", content_type="application/json")
    assert response.status_code == 400
    assert "nested more than 32 levels deep" in response.json()["detail"]


def test_import_pairs_names_the_line_of_a_too_deep_record(tmp_path: Path) -> None:
    make_campaign(slug="deep-file")
    path = tmp_path / "pairs.jsonl"
    good = json.dumps({"source": "A cat.", "hypothesis": "A feline."})
    path.write_text(good + "\n" + '{"source": "a", "hypothesis": "b", "x": ' + DEEP + "}\n", encoding="utf-8")
    errors = StringIO()
    with pytest.raises(CommandError, match="refused"):
        call_command("import_pairs", str(path), "--campaign", "deep-file", stderr=errors)
    assert "line 2: not valid JSON: nested more than 32 levels deep" in errors.getvalue()
    assert not Pair.objects.exists()
    assert Volunteer.objects.count() == 0
