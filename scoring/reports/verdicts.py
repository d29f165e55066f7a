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

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max
from numpy.typing import NDArray

from annotate.models import Campaign, Judgement, Volunteer
from annotate.quality import VolunteerQuality, campaign_quality
from annotate.tallies import changes
from scoring.analysis.labels import LABEL_CODES, volunteer_labels
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


def volunteer_verdicts(campaign: Campaign) -> list[VolunteerQuality]:
    """:func:`annotate.quality.campaign_quality`, computed once per change of the campaign's data
    (its judgements, through the change stamp and the campaign's change counter, which also sees a
    judgement deleted or edited; its rule; its volunteers' overrides and ends). The exports read
    who is excluded from here, so an edit shows in the next download, not up to a minute later."""
    rule = (campaign.exclude_failed_checks, campaign.exclude_median_seconds, campaign.exclude_same_answer_share)
    state = (rule, _volunteers_state(campaign), changes(campaign.pk).count)
    return kept(campaign.pk, "quality", lambda: campaign_quality(campaign), state)


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


__all__ = ["EVERY_CAMPAIGN", "PairVerdicts", "excluded_ids", "kept", "pair_verdicts", "volunteer_verdicts"]
