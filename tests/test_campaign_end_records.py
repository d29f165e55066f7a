"""The end page's verdict and code: recorded, a code shown never rewritten, later work credited."""

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
from tests.builders import make_campaign, make_pair, make_training_pairs, make_volunteer
from tests.pair_page import pair_on_page
from tests.test_campaign_platform import (
    CODE,
    OTHER_CODE,
    answer_everything,
    answer_everything_until_campaign_pair,
    link,
    prolific_campaign,
    start,
)

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


def test_a_participant_told_full_who_then_judges_a_pair_is_shown_and_recorded_the_code(admin_client: Client) -> None:
    # The sequence of the attack run: a participant reaches the end page with 0 pairs (another
    # holds the only place), places come free, they are given the pair and judge it. Before the
    # fix their end page kept the first record ("You judged 0 pairs", no code) and the CSV said
    # code_shown=full against code_under_current_rule=completed: work done, never paid.
    campaign = make_campaign(slug="prolific-study", quota=1, platform="prolific", completion_code=CODE)
    make_training_pairs(campaign, 1)
    pair = make_pair(campaign)
    late_client, holder_client = Client(), Client()
    late, _ = start(late_client, link(pid="late-participant", session="s-late"))
    holder, _ = start(holder_client, link(pid="holder-participant", session="s-holder"))
    answer_everything_until_campaign_pair(holder_client, holder)  # holds the only place
    first_end = answer_everything(late_client, late, check_answer=Label.SAME_MEANING)[-1]
    assert 'data-completion="full"' in first_end and CODE not in first_end
    late.refresh_from_db()
    assert (late.completion_kind, late.completion_code_shown) == ("full", "")
    full_at = late.verdict_at

    # Places come free: the holder gives the study back. The participant opens their link
    # again, is given the pair, judges it, and reaches the end page.
    assert holder_client.post(f"/v/{holder.token}/return/").status_code == 302
    reopened = late_client.get(link(pid="late-participant", session="s-late"), follow=True)
    assert reopened.request["PATH_INFO"] == f"/v/{late.token}/"
    assert pair_on_page(reopened.content.decode(), late).pk == pair.pk
    end = answer_everything(late_client, late, check_answer=Label.SAME_MEANING)[-1]
    assert "You judged <strong>1 pair</strong>, after the training." in end
    assert f'<p class="completion-code" id="completion-code">{CODE}</p>' in end
    late.refresh_from_db()
    assert (late.completion_kind, late.completion_code_shown) == ("completed", CODE)
    assert full_at is not None and late.verdict_at is not None and late.verdict_at > full_at
    rows = {row["participant_id"]: row for row in csv_rows(admin_client)}
    row = rows["late-participant"]
    shown = (row["code_shown"], row["code_shown_text"], row["code_under_current_rule"])
    assert shown == ("completed", CODE, "completed")
    assert row["code_shown_at"] == late.completion_shown_at.isoformat()
    assert row["pairs_judged"] == "1"
    # Reloading the end page reads the record back: the code stays, shown at the same moment.
    assert CODE in late_client.get(f"/v/{late.token}/done/").content.decode()
    shown_at = late.completion_shown_at
    late.refresh_from_db()
    assert late.completion_shown_at == shown_at


def test_a_code_once_shown_is_never_taken_back_by_later_work() -> None:
    campaign = prolific_campaign()
    client = Client()
    volunteer, _ = start(client, link())
    answer_everything(client, volunteer, check_answer=Label.SAME_MEANING)
    volunteer.refresh_from_db()
    assert volunteer.completion_kind == "completed"
    # New pairs arrive; the participant comes back, fails a check this time, and ends again.
    Campaign.objects.filter(pk=campaign.pk).update(quota=5)
    make_pair(campaign, is_check=True, expected_label=Label.SAME_MEANING.value, source="C d.", hypothesis="C d.")
    end = answer_everything(client, volunteer, check_answer=Label.VERY_DIFFERENT)[-1]
    assert f'<p class="completion-code" id="completion-code">{CODE}</p>' in end
    volunteer.refresh_from_db()
    assert (volunteer.completion_kind, volunteer.completion_code_shown) == ("completed", CODE)
