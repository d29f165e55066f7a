"""The exclusion rule a new campaign starts with."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate import quality
from annotate.labels import LABEL_ORDER, Label
from annotate.models import Campaign, Pair, Volunteer

pytestmark = pytest.mark.django_db


def new_campaign() -> Campaign:
    """A campaign as staff create it: every rule setting left at its default."""
    campaign = Campaign.objects.create(slug="defaults", name="Defaults")
    Pair.objects.create(
        campaign=campaign, source="A b c.", hypothesis="A b c.", is_check=True, expected_label="same_meaning"
    )
    for number in range(10):
        Pair.objects.create(campaign=campaign, source=f"Sentence {number}.", hypothesis=f"Phrase {number}.")
    return campaign


def answer_all(campaign: Campaign, seconds: float, labels: list[Label]) -> Volunteer:
    volunteer = Volunteer.objects.create(campaign=campaign, english_level="good")
    start = timezone.now() - timedelta(hours=1)
    for index, pair in enumerate(campaign.pairs.order_by("id")):
        label = Label.SAME_MEANING if pair.is_check else labels[index % len(labels)]
        shown = start + timedelta(seconds=60 * index)
        volunteer.judgements.create(
            pair=pair,
            label=label.value,
            source_on_top=True,
            is_check=pair.is_check,
            shown_at=shown,
            answered_at=shown + timedelta(seconds=seconds),
        )
    return volunteer


VARIED = [label for label in LABEL_ORDER if label is not Label.DONT_KNOW]


def test_a_volunteer_answering_every_pair_in_under_a_second_is_flagged_by_default() -> None:
    campaign = new_campaign()
    speeder = answer_all(campaign, 0.9, VARIED)  # passes the check, varies the answers
    careful = answer_all(campaign, 6.0, VARIED)
    verdicts = {verdict.volunteer_id: verdict for verdict in quality.campaign_quality(campaign)}
    assert verdicts[speeder.pk].rule_reasons == ("median time 0.9 s per pair (under 2 s)",)
    assert verdicts[speeder.pk].excluded
    assert verdicts[careful.pk].rule_reasons == ()


def test_one_answer_for_everything_is_flagged_by_default() -> None:
    campaign = new_campaign()
    same = answer_all(campaign, 6.0, [Label.MOSTLY_SIMILAR])
    assert quality.rule_verdict(same).rule_reasons == ("100% of answers were mostly_similar",)


def test_the_defaults_are_the_documented_ones() -> None:
    campaign = Campaign.objects.create(slug="plain", name="Plain")
    rule = quality.Rule.of(campaign)
    assert (rule.failed_checks, rule.median_seconds, rule.same_answer_share) == (1, 2.0, 0.9)
