"""Check answers and excluded volunteers are visible and filterable everywhere."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from django.test import Client

from annotate.labels import Label
from annotate.models import Campaign, Pair, Volunteer
from annotate.pseudonyms import volunteer_pseudonym
from scoring.reports.dataset import Filters
from scoring.reports.service import campaign_report, shared_cache
from tests.api_support import staff_api, staff_user  # noqa: F401
from tests.builders import make_campaign, make_judgement, make_pair, make_volunteer
from tests.export_support import export_text, read_csv

pytestmark = pytest.mark.django_db


def small() -> tuple[Campaign, Pair, list[Pair], Volunteer, Volunteer, Volunteer]:
    """Two corpus pairs and a check; ``careless`` fails the check (the default rule flags them)."""
    campaign = make_campaign(slug="agree", exclude_failed_checks=1)
    check = make_pair(campaign, external_id="chk", is_check=True, expected_label=Label.VERY_DIFFERENT.value)
    pairs = [make_pair(campaign, external_id=f"p{i}", system="sysA") for i in (1, 2)]
    careful, other, careless = (make_volunteer(campaign) for _ in range(3))
    make_judgement(check, careful, Label.VERY_DIFFERENT, is_check=True)
    make_judgement(check, other, Label.VERY_DIFFERENT, is_check=True)
    make_judgement(check, careless, Label.SAME_MEANING, is_check=True)
    # Pair 1: careful says yes, other says no, careless says yes: the flagged one breaks the tie.
    make_judgement(pairs[0], careful, Label.SAME_MEANING)
    make_judgement(pairs[0], other, Label.VERY_DIFFERENT)
    make_judgement(pairs[0], careless, Label.SAME_MEANING)
    # Pair 2: only careless judged it.
    make_judgement(pairs[1], careless, Label.MOSTLY_SIMILAR)
    return campaign, check, pairs, careful, other, careless


def test_the_api_marks_check_answers_and_excluded_volunteers(staff_api) -> None:  # noqa: F811
    _, check, pairs, _, _, careless = small()
    rows = staff_api.get("/api/judgements/?campaign=agree&is_training=false").json()["results"]
    assert len(rows) == 7
    by_pair = {(row["pair"], row["volunteer"]): row for row in rows}
    assert sum(row["is_check"] for row in rows) == 3
    assert all(row["is_check"] == (row["pair"] == check.pk) for row in rows)
    flagged = [row for row in rows if row["excluded"]]
    assert len(flagged) == 3 and {row["exclusion_reason"] for row in flagged} == {"failed 1 of 1 checks"}
    assert {row["volunteer"] for row in flagged} == {volunteer_pseudonym(careless.token)}
    assert len(by_pair) == 7
    corpus = staff_api.get("/api/judgements/?campaign=agree&is_training=false&is_check=false&excluded=false")
    assert corpus.status_code == 200
    assert [(row["pair"], row["label"]) for row in corpus.json()["results"]] == [
        (pairs[0].pk, "same_meaning"),
        (pairs[0].pk, "very_different"),
    ]
    only_excluded = staff_api.get("/api/judgements/?excluded=true").json()["results"]
    assert len(only_excluded) == 3 and all(row["excluded"] for row in only_excluded)
    assert staff_api.get("/api/judgements/?is_check=true").json()["count"] == 3
    assert staff_api.get("/api/judgements/?excluded=maybe").status_code == 400


def test_the_pair_export_leaves_excluded_volunteers_out_of_the_majority() -> None:
    small()
    header, rows = read_csv(export_text(Campaign.objects.get(slug="agree"), "pairs", "csv"))
    assert "excluded_judgements" in header and "system" in header
    first, second = rows
    assert first["external_id"] == "p1" and first["system"] == "sysA"
    # Careful (same meaning) against other (very different): a tie, not careless's majority.
    assert (first["judgements"], first["excluded_judgements"], first["binary_tie"]) == ("2", "1", "1")
    assert first["majority_label"] == "" and first["binary_label"] == ""
    assert (second["judgements"], second["excluded_judgements"], second["majority_label"]) == ("0", "1", "")


def test_an_exclusion_by_staff_is_seen_at_once_by_the_analyses(
    admin_client: Client, django_capture_on_commit_callbacks
) -> None:
    cache.clear()
    shared_cache().clear()
    campaign, _, _, careful, _, _ = small()
    before = campaign_report(campaign.pk, filters=Filters.build(exclude_flagged=True), resamples=0)
    assert before.report.counts.judgements == 2
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/staff/campaigns/agree/volunteers/", {"volunteer": careful.pk, "override": "exclude", "note": "odd"}
        )
    assert response.status_code == 302
    after = campaign_report(campaign.pk, filters=Filters.build(exclude_flagged=True), resamples=0)
    assert after.report.counts.judgements == 1
    # The rule changed in the admin (or anywhere a campaign is saved): seen at once too.
    campaign.exclude_failed_checks = None
    with django_capture_on_commit_callbacks(execute=True):
        campaign.save()
    assert (
        campaign_report(campaign.pk, filters=Filters.build(exclude_flagged=True), resamples=0).report.counts.judgements
        == 3
    )
    cache.clear()
    shared_cache().clear()


def test_one_pseudonym_everywhere_and_never_the_token(admin_client: Client, staff_api) -> None:  # noqa: F811
    cache.clear()
    shared_cache().clear()
    campaign, _, _, careful, _, careless = small()
    names = {volunteer_pseudonym(v.token) for v in (careful, careless)}
    page = admin_client.get("/staff/campaigns/agree/volunteers/").content.decode()
    admin_page = admin_client.get(f"/admin/annotate/volunteer/{careful.pk}/change/").content.decode()
    admin_list = admin_client.get("/admin/annotate/volunteer/").content.decode()
    report = campaign_report(campaign.pk, resamples=0)
    (table,) = [table for table in report.tables if table.key == "volunteers"]
    api = {row["volunteer"] for row in staff_api.get("/api/judgements/?campaign=agree").json()["results"]}
    _, export_rows = read_csv(export_text(campaign, "judgements", "csv"))
    for name in names:
        assert f"<code>{name}</code>" in page
        assert name in admin_list
        assert name in {row.volunteer for row in report.report.volunteers}
        assert name in json.dumps(table.as_dict())
        assert name in api and name in {row["volunteer"] for row in export_rows}
    assert volunteer_pseudonym(careful.token) in admin_page
    for volunteer in (careful, careless):
        for text in (page, admin_page, admin_list, json.dumps(report.as_json())):
            assert volunteer.token[:8] not in text
    cache.clear()
    shared_cache().clear()
