"""campaign_report on the database: counts, filters, data version and cache."""

from __future__ import annotations

import datetime
import json
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from annotate.labels import Label
from annotate.models import Campaign, Judgement, Pair, Volunteer
from scoring.models import Score
from scoring.reports import dataset
from scoring.reports.dataset import Filters
from scoring.reports.service import CampaignRef, FilterError, campaign_report, campaign_version, shared_cache
from tests.builders import (
    make_campaign,
    make_judgement,
    make_metric_config,
    make_pair,
    make_score,
    make_scored_campaign,
    make_volunteer,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    shared_cache().clear()
    yield
    cache.clear()
    shared_cache().clear()


@pytest.fixture
def built():
    return make_scored_campaign()


def test_report_counts(built):
    result = campaign_report(built.campaign.pk, resamples=50)
    report = result.report
    counts = report.counts
    assert counts.pairs == 24  # 3 origins x 8
    assert counts.judgements == 72  # 3 judges per pair
    assert counts.training_judgements == 25  # 5 volunteers x 5 training pairs, never counted
    assert counts.metrics == 4 and counts.scores == 95 and counts.scores_failed == 1
    assert counts.labelled + counts.ties + counts.dont_know_only + counts.unjudged == 24
    assert [s.key for s in report.subsets] == ["llm", "mrpc", "paws", "all"]
    assert result.campaign == CampaignRef(built.campaign.pk, built.campaign.slug, built.campaign.name)
    assert result.last_changed is not None and len(result.version) == 20
    assert [table.key for table in result.tables][:5] == ["table1", "table2", "table3", "table4", "table5"]
    parapluie = built.configs["parapluie"].pk
    assert report.result(parapluie, "all").natural.threshold == 0.0
    bertscore = report.result(built.configs["bertscore"].pk, "all")
    assert bertscore.excluded.failed + bertscore.n == bertscore.pairs
    data = json.loads(json.dumps(result.as_json(), allow_nan=False))
    assert data["campaign"] == {"id": built.campaign.pk, "slug": built.campaign.slug, "name": built.campaign.name}
    assert data["results"][str(parapluie)]["all"]["natural"]["threshold"] == 0.0
    assert data["filters"] == {
        "reference": "volunteers",
        "origin": None,
        "english_level": None,
        "date_from": None,
        "date_to": None,
        "exclude_flagged": False,
    }


def test_training_accuracy_per_volunteer(built):
    rows = campaign_report(built.campaign.pk, resamples=0).report.volunteers
    assert len(rows) == 5
    assert all(row.training_answers == 5 for row in rows)
    assert sum(row.judgements for row in rows) == 72
    # The builder shows each pair 3 to 29 seconds before the answer (times read from SQL).
    assert all(3 <= (row.median_response_seconds or 0) <= 29 for row in rows)


def test_version_changes_with_the_data(built):
    first = campaign_version(built.campaign.pk)
    assert campaign_version(built.campaign.pk) == first
    volunteer = make_volunteer(built.campaign)
    make_judgement(built.pairs[0], volunteer, Label.SAME_MEANING)
    second = campaign_version(built.campaign.pk)
    assert second != first
    config = make_metric_config("sbert", label="SBERT")
    make_score(built.pairs[0], config, 0.9)
    third = campaign_version(built.campaign.pk)
    assert third != second
    # A failed score that is recomputed changes the version too.
    failed = Score.objects.get(status=Score.Status.FAILED)
    failed.value, failed.status, failed.computed_at = 0.8, Score.Status.DONE, timezone.now() + timedelta(seconds=1)
    failed.save()
    assert campaign_version(built.campaign.pk) != third
    # So do the filters.
    assert campaign_version(built.campaign.pk, filters=Filters.build(origin="mrpc")) != campaign_version(
        built.campaign.pk
    )


def test_report_is_cached_by_version(built):
    first = campaign_report(built.campaign.pk, resamples=20)
    again = campaign_report(built.campaign.pk, resamples=20)
    assert again.generated_at == first.generated_at
    make_judgement(built.pairs[1], make_volunteer(built.campaign), Label.VERY_DIFFERENT)
    after = campaign_report(built.campaign.pk, resamples=20)
    assert after.version != first.version
    assert after.report.counts.judgements == first.report.counts.judgements + 1


def test_the_data_state_is_a_few_indexed_reads(built, django_assert_num_queries):
    # The campaign with its stopping rule and its change counters (pairs, judgements, volunteers;
    # scores), then its probe set (none): the same two at any size, nothing kept between polls.
    for _ in range(2):
        with django_assert_num_queries(2):
            dataset.data_state(built.campaign.pk)


def test_a_change_elsewhere_keeps_the_version(built):
    version = campaign_version(built.campaign.pk)
    other = make_scored_campaign(pairs_per_origin=1, training=False)
    make_judgement(other.pairs[0], make_volunteer(other.campaign), Label.SAME_MEANING)
    Score.objects.filter(pair__campaign=other.campaign).update(value=0.5)
    Pair.objects.filter(campaign=other.campaign).update(gold_label=False)
    Judgement.objects.filter(pair__campaign=other.campaign).delete()
    assert campaign_version(built.campaign.pk) == version


def test_reading_keeps_the_version(built):
    version = campaign_version(built.campaign.pk)
    report = campaign_report(built.campaign.pk, resamples=5)
    dataset.load(built.campaign, Filters.build(exclude_flagged=True))
    assert campaign_version(built.campaign.pk) == version
    assert campaign_version(built.campaign.pk, resamples=5) == report.version


def _pair_of(built):
    return built.pairs[3]


WRITES = {
    "judgement added": lambda b: make_judgement(_pair_of(b), make_volunteer(b.campaign), Label.SAME_MEANING),
    "judgement deleted": lambda b: Judgement.objects.filter(pair=_pair_of(b), is_training=False).first().delete(),
    "judgement relabelled": lambda b: Judgement.objects.filter(pk=b.pairs[0].judgements.first().pk).update(
        label=Label.DONT_KNOW.value
    ),
    "training answer added": lambda b: make_judgement(
        make_pair(b.campaign, is_training=True, training_position=9, expected_label="same_meaning"),
        make_volunteer(b.campaign),
        is_training=True,
    ),
    "score added": lambda b: make_score(_pair_of(b), make_metric_config("lev"), 0.4),
    "score recomputed": lambda b: Score.objects.filter(pk=Score.objects.filter(pair=_pair_of(b)).first().pk).update(
        value=0.123
    ),
    "score failed": lambda b: Score.objects.filter(pk=Score.objects.filter(pair=_pair_of(b)).first().pk).update(
        status=Score.Status.FAILED, value=None
    ),
    "score deleted": lambda b: Score.objects.filter(pair=_pair_of(b)).first().delete(),
    "pair added": lambda b: make_pair(b.campaign),
    "pair deleted": lambda b: _pair_of(b).delete(),
    "gold label edited": lambda b: Pair.objects.filter(pk=_pair_of(b).pk).update(gold_label=None),
    "gold score edited": lambda b: Pair.objects.filter(pk=_pair_of(b).pk).update(gold_score=3.5),
    "pair made a check": lambda b: Pair.objects.filter(pk=_pair_of(b).pk).update(is_check=True),
    "volunteer joined": lambda b: make_volunteer(b.campaign),
    "volunteer excluded by staff": lambda b: Volunteer.objects.filter(
        pk=b.pairs[0].judgements.first().volunteer_id
    ).update(exclusion_override="exclude"),
    "volunteer deleted": lambda b: b.pairs[0].judgements.first().volunteer.delete(),
    "exclusion rule changed": lambda b: Campaign.objects.filter(pk=b.campaign.pk).update(exclude_failed_checks=9),
}


@pytest.mark.parametrize("write", WRITES, ids=list(WRITES))
def test_every_kind_of_write_changes_the_version(built, write):
    version = campaign_version(built.campaign.pk)
    WRITES[write](built)
    assert campaign_version(built.campaign.pk) != version


def test_loading_costs_a_fixed_number_of_queries(django_assert_num_queries):
    small = make_scored_campaign(pairs_per_origin=2, judges=2)
    large = make_scored_campaign(pairs_per_origin=12, judges=3)
    for built in (small, large):
        # Pairs, judgements, training answers, volunteers, configurations, scores, the probe set.
        with django_assert_num_queries(7):
            dataset.load(built.campaign, dataset.Filters())


def test_origin_filter(built):
    result = campaign_report(built.campaign.pk, filters=Filters.build(origin="mrpc"), resamples=0)
    assert result.report.counts.pairs == 8 and result.report.counts.judgements == 24
    assert [s.key for s in result.report.subsets] == ["all"]
    assert result.filters.origin == "mrpc" and result.as_json()["filters"]["origin"] == "mrpc"


def test_english_level_filter(built):
    level = built.volunteers[0].english_level
    report = campaign_report(built.campaign.pk, filters=Filters.build(english_level=level), resamples=0).report
    expected = sum(1 for v in built.volunteers if v.english_level == level)
    assert {row.english_level for row in report.volunteers} == {level}
    assert len(report.volunteers) == expected
    assert 0 < report.counts.judgements < 72


def test_date_filter(built):
    today = timezone.localdate()
    assert (
        campaign_report(
            built.campaign.pk, filters=Filters.build(date_from=today - timedelta(days=1)), resamples=0
        ).report.counts.judgements
        == 72
    )
    future = campaign_report(
        built.campaign.pk, filters=Filters.build(date_from=today + timedelta(days=1)), resamples=0
    ).report
    assert future.counts.judgements == 0 and future.counts.labelled == 0
    # An old judgement falls out of a window that ends before it.
    old = make_pair(built.campaign, origin="mrpc")
    make_judgement(old, built.volunteers[0], Label.SAME_MEANING, answered_at=timezone.now() - timedelta(days=10))
    window = campaign_report(built.campaign.pk, filters=Filters.build(date_to=today - timedelta(days=5)), resamples=0)
    assert window.report.counts.judgements == 1


def test_gold_reference(built):
    report = campaign_report(built.campaign.pk, filters=Filters.build(reference="gold"), resamples=0).report
    assert report.reference == "gold"
    # Per origin, pairs 0, 3, 6 of 8 are non-paraphrases: 5 paraphrases x 3 origins.
    assert report.counts.labelled == 24 and report.counts.paraphrases == 15


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"reference": "experts"}, "reference"),
        ({"english_level": "fluent"}, "english_level"),
        ({"date_from": datetime.date(2025, 2, 1), "date_to": datetime.date(2025, 1, 1)}, "date_from"),
        ({"resamples": -1}, "resamples"),
    ],
)
def test_bad_filters_name_the_filter(built, arguments, message):
    filter_arguments = {name: value for name, value in arguments.items() if name != "resamples"}
    with pytest.raises(FilterError, match=message):
        filters = Filters.build(**filter_arguments)
        campaign_report(built.campaign.pk, filters=filters, resamples=arguments.get("resamples"))


def test_unknown_campaign():
    with pytest.raises(Campaign.DoesNotExist):
        campaign_report(999_999)


def test_empty_campaign():
    campaign = make_scored_campaign(pairs_per_origin=0, training=False).campaign
    result = campaign_report(campaign.pk, resamples=10)
    assert result.report.counts.pairs == 0 and result.report.metrics == []
    assert result.last_changed is not None  # its volunteers arrived
    assert campaign_report(make_campaign().pk, resamples=10).last_changed is None  # nothing written yet
    json.dumps(result.as_json(), allow_nan=False)


def test_the_service_sends_the_tasks_the_worker_registers():
    # The service sends its cpu-queue tasks by name and never imports their module (an
    # import-linter contract): the names must be those the tasks are registered under.
    from scoring.reports import service
    from scoring.reports import tasks as analysis_tasks

    assert analysis_tasks.compute_report_intervals.name == service.INTERVALS_TASK
    assert analysis_tasks.compute_meta_evaluation.name == service.META_TASK
