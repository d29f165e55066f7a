"""A campaign recruiting through a crowd platform (Prolific first), over HTTP."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotate.labels import Label
from annotate.models import Assignment, Campaign, Judgement, Volunteer
from tests.builders import make_campaign, make_pair, make_training_pairs
from tests.pair_page import item_on_page, pair_on_page

pytestmark = pytest.mark.django_db

CODE = "C1A2B3XY"
OTHER_CODE = "SCREEN42"


def prolific_campaign(**fields: object) -> Campaign:
    defaults: dict[str, object] = {
        "slug": "prolific-study",
        "quota": 3,
        "platform": "prolific",
        "completion_code": CODE,
        "screened_out_code": OTHER_CODE,
        "check_positions": "2",
    }
    campaign = make_campaign(**{**defaults, **fields})
    make_training_pairs(campaign, 1)
    make_pair(campaign, is_check=True, expected_label=Label.SAME_MEANING.value, source="A b.", hypothesis="A b.")
    for _ in range(6):
        make_pair(campaign)
    return campaign


def link(pid: str = "5f1e2d3c4b5a69788796a5b4", study: str = "study-1", session: str = "sess-9") -> str:
    return f"/c/prolific-study/?PROLIFIC_PID={pid}&STUDY_ID={study}&SESSION_ID={session}"


def start(client: Client, url: str) -> tuple[Volunteer, list[str]]:
    """Open the link, start, pass the guidelines; returns the volunteer and every page's HTML."""
    pages = [client.get(url).content.decode()]
    params = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', pages[0]))
    response = client.post(url.split("?")[0], {"consent": "on", "english_level": "good", **params})
    assert response.status_code == 302, response.content[:300]
    volunteer = Volunteer.objects.get(token=response.url.split("/")[2])
    pages.append(client.get(f"/v/{volunteer.token}/guidelines/").content.decode())
    client.post(f"/v/{volunteer.token}/guidelines/")
    return volunteer, pages


def answer_everything(client: Client, volunteer: Volunteer, check_answer: Label) -> list[str]:
    """Answer until the end page; every page's HTML, the end page last."""
    pages = []
    for _ in range(30):
        response = client.get(f"/v/{volunteer.token}/", follow=True)
        pages.append(response.content.decode())
        path = response.request["PATH_INFO"]
        if path.endswith("/done/"):
            return pages
        if path.endswith("/training-done/"):
            client.post(path)
            continue
        pair = pair_on_page(pages[-1], volunteer)
        label = check_answer if pair.is_check else Label(pair.expected_label or "mostly_similar")
        response = client.post(f"/v/{volunteer.token}/answer/", {"pair": item_on_page(pages[-1]), "label": label.value})
        if "/training/" in response.url:  # the training feedback page
            pages.append(client.get(response.url).content.decode())
    raise AssertionError("never reached the end page")


def test_the_link_needs_the_participant_id_and_says_which() -> None:
    prolific_campaign()
    response = Client().get("/c/prolific-study/")
    assert response.status_code == 400
    assert "this link needs your participant ID (PROLIFIC_PID)" in response.content.decode()
    assert not Volunteer.objects.exists()


def test_identifiers_are_stored_and_a_second_start_resumes() -> None:
    prolific_campaign()
    volunteer, _ = start(Client(), link())
    assert (volunteer.participant_id, volunteer.study_id, volunteer.session_id) == (
        "5f1e2d3c4b5a69788796a5b4",
        "study-1",
        "sess-9",
    )
    # The same participant on another device (no cookie), same platform session: back to their
    # own pair, no new volunteer (another session is refused: test_campaign_full_and_sessions).
    other_device = Client()
    assert other_device.get(link()).url == f"/v/{volunteer.token}/"
    again = other_device.post(
        "/c/prolific-study/",
        {"consent": "on", "english_level": "poor", "PROLIFIC_PID": "5f1e2d3c4b5a69788796a5b4", "SESSION_ID": "sess-9"},
    )
    assert again.url == f"/v/{volunteer.token}/"
    assert Volunteer.objects.count() == 1
    # Another participant is another volunteer.
    second, _ = start(Client(), link(pid="60aa11bb22cc33dd44ee55ff"))
    assert second.pk != volunteer.pk and Volunteer.objects.count() == 2


def test_the_completion_code_appears_only_on_the_end_page_of_a_kept_participant() -> None:
    prolific_campaign()
    client = Client()
    volunteer, pages = start(client, link())
    pages += answer_everything(client, volunteer, check_answer=Label.SAME_MEANING)
    *before, end = pages
    assert all(CODE not in page and OTHER_CODE not in page for page in before)
    assert f'<p class="completion-code" id="completion-code">{CODE}</p>' in end
    assert f'href="https://app.prolific.com/submissions/complete?cc={CODE}"' in end
    assert OTHER_CODE not in end
    # Nor do the scripts and styles the pages load.
    assets = set(re.findall(r'(?:src|href)="(/static/[^"]+)"', "".join(pages)))
    assert assets
    for asset in assets:
        response = Client().get(asset)
        assert response.status_code == 200, asset
        assert CODE not in b"".join(response.streaming_content).decode()


def test_a_participant_who_fails_a_check_gets_the_other_code_or_none() -> None:
    campaign = prolific_campaign()
    client = Client()
    volunteer, _ = start(client, link())
    end = answer_everything(client, volunteer, check_answer=Label.VERY_DIFFERENT)[-1]
    assert CODE not in end
    assert f'<p class="completion-code" id="completion-code">{OTHER_CODE}</p>' in end
    assert Judgement.objects.get(volunteer=volunteer, is_check=True).label == "very_different"
    # The code shown is a record: a later change of the campaign leaves the end page as it was
    # (test_campaign_end_records covers the participants' CSV).
    Campaign.objects.filter(pk=campaign.pk).update(screened_out_code="")
    end = client.get(f"/v/{volunteer.token}/done/").content.decode()
    assert f'<p class="completion-code" id="completion-code">{OTHER_CODE}</p>' in end


def test_a_flagged_participant_without_another_code_gets_none() -> None:
    prolific_campaign(screened_out_code="")
    client = Client()
    volunteer, _ = start(client, link())
    end = answer_everything(client, volunteer, check_answer=Label.VERY_DIFFERENT)[-1]
    assert CODE not in end and OTHER_CODE not in end
    assert "no completion code can be given" in end


def test_returning_the_study_frees_the_reserved_pairs_at_once() -> None:
    prolific_campaign(judges_per_pair=1)
    client = Client()
    volunteer, _ = start(client, link())
    answer_everything_until_campaign_pair(client, volunteer)
    held = Assignment.objects.filter(volunteer=volunteer, answered_at__isnull=True)
    assert held.count() == 1
    assert "Stop and return the study" in client.get(f"/v/{volunteer.token}/").content.decode()
    confirm = client.get(f"/v/{volunteer.token}/return/").content.decode()
    assert "Yes, return the study" in confirm
    response = client.post(f"/v/{volunteer.token}/return/")
    assert response.url == f"/v/{volunteer.token}/returned/"
    assert not held.exists()
    volunteer.refresh_from_db()
    assert volunteer.returned_at is not None
    for url in (f"/v/{volunteer.token}/", f"/v/{volunteer.token}/done/"):
        assert client.get(url).url == f"/v/{volunteer.token}/returned/"
    page = client.get(f"/v/{volunteer.token}/returned/").content.decode()
    assert "You have returned the study" in page and CODE not in page and OTHER_CODE not in page


def answer_everything_until_campaign_pair(client: Client, volunteer: Volunteer) -> None:
    """Answer the training; stop on the first campaign pair (reserved, not answered)."""
    for _ in range(5):
        response = client.get(f"/v/{volunteer.token}/", follow=True)
        path = response.request["PATH_INFO"]
        if path.endswith("/training-done/"):
            client.post(path)
            continue
        pair = pair_on_page(response.content.decode(), volunteer)
        if not pair.is_training:
            return
        item = item_on_page(response.content.decode())
        client.post(f"/v/{volunteer.token}/answer/", {"pair": item, "label": pair.expected_label})


def test_a_generic_platform_names_its_own_parameters() -> None:
    campaign = make_campaign(
        slug="panel", platform="generic", participant_param="workerId", study_param="", session_param=""
    )
    make_pair(campaign)
    assert "needs your participant ID (workerId)" in Client().get("/c/panel/?PROLIFIC_PID=x").content.decode()
    page = Client().get("/c/panel/?workerId=W-17").content.decode()
    assert '<input type="hidden" name="workerId" value="W-17">' in page


def test_a_bad_identifier_is_refused_with_its_name() -> None:
    prolific_campaign()
    response = Client().get(link(pid="x" * 101))
    assert response.status_code == 400
    assert "PROLIFIC_PID is longer than 100 characters" in response.content.decode()
