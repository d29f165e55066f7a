"""/api/campaigns/: list, create, retrieve, open and close."""

from __future__ import annotations

import pytest

from annotate.labels import Label
from annotate.models import Campaign
from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign, make_judgement, make_pair, make_training_pairs, make_volunteer

pytestmark = pytest.mark.django_db


def test_list_is_paginated_with_counts(staff_api, settings):
    settings.SITE_URL = "https://paraeval.example"
    older = make_campaign(slug="older")
    newer = make_campaign(slug="newer", name="Newer", quota=12, judges_per_pair=3)
    make_training_pairs(newer, 5)
    pairs = [make_pair(newer) for _ in range(4)]
    volunteers = [make_volunteer(newer) for _ in range(2)]
    for pair in pairs[:3]:
        make_judgement(pair, volunteers[0], Label.SAME_MEANING)
    make_judgement(pairs[0], volunteers[1], Label.DONT_KNOW)
    make_judgement(newer.pairs.filter(is_training=True).first(), volunteers[1])  # training: not counted

    response = staff_api.get("/api/campaigns/")

    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2 and body["next"] is None and body["previous"] is None
    assert [c["slug"] for c in body["results"]] == ["newer", "older"]
    first = body["results"][0]
    assert first == {
        "id": newer.pk,
        "slug": "newer",
        "name": "Newer",
        "description": "",
        "quota": 12,
        "judges_per_pair": 3,
        "reservation_minutes": newer.reservation_minutes,
        "is_open": True,
        "created_at": first["created_at"],
        "pairs": 4,
        "training_pairs": 5,
        "volunteers": 2,
        "judgements": 4,
        "volunteer_link": "https://paraeval.example/c/newer/",
        "team": "Lab",
    }
    assert body["results"][1]["pairs"] == 0 and body["results"][1]["id"] == older.pk


def test_list_query_count_does_not_grow_with_campaigns(staff_api, django_assert_max_num_queries):
    for _ in range(30):
        campaign = make_campaign()
        make_judgement(make_pair(campaign))
    with django_assert_max_num_queries(4):  # auth token, count, page
        response = staff_api.get("/api/campaigns/")
    assert response.json()["count"] == 30


def test_page_size_is_chosen_and_capped(staff_api):
    for _ in range(5):
        make_campaign()
    body = staff_api.get("/api/campaigns/?page_size=2&page=2").json()
    assert len(body["results"]) == 2 and body["next"].endswith("page=3&page_size=2")
    assert len(staff_api.get("/api/campaigns/?page_size=1000").json()["results"]) == 5
    too_many = staff_api.get("/api/campaigns/?page_size=100000")
    assert too_many.status_code == 400
    assert too_many.json() == {"page_size": ["Expected a whole number from 1 to 1000, got '100000'."]}
    response = staff_api.get("/api/campaigns/?page=99")
    assert response.status_code == 404 and "Invalid page" in response.json()["detail"]


def test_create(staff_api):
    response = staff_api.post(
        "/api/campaigns/",
        {"slug": "pilot", "name": "Pilot", "quota": 20, "judges_per_pair": 2, "is_open": False},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    campaign = Campaign.objects.get(slug="pilot")
    assert body["id"] == campaign.pk
    assert (body["quota"], body["judges_per_pair"], body["is_open"], body["pairs"]) == (20, 2, False, 0)
    assert (campaign.name, campaign.quota, campaign.judges_per_pair, campaign.is_open) == ("Pilot", 20, 2, False)


@pytest.mark.parametrize(
    ("payload", "field", "message"),
    [
        ({"name": "No slug"}, "slug", "This field is required."),
        ({"slug": "has space", "name": "x"}, "slug", "letters, numbers, underscores or hyphens"),
        ({"slug": "taken", "name": "x"}, "slug", "already exists"),  # a 409: see below
        ({"slug": "fine"}, "name", "This field is required."),
        ({"slug": "fine", "name": "x", "quota": 0}, "quota", "greater than or equal to 1"),
        ({"slug": "fine", "name": "x", "judges_per_pair": "two"}, "judges_per_pair", "A valid integer is required."),
    ],
)
def test_create_refuses_bad_fields_naming_them(staff_api, payload, field, message):
    make_campaign(slug="taken")
    response = staff_api.post("/api/campaigns/", payload, format="json")
    # A slug that is taken conflicts with an existing campaign (409); the rest are bad input (400).
    assert response.status_code == (409 if payload.get("slug") == "taken" else 400)
    errors = response.json()
    assert list(errors) == [field]
    assert message in errors[field][0]
    assert not Campaign.objects.filter(slug="fine").exists()


def test_retrieve_by_slug(staff_api):
    campaign = make_campaign(slug="one")
    make_pair(campaign)
    body = staff_api.get("/api/campaigns/one/").json()
    assert (body["slug"], body["pairs"]) == ("one", 1)
    assert staff_api.get("/api/campaigns/none/").status_code == 404


def test_open_and_close(staff_api):
    campaign = make_campaign(slug="toggle")
    response = staff_api.post("/api/campaigns/toggle/close/")
    assert response.status_code == 200 and response.json()["is_open"] is False
    campaign.refresh_from_db()
    assert campaign.is_open is False
    assert staff_api.post("/api/campaigns/toggle/close/").json()["is_open"] is False  # idempotent
    assert staff_api.post("/api/campaigns/toggle/open/").json()["is_open"] is True
    campaign.refresh_from_db()
    assert campaign.is_open is True
    assert staff_api.get("/api/campaigns/toggle/open/").status_code == 405
    assert staff_api.post("/api/campaigns/missing/open/").status_code == 404


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_campaigns_are_not_changed_or_deleted_here(staff_api, method):
    make_campaign(slug="kept")
    response = getattr(staff_api, method)("/api/campaigns/kept/", {"name": "x"}, format="json")
    assert response.status_code == 405
    assert Campaign.objects.filter(slug="kept").exists()
