"""The end page's verdict and code: computed once, recorded, never rewritten (issue 21, points 5 and 13)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from annotate import flow, platforms, quality
from annotate.labels import Label
from annotate.models import Campaign, Volunteer
from tests.builders import make_campaign, make_pair, make_volunteer
from tests.test_campaign_platform import CODE, OTHER_CODE, answer_everything, link, prolific_campaign, start

pytestmark = pytest.mark.django_db


def csv_rows(admin_client: Client) -> list[dict[str, str]]:
    response = admin_client.get("/staff/campaigns/prolific-study/participants.csv")
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_the_code_shown_is_a_record_that_a_stricter_rule_does_not_rewrite(admin_client: Client) -> None:
    campaign = prolific_campaign()
    client = Client()
    volunteer, _ = start(client, link())
    end = answer_everything(client, volunteer, check_answer=Label.SAME_MEANING)[-1]
    assert f'<p class="completion-code" id="completion-code">{CODE}</p>' in end
    volunteer.refresh_from_db()
    assert (volunteer.completion_kind, volunteer.completion_code_shown) == ("completed", CODE)
    assert volunteer.completion_shown_at is not None and volunteer.verdict_reasons == ""
    shown_at = volunteer.completion_shown_at.isoformat()
    # Staff tighten the rule afterwards: under it the participant would now be screened out.
    Campaign.objects.filter(pk=campaign.pk).update(exclude_median_seconds=600)
    [row] = csv_rows(admin_client)
    assert (row["code_shown"], row["code_shown_text"], row["code_shown_at"]) == ("completed", CODE, shown_at)
    # Staff change the campaign's code afterwards: the record still says which code was shown.
    Campaign.objects.filter(pk=campaign.pk).update(completion_code="NEWCODE1")
    assert csv_rows(admin_client)[0]["code_shown_text"] == CODE
    assert (row["excluded"], row["code_under_current_rule"]) == ("yes", "screened_out")
    assert row["exclusion_reason"].startswith("median time")
    # The participant's end page still shows what they were shown, not the new rule's code.
    again = client.get(f"/v/{volunteer.token}/done/").content.decode()
    assert f'<p class="completion-code" id="completion-code">{CODE}</p>' in again and OTHER_CODE not in again
    volunteer.refresh_from_db()
    assert volunteer.completion_shown_at.isoformat() == shown_at  # written once


def test_a_screened_out_participant_is_recorded_with_the_reason() -> None:
    prolific_campaign()
    client = Client()
    volunteer, _ = start(client, link())
    answer_everything(client, volunteer, check_answer=Label.VERY_DIFFERENT)
    volunteer.refresh_from_db()
    assert (volunteer.completion_kind, volunteer.completion_code_shown) == ("screened_out", OTHER_CODE)
    assert volunteer.verdict_reasons == "failed 1 of 1 checks"


def test_the_end_page_judges_a_participant_once_and_never_reads_the_campaign(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prolific_campaign()
    client = Client()
    volunteer, _ = start(client, link())
    calls: list[int] = []
    original: Callable[[Volunteer], Any] = quality.rule_verdict

    def counted(judged: Volunteer) -> Any:
        calls.append(judged.pk)
        return original(judged)

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the end page recomputed the whole campaign's quality")

    monkeypatch.setattr(quality, "rule_verdict", counted)
    monkeypatch.setattr(quality, "campaign_quality", forbidden)
    answer_everything(client, volunteer, check_answer=Label.SAME_MEANING)
    for _ in range(5):
        page = client.get(f"/v/{volunteer.token}/done/").content.decode()
        assert CODE in page
    assert calls == [volunteer.pk]


def test_a_volunteer_without_platform_gets_a_verdict_and_no_code() -> None:
    campaign = make_campaign(slug="lab", quota=1)
    pair = make_pair(campaign)
    volunteer = make_volunteer(campaign)
    item = flow.current_pair(volunteer)
    assert item is not None and item.pair.pk == pair.pk
    flow.record_answer(volunteer, pair.pk, Label.SAME_MEANING.value)
    assert flow.current_pair(volunteer) is None
    assert platforms.record_end(volunteer) is None
    volunteer.refresh_from_db()
    assert volunteer.verdict_at is not None and volunteer.completion_kind == ""
