"""Check pairs never count, and "exclude flagged volunteers" removes exactly their judgements."""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
import pytest
from django.core.cache import cache
from django.core.management import call_command

from annotate.labels import Label
from annotate.models import Volunteer
from annotate.quality import excluded_volunteer_ids
from scoring.analysis.report import JudgementRows, ReportOptions, build_report
from scoring.reports import dataset
from scoring.reports.dataset import Filters
from scoring.reports.service import campaign_report, shared_cache
from tests.api_support import *  # noqa: F403
from tests.builders import make_judgement, make_pair, make_score, make_scored_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def flagged():  # type: ignore[no-untyped-def]
    cache.clear()
    shared_cache().clear()
    built = make_scored_campaign(pairs_per_origin=6, exclude_failed_checks=1)
    careless, excluded_by_staff, kept_by_staff = built.volunteers[0], built.volunteers[1], built.volunteers[2]
    check = make_pair(built.campaign, is_check=True, expected_label=Label.VERY_DIFFERENT.value, origin="mrpc")
    for config in built.configs.values():
        make_score(check, config, 0.5)  # a score on a check pair never counts either
    # The rule flags volunteers who failed a check; staff keep one of them and exclude another.
    make_judgement(check, careless, Label.SAME_MEANING, is_check=True)
    make_judgement(check, kept_by_staff, Label.SAME_MEANING, is_check=True)
    make_judgement(check, built.volunteers[3], Label.VERY_DIFFERENT, is_check=True)
    Volunteer.objects.filter(pk=excluded_by_staff.pk).update(exclusion_override="exclude")
    Volunteer.objects.filter(pk=kept_by_staff.pk).update(exclusion_override="include")
    yield built, {careless.pk, excluded_by_staff.pk}
    cache.clear()
    shared_cache().clear()


def test_the_flagged_volunteers(flagged):  # type: ignore[no-untyped-def]
    built, excluded = flagged
    assert excluded_volunteer_ids(built.campaign) == excluded


def test_check_pairs_and_answers_never_count(flagged):  # type: ignore[no-untyped-def]
    built, _ = flagged
    report = campaign_report(built.campaign.pk, resamples=0, use_cache=False).report
    # 18 pairs x 3 judges, as without the check pair and its three answers.
    assert report.counts.pairs == 18 and report.counts.judgements == 54
    assert report.counts.scores == 18 * 4 - 1  # one failed BERTScore, none of the check pair
    assert [subset.key for subset in report.subsets] == ["llm", "mrpc", "paws", "all"]
    assert dataset.origins(built.campaign) == ["llm", "mrpc", "paws"]


def test_excluding_removes_exactly_their_judgements(flagged):  # type: ignore[no-untyped-def]
    built, excluded = flagged
    everyone = dataset.load(built.campaign, dataset.Filters())
    without = dataset.load(built.campaign, dataset.Filters.build(exclude_flagged=True))
    keep = ~np.isin(everyone.judgements.volunteer, sorted(excluded))
    removed = int(np.count_nonzero(~keep))
    assert removed > 0 and len(without.judgements) == len(everyone.judgements) - removed
    assert set(without.judgements.volunteer.tolist()).isdisjoint(excluded)
    # The analyses of the filtered campaign = the analyses of exactly the remaining judgements.
    rows = everyone.judgements
    remaining = replace(
        everyone,
        judgements=JudgementRows(
            rows.pair_index[keep],
            rows.volunteer[keep],
            rows.code[keep],
            rows.answered_at[keep],
            rows.response_seconds[keep],
        ),
        volunteers=[info for info in everyone.volunteers if info.id not in excluded],
        training_judgements=sum(info.training_answers for info in everyone.volunteers if info.id not in excluded),
    )
    options = ReportOptions(resamples=50)
    expected = build_report(remaining, options)
    result = campaign_report(
        built.campaign.pk, filters=Filters.build(exclude_flagged=True), resamples=50, use_cache=False
    )
    report = result.report
    assert report.counts == expected.counts
    assert report.subsets == expected.subsets
    assert report.results == expected.results
    assert report.agreement == expected.agreement
    assert report.volunteers == expected.volunteers
    assert report.charts == expected.charts
    assert result.filters.exclude_flagged is True
    assert {row.id for row in report.volunteers}.isdisjoint(excluded)
    full = campaign_report(built.campaign.pk, resamples=50, use_cache=False)
    assert full.report.counts.judgements - report.counts.judgements == removed
    assert full.version != result.version  # part of the data version and the cache key


def test_the_switch_on_every_interface(flagged, client, staff_user, staff_api, queue_dir):  # type: ignore[no-untyped-def]
    built, _ = flagged
    slug = built.campaign.slug
    expected = campaign_report(
        built.campaign.pk, filters=Filters.build(exclude_flagged=True), resamples=0, use_cache=False
    ).as_json()
    judgements = expected["counts"]["judgements"]
    assert judgements < 54
    body = staff_api.get(f"/api/campaigns/{slug}/report/?exclude_flagged=1&resamples=0").json()
    assert body["filters"]["exclude_flagged"] is True and body["counts"] == expected["counts"]
    bad = staff_api.get(f"/api/campaigns/{slug}/report/?exclude_flagged=maybe")
    assert bad.status_code == 400 and "exclude_flagged" in bad.json()
    meta = staff_api.get(f"/api/campaigns/{slug}/meta-evaluation/?exclude_flagged=1&resamples=20")
    assert meta.status_code == 202
    client.force_login(staff_user)
    page = client.get("/staff/dashboard/", {"campaign": slug, "exclude_flagged": "1"}).content.decode()
    assert 'name="exclude_flagged" id="f-exclude-flagged" value="1" checked' in page
    dashboard = client.get("/staff/dashboard/data/", {"campaign": slug, "exclude_flagged": "1"}).json()
    assert dashboard["counts"]["judgements"] == judgements and dashboard["filters"]["exclude_flagged"] is True
    assert (
        client.get("/staff/dashboard/data/", {"campaign": slug, "exclude_flagged": "0"}).json()["counts"]["judgements"]
        == 54
    )
    out = io.StringIO()
    call_command("evaluate_metrics", "--campaign", slug, "--exclude-flagged", "--resamples", "0", stdout=out)
    assert f"{judgements} judgements from" in out.getvalue() and "flagged volunteers excluded" in out.getvalue()
