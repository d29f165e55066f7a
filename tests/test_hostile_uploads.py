"""Hostile files and fields at the score import and the pair upload: a 4xx naming the line or
the field, nothing stored, never a 500 (NUL characters, JSON nested 1,000 deep, a file wrong on
every one of its lines)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from annotate.models import PairUpload
from scoring.external.score_import import MAX_PROBLEMS
from scoring.models import MetricConfig, Score
from tests.api_support import token_client
from tests.builders import make_campaign, make_pair, make_staff

pytestmark = pytest.mark.django_db

DEEP = "[" * 1000 + "]" * 1000
NESTED_LINE = '{"source": "A.", "hypothesis": "B.", "extra": ' + DEEP + "}"
TOO_DEEP = "nested more than 32 levels deep"


@pytest.fixture
def staff_api() -> APIClient:
    return token_client(make_staff("hostile-api"))


@pytest.fixture
def campaign():
    campaign = make_campaign(slug="hostile")
    make_pair(campaign, external_id="e1")
    return campaign


def post_scores(client: APIClient, data: bytes, name: str, **fields: str):
    upload = SimpleUploadedFile(name, data)
    form = {"campaign": "hostile", "name": "mine", "version": "1", "file": upload, **fields}
    return client.post("/api/scores/import/", form, format="multipart")


def _nothing_stored() -> None:
    assert not MetricConfig.objects.filter(metric="mine").exists()
    assert not Score.objects.filter(metric_config__metric="mine").exists()


@pytest.mark.parametrize(
    ("data", "name", "problem"),
    [
        (
            b'{"external_id": "e1", "score": 1}\n{"external_id": "e\\u00001", "score": 1}\n',
            "s.jsonl",
            {
                "line": 2,
                "message": "external_id contains a NUL character (U+0000): remove it from the file and send it again",
            },
        ),
        (
            b"external_id,score\ne1,1\ne\x001,1\n",
            "s.csv",
            {
                "line": 3,
                "message": "external_id contains a NUL character (U+0000): remove it from the file and send it again",
            },
        ),
        (
            b'{"external_id": "e1", "score": 1}\n{"external_id": "e1", "score": ' + DEEP.encode() + b"}\n",
            "s.jsonl",
            {"line": 2, "message": f"not JSON: {TOO_DEEP}"},
        ),
    ],
    ids=["nul-in-jsonl", "nul-in-csv", "nested-1000-deep"],
)
def test_a_hostile_score_file_is_a_400_naming_its_line(staff_api, campaign, data, name, problem) -> None:
    response = post_scores(staff_api, data, name)
    assert response.status_code == 400, response.content[:300]
    assert response.json() == {"problems": [problem], "problem_count": 1, "detail": "nothing stored"}
    _nothing_stored()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ('{"a": ' + DEEP + "}", f'options must be a JSON object, e.g. {{"model": "x"}}: {TOO_DEEP}'),
        (
            '{"model": "x\\u0000"}',
            "options: the field model contains a NUL character (U+0000): remove it and send the request again.",
        ),
    ],
    ids=["nested-1000-deep", "nul"],
)
def test_hostile_options_are_a_400_naming_the_field(staff_api, campaign, options, message) -> None:
    response = post_scores(staff_api, b"external_id,score\ne1,1\n", "s.csv", options=options)
    assert response.status_code == 400, response.content[:300]
    assert response.json() == {"options": [message]}
    _nothing_stored()


def test_a_nul_in_the_metric_version_is_a_400(staff_api, campaign) -> None:
    response = post_scores(staff_api, b"external_id,score\ne1,1\n", "s.csv", version="1\x00")
    assert response.status_code == 400
    assert "NUL" in json.dumps(response.json())
    _nothing_stored()


def test_a_file_wrong_on_every_line_lists_the_first_problems_and_counts_the_rest(staff_api, campaign) -> None:
    lines = 20_000
    data = "external_id,score\n" + "".join(f"x{index},1\n" for index in range(lines))
    response = post_scores(staff_api, data.encode(), "s.csv")
    assert response.status_code == 400
    body = response.json()
    assert body["problem_count"] == lines
    assert len(body["problems"]) == MAX_PROBLEMS
    assert body["problems"][0] == {"line": 2, "message": "unknown pair: campaign 'hostile' has no external id 'x0'"}
    assert body["problems"][-1]["line"] == MAX_PROBLEMS + 1
    assert body["detail"] == f"nothing stored; the first {MAX_PROBLEMS} problems of {lines:,} are listed"
    _nothing_stored()


def test_unknown_pair_ids_on_many_lines_are_counted_and_the_first_named(staff_api, campaign) -> None:
    other = make_campaign(slug="other")
    foreign = make_pair(other, external_id="o1")
    data = f"pair_id,score\n{foreign.pk},1\n" + "".join(f"{10_000_000 + index},1\n" for index in range(3000))
    body = post_scores(staff_api, data.encode(), "s.csv").json()
    assert body["problem_count"] == 3001
    assert body["problems"][:2] == [
        {"line": 2, "message": f"pair {foreign.pk} belongs to campaign 'other', not 'hostile'"},
        {"line": 3, "message": "unknown pair: no pair has id 10000000"},
    ]


def test_the_staff_page_lists_the_first_problems_of_a_hostile_file(campaign) -> None:
    client = Client()
    client.force_login(make_staff("hostile-page"))
    upload = SimpleUploadedFile("s.jsonl", b'{"external_id": "e\\u0000", "score": 1}\n' * 3)
    form = {"campaign": "hostile", "name": "mine", "version": "1", "direction": "higher", "file": upload}
    response = client.post("/staff/scores/import/", form)
    assert response.status_code == 400
    page = response.content.decode()
    assert "nothing was stored (3 problems)" in page
    assert "line 1: external_id contains a NUL character (U+0000)" in page
    _nothing_stored()


def test_a_pair_upload_nested_1000_deep_gets_its_page_and_a_problem_not_a_500(settings, tmp_path: Path) -> None:
    settings.DATA_DIR = tmp_path
    make_campaign(slug="own")
    client = Client(raise_request_exception=False)
    client.force_login(make_staff("uploader"))
    content = '{"source": "A first.", "hypothesis": "A second."}\n' + NESTED_LINE + "\n"
    upload = SimpleUploadedFile("pairs.jsonl", content.encode(), content_type="application/jsonl")
    response = client.post("/staff/campaigns/own/upload/", {"file": upload, "format": "auto"})
    assert response.status_code == 302
    job = PairUpload.objects.get()
    for _ in range(2):  # every visit
        page = client.get(response["Location"])
        assert page.status_code == 200
        text = page.content.decode()
        assert f"not valid JSON: {TOO_DEEP}" in text
    # The columns offered for mapping come from the lines that can be read.
    assert "source" in text and "hypothesis" in text
    assert job.state == "uploaded"


def test_a_campaign_definition_nested_1000_deep_is_a_400() -> None:
    client = Client(raise_request_exception=False)
    client.force_login(make_staff("definer"))
    upload = SimpleUploadedFile("d.json", ('{"campaign": ' + DEEP + "}").encode())
    response = client.post("/staff/campaigns/new/from-definition/", {"definition": upload, "slug": "deep"})
    assert response.status_code == 400
    assert f"the file is not JSON: {TOO_DEEP}" in response.content.decode()
