"""/api/pairs/: list with filters, retrieve, and bulk import through the importer (all or nothing)."""

from __future__ import annotations

import pytest

from annotate.models import Pair
from annotate.signals import pairs_created
from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign, make_judgement, make_pair, make_training_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    return make_campaign(slug="api-pairs")


def _external_ids(response):
    assert response.status_code == 200, response.json()
    return [pair["external_id"] for pair in response.json()["results"]]


def test_list_shows_every_field(staff_api, campaign):
    pair = make_pair(campaign, external_id="x1", origin="mrpc", gold_label=True, gold_score=3.5, system="gpt-x")
    make_judgement(pair)
    make_judgement(pair)
    (row,) = staff_api.get("/api/pairs/").json()["results"]
    assert row == {
        "id": pair.pk,
        "campaign": "api-pairs",
        "external_id": "x1",
        "origin": "mrpc",
        "source": pair.source,
        "hypothesis": pair.hypothesis,
        "gold_label": True,
        "gold_score": 3.5,
        "system": "gpt-x",
        "is_training": False,
        "is_check": False,
        "training_position": None,
        "expected_label": "",
        "explanation": "",
        "judgements": 2,
        "created_at": row["created_at"],
    }
    assert staff_api.get(f"/api/pairs/{pair.pk}/").json() == row
    assert staff_api.get("/api/pairs/999999/").status_code == 404


def test_list_filters(staff_api, campaign):
    make_training_pairs(campaign, 2)
    make_pair(campaign, external_id="gold", origin="mrpc", gold_label=False)
    make_pair(campaign, external_id="graded", origin="stsb", gold_score=1.0)
    make_pair(campaign, external_id="plain", origin="mrpc")
    make_pair(make_campaign(), external_id="elsewhere", origin="mrpc")

    assert _external_ids(staff_api.get("/api/pairs/?campaign=api-pairs&is_training=false")) == [
        "gold",
        "graded",
        "plain",
    ]
    assert _external_ids(staff_api.get("/api/pairs/?campaign=api-pairs&is_training=true")) == [
        "training-1",
        "training-2",
    ]
    assert _external_ids(staff_api.get("/api/pairs/?origin=mrpc")) == ["gold", "plain", "elsewhere"]
    assert _external_ids(staff_api.get("/api/pairs/?campaign=api-pairs&has_gold=true")) == ["gold", "graded"]
    assert _external_ids(staff_api.get("/api/pairs/?campaign=api-pairs&has_gold=false&is_training=false")) == ["plain"]
    assert _external_ids(staff_api.get("/api/pairs/?external_id=graded")) == ["graded"]


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("campaign=nope", "campaign", "No campaign with slug 'nope'."),
        ("is_training=maybe", "is_training", "Expected true or false, got 'maybe'."),
        ("has_gold=perhaps", "has_gold", "Expected true or false, got 'perhaps'."),
    ],
)
def test_list_refuses_bad_filters_naming_them(staff_api, query, field, message):
    response = staff_api.get(f"/api/pairs/?{query}")
    assert response.status_code == (404 if field == "campaign" else 400)
    assert response.json() == {field: [message]}


def test_list_query_count_is_bounded(staff_api, campaign, django_assert_max_num_queries):
    for _ in range(50):
        pair = make_pair(campaign)
        make_judgement(pair)
    with django_assert_max_num_queries(4):  # auth token, the campaign filter, count, page
        response = staff_api.get("/api/pairs/?campaign=api-pairs")
    assert response.json()["count"] == 50


# --- Bulk import ---------------------------------------------------------------------------


def test_bulk_import_stores_all_and_announces_after_commit(staff_api, campaign, django_capture_on_commit_callbacks):
    announced = []

    def receiver(sender, pair_ids, **kwargs):
        announced.extend(pair_ids)

    pairs_created.connect(receiver)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = staff_api.post(
                "/api/pairs/",
                {
                    "campaign": "api-pairs",
                    "origin": "crafted",
                    "pairs": [
                        {"id": "a", "source": "A cat drinks.", "hypothesis": "A cat is drinking.", "label": 1},
                        {
                            "source": "Flights from New York to Florida.",
                            "hypothesis": "Flights from Florida to New York.",
                            "gold_label": "0",
                            "origin": "trap",
                            "annotator": "me",
                        },
                        {
                            "external_id": "s",
                            "source": "日本語の文。",
                            "hypothesis": "日本語の文です。",
                            "gold_score": 4.5,
                        },
                    ],
                },
                format="json",
            )
    finally:
        pairs_created.disconnect(receiver)

    assert response.status_code == 201, response.json()
    body = response.json()
    stored = list(Pair.objects.filter(campaign=campaign).order_by("id"))
    assert body == {
        "created": 3,
        "format": "json",
        "training": 0,
        "checks": 0,
        "ignored_columns": ["annotator"],
        "pair_ids": [pair.pk for pair in stored],
        "dry_run": False,
        "notes": [],
        "warnings": [],
        "gold_paraphrases": 1,
        "gold_non_paraphrases": 1,
        "gold_scores": 1,
    }
    assert [(p.external_id, p.origin, p.gold_label, p.gold_score) for p in stored] == [
        ("a", "crafted", True, None),
        ("", "trap", False, None),
        ("s", "crafted", None, 4.5),
    ]
    assert stored[2].source == "日本語の文。"
    assert announced == body["pair_ids"]


def test_bulk_import_of_training_pairs(staff_api, campaign):
    response = staff_api.post(
        "/api/pairs/",
        {
            "campaign": "api-pairs",
            "pairs": [
                {
                    "source": "The cat sleeps.",
                    "hypothesis": "The cat is asleep.",
                    "training_position": 1,
                    "expected_label": "same_meaning",
                    "explanation": "Same facts.",
                }
            ],
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["training"] == 1
    assert Pair.objects.get(campaign=campaign).is_training


def test_bulk_import_refuses_everything_when_one_record_is_bad(staff_api, campaign):
    make_pair(campaign, external_id="exists")
    records = [{"id": f"ok-{n}", "source": f"Sentence {n}.", "hypothesis": f"Phrase {n}."} for n in range(5)]
    records[1] = {"id": "no-hypothesis", "source": "Only a source."}
    records[3] = {"id": "exists", "source": "x", "hypothesis": "y"}
    records.append({"id": "ok-0", "source": "again", "hypothesis": "duplicate id"})
    records.append({"id": "empty", "source": "   ", "hypothesis": "y", "gold_label": "perhaps"})

    response = staff_api.post("/api/pairs/", {"campaign": "api-pairs", "pairs": records}, format="json")

    assert response.status_code == 400
    body = response.json()
    assert body["detail"].startswith("Nothing was imported:")
    assert body["problem_count"] == len(body["problems"]) >= 4
    by_index = {}
    for problem in body["problems"]:
        assert problem["line"] == problem["index"] + 1
        by_index.setdefault(problem["index"], []).append(problem)
    assert {p["field"] for p in by_index[1]} == {"hypothesis"}
    assert "exists" in " ".join(p["message"] for p in by_index[3])
    assert any("ok-0" in p["message"] for p in by_index[5])
    assert {p["field"] for p in by_index[6]} >= {"source", "gold_label"}
    assert list(Pair.objects.filter(campaign=campaign).values_list("external_id", flat=True)) == ["exists"]


def test_bulk_import_dry_run_stores_nothing(staff_api, campaign):
    response = staff_api.post(
        "/api/pairs/",
        {"campaign": "api-pairs", "dry_run": True, "pairs": [{"source": "a", "hypothesis": "b"}]},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["created"] == 1 and response.json()["dry_run"] is True
    assert response.json()["pair_ids"] == []
    assert not Pair.objects.filter(campaign=campaign).exists()


def test_bulk_import_respects_the_sentence_length_limit(staff_api, campaign, settings):
    settings.PARAEVAL_MAX_SENTENCE_LENGTH = 10
    response = staff_api.post(
        "/api/pairs/",
        {"campaign": "api-pairs", "pairs": [{"source": "far longer than ten", "hypothesis": "short"}]},
        format="json",
    )
    assert response.status_code == 400
    (problem,) = response.json()["problems"]
    assert (problem["index"], problem["field"]) == (0, "source")
    assert not Pair.objects.exists()


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"pairs": [{"source": "a", "hypothesis": "b"}]}, "campaign", "This field is required."),
        (
            {"campaign": "nope", "pairs": [{"source": "a", "hypothesis": "b"}]},
            "campaign",
            "No campaign with slug 'nope'.",
        ),
        ({"campaign": "api-pairs"}, "pairs", "This field is required."),
        ({"campaign": "api-pairs", "pairs": []}, "pairs", "This list may not be empty."),
        ({"campaign": "api-pairs", "pairs": {"source": "a"}}, "pairs", 'Expected a list of items but got type "dict".'),
    ],
)
def test_bulk_import_refuses_a_malformed_body_naming_the_field(staff_api, campaign, body, field, message):
    response = staff_api.post("/api/pairs/", body, format="json")
    assert response.status_code == (404 if message.startswith("No campaign") else 400)
    assert response.json() == {field: [message]}
    assert not Pair.objects.exists()


def test_bulk_import_names_the_record_that_is_not_an_object(staff_api, campaign):
    response = staff_api.post(
        "/api/pairs/",
        {"campaign": "api-pairs", "pairs": [{"source": "a", "hypothesis": "b"}, "just text"]},
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {"pairs": {"1": ['Expected a dictionary of items but got type "str".']}}
    assert not Pair.objects.exists()


def test_bulk_import_takes_json_only(staff_api, campaign):
    response = staff_api.post("/api/pairs/", {"campaign": "api-pairs", "pairs": "x"})  # multipart form
    assert response.status_code == 415
    response = staff_api.generic("POST", "/api/pairs/", "{not json", content_type="application/json")
    assert response.status_code == 400 and "JSON parse error" in response.json()["detail"]
