"""Staff see each volunteer's evidence, override the rule, and download the platform participants."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotate.labels import Label
from annotate.models import Campaign, Volunteer
from annotate.participants import PARTICIPANT_COLUMNS
from tests.builders import make_campaign, make_judgement, make_pair, make_volunteer

pytestmark = pytest.mark.django_db


def study() -> tuple[Campaign, Volunteer, Volunteer, Volunteer]:
    campaign = make_campaign(slug="crowd", platform="prolific", completion_code="OK123", screened_out_code="", quota=2)
    check = make_pair(campaign, is_check=True, expected_label=Label.SAME_MEANING.value)
    pairs = [make_pair(campaign) for _ in range(2)]
    now = timezone.now()
    good = make_volunteer(campaign, participant_id="PID-good", study_id="S1", session_id="A", finished_at=now)
    bad = make_volunteer(campaign, participant_id="=HYPERLINK(1)", study_id="S1", session_id="B", finished_at=now)
    gone = make_volunteer(campaign, participant_id="PID-gone", returned_at=now)
    for volunteer, check_label in ((good, Label.SAME_MEANING), (bad, Label.VERY_DIFFERENT)):
        make_judgement(
            check, volunteer, check_label, is_check=True, shown_at=now, answered_at=now + timedelta(seconds=4)
        )
        for pair in pairs:
            make_judgement(pair, volunteer, Label.MOSTLY_SIMILAR, shown_at=now, answered_at=now + timedelta(seconds=30))
    return campaign, good, bad, gone


def test_the_volunteers_page_shows_evidence_verdicts_and_the_summary(admin_client: Client) -> None:
    study()
    page = admin_client.get("/staff/campaigns/crowd/volunteers/").content.decode()
    counts = dict(re.findall(r'<dd data-count="([\w-]+)">([^<]+)</dd>', page))
    assert counts == {
        "started": "3",
        "finished": "2",
        "in-progress": "0",
        "returned": "1",
        "excluded": "1",
        "median-minutes": "1.0 min",
    }
    assert "<strong>excluded</strong>: failed 1 of 1 checks" in page
    assert page.index("failed 1 of 1 checks") < page.index("PID-good")  # flagged first
    assert "Download the participants (CSV)" in page


def test_staff_override_the_rule_and_the_verdict_follows(admin_client: Client) -> None:
    _, _, bad, _ = study()
    response = admin_client.post(
        "/staff/campaigns/crowd/volunteers/", {"volunteer": bad.pk, "override": "include", "note": "misread"}
    )
    assert response.status_code == 302
    bad.refresh_from_db()
    assert (bad.exclusion_override, bad.exclusion_note) == ("include", "misread")
    page = admin_client.get("/staff/campaigns/crowd/volunteers/").content.decode()
    assert "kept by staff (rule: failed 1 of 1 checks)" in page
    refused = admin_client.post("/staff/campaigns/crowd/volunteers/", {"volunteer": bad.pk, "override": "maybe"})
    assert refused.status_code == 400 and b"override must be one of" in refused.content


def test_the_participants_csv_lists_ids_status_and_codes(admin_client: Client) -> None:
    study()
    response = admin_client.get("/staff/campaigns/crowd/participants.csv")
    assert response["Content-Disposition"] == 'attachment; filename="crowd-participants.csv"'
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert list(rows[0]) == list(PARTICIPANT_COLUMNS)
    summary = [
        (r["participant_id"], r["status"], r["excluded"], r["code_under_current_rule"], r["checks_passed"])
        for r in rows
    ]
    assert [(r["code_shown"], r["code_shown_at"]) for r in rows] == [("", "")] * 3  # no end page seen yet
    assert summary == [
        ("PID-good", "finished", "no", "completed", "1"),
        ("'=HYPERLINK(1)", "finished", "yes", "none", "0"),  # spreadsheet-safe cell
        ("PID-gone", "returned", "no", "", "0"),
    ]
    assert rows[0]["minutes_judging"] == "1.00"  # two campaign pairs of 30 s (checks not counted)


def test_only_staff_see_volunteers(client: Client) -> None:
    study()
    for url in ("/staff/campaigns/crowd/volunteers/", "/staff/campaigns/crowd/participants.csv"):
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith("/admin/login/")


def test_the_campaign_admin_sets_checks_rule_platform_and_language(admin_client: Client) -> None:
    campaign, *_ = study()
    page = admin_client.get(f"/admin/annotate/campaign/{campaign.pk}/change/").content.decode()
    for heading in ("Attention checks and the exclusion rule", "Crowd platform"):
        assert "<h2" in page and heading in page
    for field in (
        "check_positions",
        "check_every",
        "exclude_failed_checks",
        "exclude_median_seconds",
        "exclude_same_answer_share",
        "platform",
        "completion_code",
        "screened_out_code",
        "language",
    ):
        assert f'name="{field}"' in page, field
    assert 'href="/staff/campaigns/crowd/volunteers/"' in page
    form = {
        "name": "Crowd",
        "slug": "crowd",
        "language": "fr",
        "quota": 2,
        "judges_per_pair": 1,
        "reservation_minutes": 20,
        "check_positions": "5, x",
        "platform": "prolific",
        "participant_param": "PROLIFIC_PID",
        "study_param": "STUDY_ID",
        "session_param": "SESSION_ID",
        "completion_url": "https://app.prolific.com/submissions/complete?cc={code}",
    }
    refused = admin_client.post(f"/admin/annotate/campaign/{campaign.pk}/change/", form).content.decode()
    assert "&#x27;x&#x27; is not a position (a whole number from 1)" in refused
