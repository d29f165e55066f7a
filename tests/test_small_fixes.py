"""The smaller things seen on screen: slug help text, import summary, plain link
beside a crowd platform, the API docs' example body."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from annotate.models import Campaign, Volunteer
from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign, make_pair, make_training_pairs

pytestmark = pytest.mark.django_db


def test_the_admin_shows_the_slug_help_text_whole(admin_client: Client) -> None:
    page = admin_client.get("/admin/annotate/campaign/add/").content.decode()
    assert "Used in the volunteer link /c/SLUG/ (letters, digits, hyphens and underscores)." in page
    assert "/c//" not in page


def test_the_import_summary_counts_check_pairs(tmp_path: Path) -> None:
    make_campaign(slug="summary")
    path = tmp_path / "pairs.csv"
    path.write_text(
        "id,source,hypothesis,check,expected_label\n"
        "p1,A cat sleeps.,A cat is sleeping.,,\n"
        "c1,The shop opens at nine.,The shop opens at nine.,yes,Same meaning\n"
        "c2,The shop opens at nine.,Penguins cannot fly.,1,very_different\n",
        encoding="utf-8",
    )
    out = StringIO()
    call_command("import_pairs", str(path), "--campaign", "summary", stdout=out)
    assert "  check pairs: 2" in out.getvalue().splitlines()


def test_the_api_import_answer_counts_check_pairs(staff_api) -> None:  # type: ignore[no-untyped-def]
    make_campaign(slug="api-summary")
    records = [
        {"source": "A cat.", "hypothesis": "A feline."},
        {"source": "A dog.", "hypothesis": "A dog.", "check": True, "expected_label": "same_meaning"},
    ]
    response = staff_api.post("/api/pairs/", {"campaign": "api-summary", "pairs": records}, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["checks"] == 1 and response.json()["created"] == 2


def _prolific(**fields: object) -> Campaign:
    campaign = make_campaign(slug="mixed", platform="prolific", completion_code="CODE123", quota=1, **fields)
    make_training_pairs(campaign, 0)
    make_pair(campaign)
    return campaign


def test_a_prolific_campaign_refuses_a_plain_link_unless_it_accepts_one(client: Client) -> None:
    _prolific()
    refused = client.get("/c/mixed/")
    assert refused.status_code == 400 and "participant ID" in refused.content.decode()


def test_a_campaign_takes_lab_volunteers_and_prolific_participants_at_once(client: Client) -> None:
    _prolific(accepts_plain_link=True)
    assert client.get("/c/mixed/").status_code == 200
    lab = client.post("/c/mixed/", {"consent": "on", "english_level": "advanced"})
    assert lab.status_code == 302
    crowd = Client().post(
        "/c/mixed/?PROLIFIC_PID=p1&STUDY_ID=s&SESSION_ID=x",
        {"consent": "on", "english_level": "advanced", "PROLIFIC_PID": "p1", "STUDY_ID": "s", "SESSION_ID": "x"},
    )
    assert crowd.status_code == 302
    assert sorted(Volunteer.objects.values_list("participant_id", flat=True)) == ["", "p1"]
    # An empty participant id is still refused: only a link without the parameter is a plain one.
    assert Client().get("/c/mixed/?PROLIFIC_PID=").status_code == 400


def test_a_lab_volunteer_gets_no_completion_code() -> None:
    from django.utils import timezone

    from annotate import platforms

    campaign = _prolific(accepts_plain_link=True)
    lab = Volunteer.objects.create(campaign=campaign, english_level="advanced", finished_at=timezone.now())
    crowd = Volunteer.objects.create(
        campaign=campaign, english_level="advanced", participant_id="p9", finished_at=timezone.now()
    )
    assert platforms.completion_for(lab, excluded=False) is None
    completion = platforms.completion_for(crowd, excluded=False)
    assert completion is not None and completion.code == "CODE123"


def test_the_api_docs_prefill_a_real_example(staff_api) -> None:  # type: ignore[no-untyped-def]
    document = staff_api.get("/api/schema/?format=json").json()
    body = document["paths"]["/api/pairs/"]["post"]["requestBody"]["content"]["application/json"]
    (example,) = body["examples"].values()
    value = example["value"]
    assert value["campaign"] == "demo" and value["dry_run"] is True
    assert value["pairs"][0] == {
        "id": "mrpc-1",
        "source": "The company said profits rose 5% in the first quarter.",
        "hypothesis": "Profits grew by 5% in the first quarter, the company said.",
        "label": 1,
    }
    campaign = document["paths"]["/api/campaigns/"]["post"]["requestBody"]["content"]["application/json"]
    (campaign_example,) = campaign["examples"].values()
    assert campaign_example["value"]["slug"] == "my-campaign"
    json.dumps(document)


def test_a_lab_volunteer_in_a_platform_campaign_has_no_return_link(client: Client) -> None:
    from tests.test_campaign_http import start

    campaign = _prolific(accepts_plain_link=True)
    volunteer = start(client, campaign)
    page = client.get(f"/v/{volunteer.token}/").content.decode()
    assert 'name="pair"' in page and "Stop and return the study" not in page
    assert client.get(f"/v/{volunteer.token}/return/").status_code == 404


def test_the_api_docs_example_works_on_the_demo_campaign(staff_api) -> None:  # type: ignore[no-untyped-def]
    from api.views import CAMPAIGN_EXAMPLE, PAIRS_EXAMPLE

    make_campaign(slug="demo")
    answer = staff_api.post("/api/pairs/", PAIRS_EXAMPLE.value, format="json")
    assert answer.status_code == 200, answer.json()
    assert answer.json()["created"] == 2 and answer.json()["dry_run"] is True
    assert staff_api.post("/api/campaigns/", CAMPAIGN_EXAMPLE.value, format="json").status_code == 201
