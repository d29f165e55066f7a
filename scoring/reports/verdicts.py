"""A campaign's quality verdicts and pair verdicts, kept under the change stamp for the staff pages.

The volunteers page, a pair's page and the pair list read who is excluded (the campaign-wide
quality pass of :func:`annotate.quality.campaign_quality`: two passes over every judgement)
and the volunteers' verdict on each pair (every corpus judgement). Computed on every view,
both grow with the campaign. Here they are computed once and kept in the cache together with
the global :func:`~scoring.reports.dataset.change_stamp` they were computed at (one indexed
query): while the stamp is unchanged, and for at most ``FULL_CHECK_SECONDS`` (the stamp misses a
deleted or edited row, as the dashboard's state does), a view reads them from the cache. A new
judgement, score, pair or volunteer changes the stamp; the quality verdicts also follow the
campaign's rule and its volunteers' overrides, notes and ends (one small aggregate), and
:func:`scoring.reports.state.forget_state` drops them with the campaign's state.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Max
from numpy.typing import NDArray

from annotate.models import Campaign, Judgement, Volunteer
from annotate.quality import VolunteerQuality, campaign_quality
from annotate.tallies import changes, tally
from scoring.analysis.labels import LABEL_CODES, volunteer_labels
from scoring.reports import refreshing
from scoring.reports.dataset import FULL_CHECK_SECONDS, change_stamp
from scoring.reports.state import verdicts_key

T = TypeVar("T")

# The "campaign" of what is kept for every campaign at once (the status page's counts).
EVERY_CAMPAIGN = 0


@dataclass(frozen=True)
class PairVerdicts:
    """The volunteers' binary verdict on each judged corpus pair of a campaign."""

    pair_ids: NDArray[np.int64]  # sorted
    binary: NDArray[np.int8]  # 1 paraphrase, 0 not, -1 none (a tie, Don't know only)

    def of(self, pair_ids: NDArray[np.int64]) -> NDArray[np.int8]:
        """The verdicts of ``pair_ids`` (-1 for a pair nobody judged)."""
        found = np.full(len(pair_ids), -1, dtype=np.int8)
        if not len(self.pair_ids) or not len(pair_ids):
            return found
        where = np.clip(np.searchsorted(self.pair_ids, pair_ids), 0, len(self.pair_ids) - 1)
        judged = self.pair_ids[where] == pair_ids
        found[judged] = self.binary[where[judged]]
        return found


def kept(campaign_id: int, kind: str, compute: Callable[[], T], variant: Any = None) -> T:
    """``compute()``, or its value kept for ``kind`` of the campaign (and ``variant``, such as a
    metric's id) at the same change stamp, when it is younger than ``FULL_CHECK_SECONDS``."""
    stamp = change_stamp()
    key = verdicts_key(campaign_id, kind)
    cached = cache.get(key)
    now = time.time()  # wall clock, as the campaign's state
    fresh = cached is not None and cached["stamp"] == stamp and now - cached["at"] < FULL_CHECK_SECONDS
    if fresh and variant in cached["values"]:
        value: T = cached["values"][variant]
        return value
    value = compute()
    values = {**cached["values"], variant: value} if fresh else {variant: value}
    cache.set(key, {"stamp": stamp, "at": cached["at"] if fresh else now, "values": values}, FULL_CHECK_SECONDS)
    return value


def _volunteers_state(campaign: Campaign) -> tuple[Any, ...]:
    """What the verdicts read of the volunteers that the change stamp does not see: who finished
    or returned, and the staff overrides and notes (an aggregate and the few overridden rows)."""
    volunteers = Volunteer.objects.filter(campaign=campaign).order_by()
    counts = volunteers.aggregate(
        count=Count("id"), last=Max("id"), finished=Count("finished_at"), returned=Count("returned_at")
    )
    overridden = volunteers.exclude(exclusion_override="", exclusion_note="").order_by("id")
    return (tuple(sorted(counts.items())), tuple(overridden.values_list("id", "exclusion_override", "exclusion_note")))


def _verdicts_state(campaign: Campaign) -> tuple[Any, ...]:
    rule = (campaign.exclude_failed_checks, campaign.exclude_median_seconds, campaign.exclude_same_answer_share)
    return (rule, _volunteers_state(campaign), changes(campaign.pk).count)


def volunteer_verdicts(campaign: Campaign) -> list[VolunteerQuality]:
    """:func:`annotate.quality.campaign_quality`, computed once per change of the campaign's data
    (its judgements, through the change stamp and the campaign's change counter, which also sees a
    judgement deleted or edited; its rule; its volunteers' overrides and ends). The exports read
    who is excluded from here, so an edit shows in the next download, not up to a minute later."""
    return kept(campaign.pk, "quality", lambda: campaign_quality(campaign), _verdicts_state(campaign))


def excluded_ids(campaign: Campaign) -> set[int]:
    """The volunteers the campaign's quality rule and staff exclude (from the kept verdicts)."""
    return {verdict.volunteer_id for verdict in volunteer_verdicts(campaign) if verdict.excluded}


def _pair_verdicts(campaign: Campaign) -> PairVerdicts:
    # One join over the campaign's corpus judgements (both flags tested, as the analyses do).
    rows = list(
        Judgement.objects.filter(
            pair__campaign=campaign, is_training=False, is_check=False, pair__is_training=False, pair__is_check=False
        ).values_list("pair_id", "label")
    )
    pairs = np.fromiter((pair for pair, _ in rows), dtype=np.int64, count=len(rows))
    codes = np.fromiter((LABEL_CODES[label] for _, label in rows), dtype=np.int64, count=len(rows))
    ids, index = np.unique(pairs, return_inverse=True)
    found = volunteer_labels(len(ids), index.ravel(), codes)
    return PairVerdicts(ids.astype(np.int64), found.binary)


def pair_verdicts(campaign: Campaign) -> PairVerdicts:
    """The volunteers' verdict on each corpus pair (the majority rule of
    :func:`annotate.aggregation.verdict`), computed once per change of the campaign's data."""
    return kept(campaign.pk, "pairs", lambda: _pair_verdicts(campaign))


# --- the staff pages' verdicts on a large campaign: the last ones kept, refreshed by a worker --------

REFRESH_TASK = "scoring.reports.tasks.refresh_volunteer_verdicts"


def _analysis(campaign_id: int) -> refreshing.Analysis:
    return refreshing.Analysis(
        key=f"quality:{campaign_id}",
        subject="Quality verdicts",
        task=REFRESH_TASK,
        arguments={"campaign_id": campaign_id},
    )


def _state_version(state: tuple[Any, ...]) -> str:
    return hashlib.sha256(repr(state).encode()).hexdigest()[:24]


def refresh_verdicts(campaign_id: int) -> None:
    """Compute the campaign's quality verdicts now and keep them as its last ones (what the
    ``interactive`` worker runs). The state is read first: a change during the pass leaves
    them marked as older than the data, so the next page queues another refresh."""
    campaign = Campaign.objects.get(pk=campaign_id)
    version = _state_version(_verdicts_state(campaign))
    judgements = tally(campaign).judgements
    refreshing.keep(_analysis(campaign_id), version, judgements, campaign_quality(campaign))


def _with_current_overrides(found: list[VolunteerQuality], campaign: Campaign) -> list[VolunteerQuality]:
    """Kept verdicts with today's staff overrides and notes (a few rows): a staff decision shows at once."""
    overridden = {
        pk: (override, note)
        for pk, override, note in Volunteer.objects.filter(campaign=campaign)
        .exclude(exclusion_override="", exclusion_note="")
        .values_list("id", "exclusion_override", "exclusion_note")
    }
    result = []
    for verdict in found:
        override, note = overridden.get(verdict.volunteer_id, ("", ""))
        changed = override != verdict.override or note != verdict.note
        result.append(replace(verdict, override=override, note=note) if changed else verdict)
    return result


def staff_verdicts(campaign: Campaign) -> refreshing.Kept[list[VolunteerQuality]]:
    """The quality verdicts for a staff page, at a cost that does not grow with the campaign.

    Below ``PARAEVAL_INLINE_QUALITY_JUDGEMENTS`` corpus judgements: :func:`volunteer_verdicts`
    (exact). Above: the last verdicts kept for the current data, or else the last kept ones with
    the moment they were computed, today's staff overrides on them, while the ``interactive``
    worker refreshes them (:mod:`scoring.reports.refreshing`; never shown as current)."""
    judgements = tally(campaign).judgements
    if judgements < settings.PARAEVAL_INLINE_QUALITY_JUDGEMENTS:
        return refreshing.Kept(volunteer_verdicts(campaign))
    version = _state_version(_verdicts_state(campaign))
    kept = refreshing.shown(_analysis(campaign.pk), version, judgements)
    if kept.as_of is None or kept.value is None:
        return kept
    return replace(kept, value=_with_current_overrides(kept.value, campaign))


__all__ = [
    "EVERY_CAMPAIGN",
    "PairVerdicts",
    "excluded_ids",
    "kept",
    "pair_verdicts",
    "refresh_verdicts",
    "staff_verdicts",
    "volunteer_verdicts",
]
