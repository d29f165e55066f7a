"""Attention checks and judge quality: where checks come, what they count, who is flagged."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate import allocation, flow, quality
from annotate.importers import ImportRefused, import_file
from annotate.labels import Label
from annotate.models import Campaign, Judgement, Pair, Volunteer
from annotate.pseudonyms import volunteer_pseudonym
from tests.builders import make_campaign, make_judgement, make_pair, make_training_pairs, make_volunteer
from tests.export_support import export_text, read_csv

pytestmark = pytest.mark.django_db


def volunteer_of(campaign: Campaign) -> Volunteer:
    return Volunteer.objects.select_related("campaign").get(pk=make_volunteer(campaign).pk)


def make_checks(campaign: Campaign) -> tuple[Pair, Pair]:
    same = make_pair(
        campaign,
        source="The shop opens at nine.",
        hypothesis="The shop opens at nine.",
        is_check=True,
        expected_label=Label.SAME_MEANING.value,
    )
    unrelated = make_pair(
        campaign,
        source="The shop opens at nine.",
        hypothesis="Penguins cannot fly.",
        is_check=True,
        expected_label=Label.VERY_DIFFERENT.value,
    )
    return same, unrelated


def walk(volunteer: Volunteer, answer_for=lambda pair: Label.MOSTLY_SIMILAR) -> list[Pair]:
    """Answer everything the volunteer is given; returns the pairs in order."""
    seen = []
    while (assignment := allocation.next_assignment(volunteer).assignment) is not None:
        seen.append(assignment.pair)
        flow.record_answer(volunteer, assignment.pair_id, answer_for(assignment.pair).value)
    return seen


def test_checks_come_at_the_configured_positions_among_the_campaign_pairs() -> None:
    campaign = make_campaign(quota=6, check_positions="2, 5")
    make_training_pairs(campaign, 2)
    checks = set(make_checks(campaign))
    for _ in range(10):
        make_pair(campaign)
    volunteer = volunteer_of(campaign)
    seen = walk(volunteer)
    kinds = ["T" if pair.is_training else "C" if pair.is_check else "p" for pair in seen]
    # Each check comes within the configured spacing (the first among items 1-2, the second
    # among 3-5), at places drawn for this volunteer (test_campaign_check_positions).
    first, second = allocation.volunteer_check_slots(campaign, 6, volunteer.token)
    assert first in (1, 2) and second in (3, 4, 5)
    items = ["C" if slot in (first, second) else "p" for slot in range(1, 9)]
    assert "".join(kinds) == "TT" + "".join(items)
    assert {pair for pair in seen if pair.is_check} == checks
    # The quota counts campaign pairs only: six of them, plus the two checks.
    assert sum(kind == "p" for kind in kinds) == 6


def test_checks_at_a_rate_and_the_progress_counts_them() -> None:
    campaign = make_campaign(quota=6, check_every=3)
    make_checks(campaign)
    for _ in range(10):
        make_pair(campaign)
    volunteer = volunteer_of(campaign)
    # One check within every 3 pairs + 1, while pairs remain: 6 pairs + 1 check (none after the last pair).
    assert flow.progress_of(volunteer).total == 7
    seen = walk(volunteer)
    [slot] = allocation.volunteer_check_slots(campaign, 6, volunteer.token)
    assert 1 <= slot <= 4
    assert "".join("C" if pair.is_check else "p" for pair in seen) == "p" * (slot - 1) + "C" + "p" * (7 - slot)


def test_check_pairs_look_like_other_pairs_and_need_no_target() -> None:
    campaign = make_campaign(quota=2, judges_per_pair=1, check_positions="1")
    same, _ = make_checks(campaign)
    Pair.objects.filter(campaign=campaign, is_check=True).exclude(pk=same.pk).delete()
    make_pair(campaign)
    make_pair(campaign)
    make_pair(campaign)
    draws = set()
    for _ in range(12):  # one judge per pair is the target, but every volunteer meets the check
        volunteer = volunteer_of(campaign)
        assignment = allocation.next_assignment(volunteer).assignment
        assert assignment.pair_id == same.pk
        draws.add(assignment.source_on_top)
        flow.record_answer(volunteer, same.pk, Label.SAME_MEANING.value)
    assert draws == {True, False}  # the top/bottom draw as for any campaign pair
    stored = Judgement.objects.filter(pair=same)
    assert stored.count() == 12 and all(j.is_check and not j.is_training for j in stored)


def test_the_rule_flags_failed_checks_fast_and_monotone_volunteers_and_staff_override() -> None:
    campaign = make_campaign(
        quota=10, exclude_failed_checks=1, exclude_median_seconds=2.0, exclude_same_answer_share=0.9
    )
    same, unrelated = make_checks(campaign)
    pairs = [make_pair(campaign) for _ in range(6)]
    now = timezone.now()

    def judged(volunteer: Volunteer, pair: Pair, label: Label, seconds: float, **fields: object) -> None:
        make_judgement(pair, volunteer, label, shown_at=now, answered_at=now + timedelta(seconds=seconds), **fields)

    careful, careless, rushed, monotone = (make_volunteer(campaign) for _ in range(4))
    for volunteer in (careful, careless, rushed, monotone):
        judged(volunteer, same, Label.SAME_MEANING, 5, is_check=True)
    judged(careful, unrelated, Label.VERY_DIFFERENT, 5, is_check=True)
    judged(careless, unrelated, Label.SAME_MEANING, 5, is_check=True)  # failed
    labels = [Label.SAME_MEANING, Label.VERY_DIFFERENT, Label.MOSTLY_SIMILAR] * 2
    for pair, label in zip(pairs, labels, strict=True):
        judged(careful, pair, label, 6)
        judged(careless, pair, label, 6)
        judged(rushed, pair, label, 1.5)
        judged(monotone, pair, Label.SAME_MEANING, 6)

    verdicts = {q.volunteer_id: q for q in quality.campaign_quality(campaign)}
    assert (verdicts[careful.pk].checks_seen, verdicts[careful.pk].checks_passed) == (2, 2)
    assert verdicts[careful.pk].rule_reasons == () and not verdicts[careful.pk].excluded
    assert verdicts[careless.pk].rule_reasons == ("failed 1 of 2 checks",)
    assert verdicts[rushed.pk].rule_reasons == ("median time 1.5 s per pair (under 2 s)",)
    assert verdicts[rushed.pk].median_seconds == 1.5
    assert verdicts[monotone.pk].rule_reasons == ("100% of answers were same_meaning",)
    assert verdicts[monotone.pk].top_answer_share == 1.0
    # Agreement with the other judges' majority (binary reading): careful agrees on every pair.
    assert verdicts[careful.pk].agreement == 1.0 and verdicts[careful.pk].agreement_pairs == 6
    # monotone says "same meaning" to the two "very different" pairs the others agree on.
    assert verdicts[monotone.pk].agreement == pytest.approx(4 / 6)
    assert quality.excluded_volunteer_ids(campaign) == {careless.pk, rushed.pk, monotone.pk}

    Volunteer.objects.filter(pk=careless.pk).update(exclusion_override="include", exclusion_note="misclick")
    Volunteer.objects.filter(pk=careful.pk).update(exclusion_override="exclude", exclusion_note="bot-like")
    verdicts = {q.volunteer_id: q for q in quality.campaign_quality(campaign)}
    assert verdicts[careless.pk].flagged and not verdicts[careless.pk].excluded
    assert verdicts[careful.pk].exclusion_reason == "excluded by staff: bot-like"
    assert quality.excluded_volunteer_ids(campaign) == {careful.pk, rushed.pk, monotone.pk}


def test_training_answers_matching_the_expected_ones_are_counted() -> None:
    campaign = make_campaign(quota=2)
    training = make_training_pairs(campaign, 3)
    make_pair(campaign)
    volunteer = volunteer_of(campaign)
    expected = {pair.pk: Label(pair.expected_label) for pair in training}
    answers = iter([True, False, True])
    walk(volunteer, lambda pair: expected[pair.pk] if pair.is_training and next(answers) else Label.DONT_KNOW)
    verdict = quality.volunteer_quality(volunteer)
    assert (verdict.training_seen, verdict.training_matching) == (3, 2)


def test_exports_leave_checks_out_and_carry_the_flag_and_the_reason() -> None:
    campaign = make_campaign(slug="flagged", quota=5, exclude_failed_checks=1)
    same, _ = make_checks(campaign)
    pair = make_pair(campaign, external_id="corpus-1")
    careful = make_volunteer(campaign)
    careless = make_volunteer(campaign, participant_id="PID-77")
    for volunteer, check_label in ((careful, Label.SAME_MEANING), (careless, Label.VERY_DIFFERENT)):
        make_judgement(same, volunteer, check_label, is_check=True)
        make_judgement(pair, volunteer, Label.MOSTLY_SIMILAR)
    _, judgements = read_csv(export_text(campaign, "judgements", "csv"))
    assert [(row["external_id"], row["excluded"], row["exclusion_reason"]) for row in judgements] == [
        ("corpus-1", "0", ""),
        ("corpus-1", "1", "failed 1 of 1 checks"),
    ]
    assert judgements[0]["participant"] == ""
    assert judgements[1]["participant"] == volunteer_pseudonym("PID-77") != "PID-77"
    _, pairs = read_csv(export_text(campaign, "pairs", "csv"))
    assert [row["external_id"] for row in pairs] == ["corpus-1"]  # no check pair in the corpus


def test_check_pairs_are_imported_from_a_column_and_refused_without_their_answer(tmp_path) -> None:
    campaign = make_campaign(slug="import-checks")
    good = tmp_path / "pairs.csv"
    good.write_text(
        "id,source,hypothesis,check,expected_label\n"
        "p1,A cat sleeps.,A cat is sleeping.,,\n"
        "c1,The shop opens at nine.,The shop opens at nine.,yes,Same meaning\n"
        "c2,The shop opens at nine.,Penguins cannot fly.,1,very_different\n",
        encoding="utf-8",
    )
    import_file(campaign, good)
    stored = {p.external_id: (p.is_check, p.expected_label) for p in Pair.objects.filter(campaign=campaign)}
    assert stored == {"p1": (False, ""), "c1": (True, "same_meaning"), "c2": (True, "very_different")}

    bad = tmp_path / "bad.csv"
    bad.write_text("id,source,hypothesis,check\nc3,A b.,A b.,true\nc4,A b.,C d.,maybe\n", encoding="utf-8")
    with pytest.raises(ImportRefused) as refused:
        import_file(make_campaign(slug="import-checks-2"), bad)
    messages = [str(problem) for problem in refused.value.problems]
    assert any("line 2" in m and "a check pair needs expected_label" in m for m in messages), messages
    assert any("line 3" in m and "'maybe' is not true or false" in m for m in messages), messages
    assert not Pair.objects.filter(campaign__slug="import-checks-2").exists()  # all or nothing
