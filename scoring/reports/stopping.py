"""A campaign's stopping rule, Django side: fix the question, read its verdict, record it.

The statistics are :mod:`scoring.analysis.sequential` (an always-valid confidence sequence of
the paired ROC AUC difference, or a group-sequential O'Brien-Fleming plan that decides only at
its looks, the method fixed with the question); this module reads the campaign's counted judgements and
scores for it, words the dashboard's line, and records the moment the question settled:
:func:`check_settled` runs in a time-limited task queued after each judgement
(:func:`on_judgement_recorded`, which fires once the judgement is committed), writes the record
once (a conditional UPDATE: two copies of the task cannot both write it) and closes the campaign
when its rule says so.

The question, alpha, the planned size and the method are fixed before the first judgement:
:func:`set_rule` refuses to change them afterwards (choosing them after seeing data would
bend the error rate the rule keeps). ``close_when_settled`` may change at any time.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import transaction
from django.utils import timezone

from annotate.models import Campaign, Judgement
from scoring.analysis import sequential
from scoring.models import MetricConfig, StoppingRule
from scoring.reports import dataset
from scoring.reports.state import forget_state

logger = logging.getLogger(__name__)

WHY_SAFE_LOOKS = (
    "Why reading this every minute is safe: the group-sequential plan decides only at its {looks} looks, "
    "fixed before the first judgement at {counts} labelled pairs, with O'Brien-Fleming boundaries that spend "
    "alpha = {alpha} % across them; between looks the figures are shown but decide nothing, so however often "
    "the dashboard is read, the chance of calling a difference between two equally good metrics stays at most "
    "{alpha} %."
)
WHY_SAFE = (
    "Why reading this every minute is safe: the interval is always-valid: it holds the true "
    "difference at every moment at once with probability {confidence} %, so however often the "
    "dashboard is read, the chance of ever calling a difference between two equally good metrics "
    "stays at most {alpha} %. A fixed-sample test re-read after every judgement would call one "
    "far more often."
)


class StoppingError(ValueError):
    """A change the rule refuses, with the reason in words."""


def counted_judgements(campaign: Campaign) -> int:
    return Judgement.objects.filter(pair__campaign=campaign, is_training=False, is_check=False).count()


def question_of(rule: StoppingRule) -> sequential.Question:
    return sequential.Question(
        metric_a=rule.metric_a_id,
        metric_b=rule.metric_b_id,
        alpha=rule.alpha,
        planned_pairs=rule.planned_pairs,
        statistic=rule.statistic,
        method=rule.method,
        looks=rule.looks,
    )


def set_rule(
    campaign: Campaign,
    metric_a: MetricConfig,
    metric_b: MetricConfig,
    alpha: float,
    planned_pairs: int,
    close_when_settled: bool,
    statistic: str = "auc",
    method: str = sequential.CONFIDENCE_SEQUENCE,
    looks: int = sequential.DEFAULT_LOOKS,
) -> StoppingRule:
    """Create or change the campaign's rule; raises :class:`StoppingError` naming what is wrong.
    The method (and a group-sequential plan's looks) is part of the rule fixed before the first
    judgement."""
    try:
        sequential.Question(
            metric_a.pk,
            metric_b.pk,
            alpha=alpha,
            planned_pairs=planned_pairs,
            statistic=statistic,
            method=method,
            looks=looks,
        )
    except ValueError as error:
        raise StoppingError(str(error)) from error
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()  # one change at a time
        rule = StoppingRule.objects.filter(campaign=campaign).first()
        same_question = rule is not None and (
            (rule.metric_a_id, rule.metric_b_id, rule.alpha, rule.planned_pairs, rule.statistic, rule.method)
            == (metric_a.pk, metric_b.pk, alpha, planned_pairs, statistic, method)
            and (method != sequential.GROUP_SEQUENTIAL or rule.looks == looks)
        )
        if not same_question:
            judged = counted_judgements(campaign)
            if judged:
                raise StoppingError(
                    f"The question, alpha, the planned pairs and the stopping method are fixed before the first "
                    "judgement: "
                    f"{campaign.name} has {judged} judgement{'s' if judged != 1 else ''}. "
                    "Clone the campaign to ask another question."
                )
        if rule is None:
            rule = StoppingRule(campaign=campaign)
        rule.metric_a, rule.metric_b = metric_a, metric_b
        rule.alpha, rule.planned_pairs, rule.statistic = alpha, planned_pairs, statistic
        if method != sequential.GROUP_SEQUENTIAL and rule.method == method:
            looks = rule.looks  # the looks mean nothing to the confidence sequence: kept as they were
        rule.method, rule.looks = method, looks
        rule.close_when_settled = close_when_settled
        rule.save()
        _forget_on_commit(campaign.pk)
    return rule


def remove_rule(campaign: Campaign) -> None:
    """Drop the rule; refused once the campaign has a judgement (as a change of question is)."""
    judged = counted_judgements(campaign)
    if judged:
        raise StoppingError(
            f"The stopping rule is fixed before the first judgement: {campaign.name} has {judged} "
            f"judgement{'s' if judged != 1 else ''}."
        )
    StoppingRule.objects.filter(campaign=campaign).delete()
    _forget_on_commit(campaign.pk)


def _forget_on_commit(campaign_id: int) -> None:
    """The dashboard's version carries the rule and its record (:mod:`scoring.reports.dataset`):
    drop the cached state once the change is committed, so that the next poll sees it."""
    transaction.on_commit(lambda: forget_state(campaign_id))


def campaign_verdict(campaign: Campaign, rule: StoppingRule) -> sequential.Verdict:
    """The question's answer from every counted judgement and score of the campaign (no filter:
    the question is the campaign's, not a view's)."""
    data = dataset.load(campaign, dataset.Filters())
    ids = [metric.id for metric in data.metrics]
    question = question_of(rule)
    missing = [label for metric, label in ((rule.metric_a, "A"), (rule.metric_b, "B")) if metric.pk not in ids]
    oriented = np.array(
        [data.scores[i] if metric.higher_is_closer else -data.scores[i] for i, metric in enumerate(data.metrics)]
    ).reshape(len(data.metrics), len(data.pair_ids))
    if missing:
        empty = sequential.State(0, len(data.judgements), None, None, None)
        reason = f"metric {' and '.join(missing)} has no score yet"
        return sequential.Verdict(question, empty, None, None, reason, ready=False)
    return sequential.verdict(
        question,
        ids,
        oriented,
        data.judgements.pair_index,
        data.judgements.code,
        data.judgements.answered_at,
        campaign.judges_per_pair,
    )


@dataclass(frozen=True)
class Line:
    """What the dashboard shows: the verdict's sentence, and why watching is safe."""

    settled: bool
    text: str
    why: str
    record: str  # the record of the settlement (and of the closing), "" when none


def _signed(value: float) -> str:
    return f"{value:+.3f}".replace("-", "\u2212")


def _percent(value: float) -> str:
    return f"{value * 100:g}"


def _recorded(rule: StoppingRule) -> tuple[sequential.State | None, str]:
    """The settled state the record keeps (None before it settled) and the line saying when."""
    if rule.settled_at is None or rule.settled_difference is None:
        return None, ""
    state = sequential.State(
        rule.settled_pairs or 0,
        rule.settled_judgements or 0,
        rule.settled_difference,
        rule.settled_low,
        rule.settled_high,
    )
    record = f"Recorded {timezone.localtime(rule.settled_at):%Y-%m-%d %H:%M}."
    if rule.closed_at is not None:
        record += f" {rule.reason}"
    return state, record


def words(rule: StoppingRule, verdict: sequential.Verdict) -> Line:
    """The dashboard's sentences (exact words; the tests read them)."""
    confidence = _percent(1 - rule.alpha)
    a, b = rule.metric_a.label, rule.metric_b.label
    if rule.method == sequential.GROUP_SEQUENTIAL:
        return _group_sequential_words(rule, verdict, a, b)
    why = WHY_SAFE.format(confidence=confidence, alpha=_percent(rule.alpha))
    recorded, record = _recorded(rule)
    if recorded is not None:
        return Line(True, _settled_text(a, b, recorded, confidence, rule.statistic), why, record)
    if verdict.settled is not None:
        return Line(True, _settled_text(a, b, verdict.settled, confidence, rule.statistic), why, record)
    current = verdict.current
    if not verdict.ready or current.difference is None or current.low is None or current.high is None:
        text = f"Not settled yet: {verdict.reason} ({current.judgements} judgements so far)."
    else:
        symbol = sequential.STATISTIC_SYMBOLS[rule.statistic]
        text = (
            f"Not settled yet: {symbol} ({a} \u2212 {b}) {_signed(current.difference)}, always-valid {confidence} % "
            f"interval [{_signed(current.low)}, {_signed(current.high)}] after {current.judgements} judgements "
            f"({current.pairs} labelled pairs)."
        )
    return Line(False, text, why, record)


def _group_sequential_words(rule: StoppingRule, verdict: sequential.Verdict, a: str, b: str) -> Line:
    """The dashboard's sentences for a group-sequential plan."""
    plan = question_of(rule).group_sequential()
    why = WHY_SAFE_LOOKS.format(
        looks=len(plan.looks), counts=", ".join(map(str, plan.looks)), alpha=_percent(rule.alpha)
    )
    recorded, record = _recorded(rule)
    state = recorded if recorded is not None else verdict.settled
    if state is not None:
        return Line(True, _settled_looks_text(a, b, state, plan, rule.statistic), why, record)
    current = verdict.current
    symbol = sequential.STATISTIC_SYMBOLS[rule.statistic]
    now = (
        f" Now {symbol} ({a} \u2212 {b}) {_signed(current.difference)} after {current.judgements} judgements "
        f"({current.pairs} labelled pairs): an estimate, not a decision."
        if verdict.ready and current.difference is not None
        else f" ({current.judgements} judgements so far)."
    )
    return Line(False, f"Not settled yet (group-sequential plan): {verdict.reason}.{now}", why, record)


def _settled_looks_text(
    a: str, b: str, state: sequential.State, plan: sequential.GroupSequentialPlan, statistic: str
) -> str:
    assert state.difference is not None and state.low is not None and state.high is not None
    if state.difference > 0:
        better, worse, d, low, high = a, b, state.difference, state.low, state.high
    else:
        better, worse, d, low, high = b, a, -state.difference, -state.high, -state.low
    symbol = sequential.STATISTIC_SYMBOLS[statistic]
    look = plan.looks.index(state.pairs) + 1 if state.pairs in plan.looks else None
    at = f"look {look} of {len(plan.looks)}" if look else "a planned look"
    return (
        f"Settled at {at} of the group-sequential plan: {better} agrees better than {worse} ({symbol} {_signed(d)}, "
        f"repeated-confidence interval [{_signed(low)}, {_signed(high)}]) after {state.judgements} judgements."
    )


def _settled_text(a: str, b: str, state: sequential.State, confidence: str, statistic: str = "auc") -> str:
    assert state.difference is not None and state.low is not None and state.high is not None
    if state.difference > 0:
        better, worse, d, low, high = a, b, state.difference, state.low, state.high
    else:
        better, worse, d, low, high = b, a, -state.difference, -state.high, -state.low
    symbol = sequential.STATISTIC_SYMBOLS[statistic]
    return (
        f"Settled: {better} agrees better than {worse} ({symbol} {_signed(d)}, always-valid {confidence} % "
        f"interval [{_signed(low)}, {_signed(high)}]) after {state.judgements} judgements."
    )


def stopping_json(campaign: Campaign) -> dict[str, Any] | None:
    """The dashboard's stopping section, None when the campaign has no rule."""
    rule = StoppingRule.objects.filter(campaign=campaign).select_related("metric_a", "metric_b").first()
    if rule is None:
        return None
    verdict = campaign_verdict(campaign, rule)
    line = words(rule, verdict)
    current = verdict.current
    return {
        "settled": line.settled,
        "text": line.text,
        "why": line.why,
        "record": line.record,
        "question": {
            "statistic": rule.statistic,
            "statistic_label": rule.get_statistic_display(),
            "metric_a": rule.metric_a.label,
            "metric_b": rule.metric_b.label,
            "alpha": rule.alpha,
            "planned_pairs": rule.planned_pairs,
            "close_when_settled": rule.close_when_settled,
            "method": rule.method,
            "method_label": rule.get_method_display(),
            "looks": list(question_of(rule).group_sequential().looks)
            if rule.method == sequential.GROUP_SEQUENTIAL
            else None,
        },
        "current": {
            "pairs": current.pairs,
            "judgements": current.judgements,
            "difference": current.difference,
            "low": current.low if current.low is None or math.isfinite(current.low) else None,
            "high": current.high if current.high is None or math.isfinite(current.high) else None,
        },
    }


def check_settled(campaign_id: int) -> bool:
    """Record the settlement once, and close the campaign when its rule asks; True when this
    call recorded it. Safe to run twice, and in any number of copies (a conditional UPDATE)."""
    rule = (
        StoppingRule.objects.filter(campaign_id=campaign_id, settled_at__isnull=True)
        .select_related("campaign", "metric_a", "metric_b")
        .first()
    )
    if rule is None:
        return False  # no rule, or already settled: nothing to do
    verdict = campaign_verdict(rule.campaign, rule)
    if verdict.settled is None:
        return False
    state = verdict.settled
    now = timezone.now()
    if rule.method == sequential.GROUP_SEQUENTIAL:
        plan = question_of(rule).group_sequential()
        line = _settled_looks_text(rule.metric_a.label, rule.metric_b.label, state, plan, rule.statistic)
    else:
        line = _settled_text(rule.metric_a.label, rule.metric_b.label, state, _percent(1 - rule.alpha), rule.statistic)
    closing = rule.close_when_settled and rule.campaign.is_open
    with transaction.atomic():
        written = StoppingRule.objects.filter(pk=rule.pk, settled_at__isnull=True).update(
            settled_at=now,
            settled_judgements=state.judgements,
            settled_pairs=state.pairs,
            settled_difference=state.difference,
            settled_low=state.low,
            settled_high=state.high,
            closed_at=now if closing else None,
            reason=f"Closed by the stopping rule: {line}"[:400] if closing else "",
            updated_at=now,
        )
        if written and closing:
            Campaign.objects.filter(pk=campaign_id, is_open=True).update(is_open=False)
        if written:
            _forget_on_commit(campaign_id)
    if written:
        logger.info("campaign %s: the stopping rule settled (%s)%s", campaign_id, line, "; closed" if closing else "")
    return bool(written)


# --- after each judgement ---------------------------------------------------------------------------


# A busy campaign gets one check per this many seconds, not one per judgement: the first
# judgement of a quiet spell queues a check that runs this much later and reads every judgement
# stored by then; the judgements meanwhile queue nothing (a cache key says one is waiting).
