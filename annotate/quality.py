"""Who paid attention: per-volunteer evidence and the campaign's exclusion rule.

For every volunteer of a campaign: check pairs passed / seen, training answers that match the
expected ones, the median time per campaign pair, the share of their most repeated answer, and
how often they agree with the other judges of the same pairs (the binary reading of the paper,
against the majority of the others). The campaign's rule flags volunteers (failed checks,
too fast, one answer for everything); staff may override the flag either way. Analyses,
exports and the admin all read the result from here, so they agree on who is excluded.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import connection
from django.db.models import F, FloatField, Func, QuerySet

from annotate.labels import is_paraphrase
from annotate.models import Campaign, Judgement, Volunteer


@dataclass(frozen=True)
class Rule:
    """A campaign's exclusion rule (each part off when None)."""

    failed_checks: int | None
    median_seconds: float | None
    same_answer_share: float | None

    @classmethod
    def of(cls, campaign: Campaign) -> Rule:
        return cls(campaign.exclude_failed_checks, campaign.exclude_median_seconds, campaign.exclude_same_answer_share)


@dataclass(frozen=True)
class VolunteerQuality:
    """The evidence about one volunteer, and what the rule and staff make of it."""

    volunteer_id: int
    token: str
    participant_id: str
    checks_seen: int
    checks_passed: int
    training_seen: int
    training_matching: int
    campaign_answers: int
    median_seconds: float | None
    top_answer: str | None
    top_answer_share: float | None
    agreement: float | None  # share of pairs where they agree with the others' majority
    agreement_pairs: int
    rule_reasons: tuple[str, ...]
    override: str  # "", "include" or "exclude"
    note: str = ""
    finished: bool = False
    returned: bool = False
    minutes_spent: float | None = None

    @property
    def checks_failed(self) -> int:
        return self.checks_seen - self.checks_passed

    @property
    def flagged(self) -> bool:
        """The rule flags them (whatever staff decided)."""
        return bool(self.rule_reasons)

    @property
    def excluded(self) -> bool:
        """Excluded from the analyses when the switch is on: the rule, unless staff overrode it."""
        if self.override == "include":
            return False
        return self.override == "exclude" or self.flagged

    @property
    def exclusion_reason(self) -> str:
        """Why they are excluded, in words ('' when they are not)."""
        if not self.excluded:
            return ""
        if self.override == "exclude":
            return "excluded by staff" + (f": {self.note}" if self.note else "")
        return "; ".join(self.rule_reasons)


@dataclass
class _Evidence:
    checks_seen: int = 0
    checks_passed: int = 0
    training_seen: int = 0
    training_matching: int = 0
    seconds: list[float] = field(default_factory=list)  # held until close()
    answers: Counter[str] = field(default_factory=Counter)
    median_seconds: float | None = None
    total_seconds: float = 0.0
    timed: int = 0

    def close(self) -> None:
        """Keep the median and the total of the times, drop the times themselves."""
        if self.seconds:
            self.median_seconds = statistics.median(self.seconds)
            self.total_seconds = sum(self.seconds)
            self.timed = len(self.seconds)
        self.seconds = []


def _count_agreement(judges: dict[int, bool], agree: Counter[int], compared: Counter[int]) -> None:
    """Each judge of one pair against the majority of the others (binary reading)."""
    if len(judges) < 2:
        return
    yes = sum(judges.values())
    for volunteer_id, own in judges.items():
        others_yes = yes - own
        others_no = len(judges) - 1 - others_yes
        if others_yes == others_no:
            continue  # the others are split: no majority to agree with
        compared[volunteer_id] += 1
        agree[volunteer_id] += own == (others_yes > others_no)


def reasons(rule: Rule, evidence: VolunteerQuality) -> tuple[str, ...]:
    """The parts of ``rule`` that ``evidence`` breaks, in words."""
    found = []
    if rule.failed_checks is not None and rule.failed_checks > 0 and evidence.checks_failed >= rule.failed_checks:
        found.append(f"failed {evidence.checks_failed} of {evidence.checks_seen} checks")
    if (
        rule.median_seconds is not None
        and evidence.median_seconds is not None
        and evidence.median_seconds < rule.median_seconds
    ):
        found.append(f"median time {evidence.median_seconds:.1f} s per pair (under {rule.median_seconds:g} s)")
    if (
        rule.same_answer_share is not None
        and evidence.top_answer_share is not None
        and evidence.campaign_answers >= 5  # a share of two answers says nothing
        and evidence.top_answer_share > rule.same_answer_share
    ):
        found.append(f"{evidence.top_answer_share:.0%} of answers were {evidence.top_answer}")
    return tuple(found)


class _ElapsedSeconds(Func):
    """``answered_at - shown_at`` in seconds, computed by PostgreSQL (exact to the microsecond).

    Reading two datetimes per judgement into Python costs more than the rest of the quality
    pass; one float per row does not."""

    template = "EXTRACT(EPOCH FROM (%(expressions)s))::float8"
    arg_joiner = " - "
    output_field = FloatField()


def _gather(judgements: QuerySet[Judgement]) -> dict[int, _Evidence]:
    """Each volunteer's evidence from ``judgements``, read in volunteer order (bounded memory)."""
    evidence: dict[int, _Evidence] = {}
    columns = ["volunteer_id", "label", "is_training", "is_check", "pair__expected_label"]
    ordered = judgements.order_by("volunteer_id")
    rows: Iterable[tuple[Any, ...]]
    if connection.vendor == "postgresql":
        elapsed = _ElapsedSeconds(F("answered_at"), F("shown_at"))
        rows = ordered.values_list(*columns, elapsed).iterator(chunk_size=5000)
    else:  # SQLite's date arithmetic is a float of days: the times are subtracted here instead
        rows = (
            (*row[:5], (row[6] - row[5]).total_seconds())
            for row in ordered.values_list(*columns, "shown_at", "answered_at").iterator(chunk_size=5000)
        )
    current: _Evidence | None = None
    for volunteer_id, label, is_training, is_check, expected, seconds in rows:
        if current is None or volunteer_id not in evidence:
            if current is not None:
                current.close()
            current = evidence[volunteer_id] = _Evidence()
        if is_check:
            current.checks_seen += 1
            current.checks_passed += label == expected
        elif is_training:
            current.training_seen += 1
            current.training_matching += bool(expected) and label == expected
        else:
            current.seconds.append(seconds)
            current.answers[label] += 1
    if current is not None:
        current.close()
    return evidence


def _quality(volunteer: Volunteer, item: _Evidence, agree: int, compared: int) -> VolunteerQuality:
    answers = sum(item.answers.values())
    top_answer, top_count = item.answers.most_common(1)[0] if item.answers else (None, 0)
    return VolunteerQuality(
        volunteer_id=volunteer.pk,
        token=volunteer.token,
        participant_id=volunteer.participant_id,
        checks_seen=item.checks_seen,
        checks_passed=item.checks_passed,
        training_seen=item.training_seen,
        training_matching=item.training_matching,
        campaign_answers=answers,
        median_seconds=item.median_seconds,
        top_answer=top_answer,
        top_answer_share=top_count / answers if answers else None,
        agreement=agree / compared if compared else None,
        agreement_pairs=compared,
        rule_reasons=(),
        override=volunteer.exclusion_override,
        note=volunteer.exclusion_note,
        finished=volunteer.finished_at is not None,
        returned=volunteer.returned_at is not None,
        minutes_spent=item.total_seconds / 60 if item.timed else None,
    )


def rule_verdict(volunteer: Volunteer) -> VolunteerQuality:
    """The rule's verdict on one volunteer from their own answers only (no agreement figure).

    The rule reads checks, times and answer shares, never the agreement with others, so the end
    page needs no pass over the campaign: this reads the volunteer's own judgements (an index).
    """
    evidence = _gather(Judgement.objects.filter(volunteer=volunteer))
    partial = _quality(volunteer, evidence.get(volunteer.pk, _Evidence()), 0, 0)
    return _with_reasons(partial, reasons(Rule.of(volunteer.campaign), partial))


def rule_verdicts(campaign: Campaign, volunteer_ids: Iterable[int]) -> dict[int, VolunteerQuality]:
    """The rule's verdict (:func:`rule_verdict`) on each of ``volunteer_ids`` of ``campaign``.

    Whether a volunteer is excluded never depends on the agreement with others, so a page about
    a few volunteers (one pair's judges) needs only their own judgements: two indexed
    statements whatever the size of the campaign. The agreement figures are left at zero."""
    rule = Rule.of(campaign)
    volunteers = list(Volunteer.objects.filter(campaign=campaign, pk__in=set(volunteer_ids)))
    evidence = _gather(Judgement.objects.filter(volunteer__in=[volunteer.pk for volunteer in volunteers]))
    found = {}
    for volunteer in volunteers:
        partial = _quality(volunteer, evidence.get(volunteer.pk, _Evidence()), 0, 0)
        found[volunteer.pk] = _with_reasons(partial, reasons(rule, partial))
    return found


def campaign_quality(campaign: Campaign) -> list[VolunteerQuality]:
    """The evidence and the verdict for every volunteer of ``campaign``, oldest first.

    Two ordered passes over the judgements, so that memory stays bounded whatever the size of
    the campaign (the judgement export calls this): by volunteer (their times are only held
    until their median is taken), then by pair (only one pair's judges at a time, for the
    agreement with the others).
    """
    rule = Rule.of(campaign)
    evidence = _gather(Judgement.objects.filter(pair__campaign=campaign))

    agree: Counter[int] = Counter()
    compared: Counter[int] = Counter()
    corpus = (
        Judgement.objects.filter(pair__campaign=campaign, is_training=False, is_check=False)
        .order_by("pair_id")
        .values_list("pair_id", "volunteer_id", "label")
    )
    judges: dict[int, bool] = {}
    pair_seen: int | None = None
    for pair_id, volunteer_id, label in corpus.iterator(chunk_size=5000):
        if pair_id != pair_seen:
            _count_agreement(judges, agree, compared)
            judges, pair_seen = {}, pair_id
        binary = is_paraphrase(label)
        if binary is not None:
            judges[volunteer_id] = binary
    _count_agreement(judges, agree, compared)  # the last pair

    result = []
    volunteers = Volunteer.objects.filter(campaign=campaign).order_by("created_at", "id")
    for volunteer in volunteers:
        item = evidence.get(volunteer.pk, _Evidence())
        partial = _quality(volunteer, item, agree[volunteer.pk], compared[volunteer.pk])
        result.append(_with_reasons(partial, reasons(rule, partial)))
    return result


def _with_reasons(quality: VolunteerQuality, found: tuple[str, ...]) -> VolunteerQuality:
    return replace(quality, rule_reasons=found)


def volunteer_quality(volunteer: Volunteer) -> VolunteerQuality:
    """The evidence about one volunteer (computed with the others: agreement needs them)."""
    for quality in campaign_quality(volunteer.campaign):
        if quality.volunteer_id == volunteer.pk:
            return quality
    raise Volunteer.DoesNotExist(volunteer.pk)


def excluded_volunteer_ids(campaign: Campaign) -> set[int]:
    """The volunteers an analysis leaves out when "exclude flagged volunteers" is on."""
    return {quality.volunteer_id for quality in campaign_quality(campaign) if quality.excluded}


__all__ = [
    "Rule",
    "VolunteerQuality",
    "campaign_quality",
    "excluded_volunteer_ids",
    "reasons",
    "rule_verdict",
    "rule_verdicts",
    "volunteer_quality",
]
