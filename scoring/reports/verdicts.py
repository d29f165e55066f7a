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

import datetime
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np
from django.conf import settings
from django.core.cache import cache, caches
from django.db.models import Count, Max
from kombu.exceptions import OperationalError as BrokerError
from numpy.typing import NDArray

from annotate.models import Campaign, Judgement, Volunteer
from annotate.quality import VolunteerQuality, campaign_quality
from annotate.tallies import changes, tally
from paraeval import broker
from scoring.analysis.labels import LABEL_CODES, volunteer_labels
from scoring.reports import waits
from scoring.reports.dataset import FULL_CHECK_SECONDS, change_stamp
from scoring.reports.state import verdicts_key

logger = logging.getLogger(__name__)

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
REFRESH_WHAT = "Quality verdicts"
# The last verdicts of a campaign outlive any change: a page shows them (dated) while they refresh.
LAST_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True)
class StaffVerdicts:
    """The quality verdicts a staff page shows.

    ``verdicts`` is None when none were ever computed for this campaign and a worker computes
    them now. ``as_of`` is set when they are the last kept ones, not those of the current data:
    the moment they were computed, ``answers_since`` the corpus judgements counted since, and
    ``wait`` where their refresh stands. Exact (``as_of`` None) below
    ``PARAEVAL_INLINE_QUALITY_JUDGEMENTS`` judgements, or when nothing changed since."""

    verdicts: list[VolunteerQuality] | None
    as_of: float | None = None
    answers_since: int = 0
    wait: waits.Wait | None = None

    @property
    def current(self) -> bool:
        return self.verdicts is not None and self.as_of is None

    @property
    def notice(self) -> str:
        """What the page says about verdicts that are not the current data's ('' when they are)."""
        if self.current:
            return ""
        detail = f" {self.wait.message}" if self.wait is not None and self.wait.message else ""
        if self.verdicts is None:
            return f"Quality verdicts are being computed for the first time.{detail}"
        assert self.as_of is not None
        moment = datetime.datetime.fromtimestamp(self.as_of, tz=datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        since = f"{self.answers_since} answer{'' if self.answers_since == 1 else 's'} since"
        return f"Quality verdicts as of {moment}, {since}, refreshing.{detail}"


def _last_key(campaign_id: int) -> str:
    return f"quality-last:{campaign_id}"


def _state_version(state: tuple[Any, ...]) -> str:
    return hashlib.sha256(repr(state).encode()).hexdigest()[:24]


def refresh_verdicts(campaign_id: int) -> None:
    """Compute the campaign's quality verdicts now and keep them as its last ones (what the
    ``interactive`` worker runs). The state is read first: a change during the pass leaves
    them marked as older than the data, so the next page queues another refresh."""
    campaign = Campaign.objects.get(pk=campaign_id)
    state = _verdicts_state(campaign)
    judgements = tally(campaign).judgements
    found = campaign_quality(campaign)
    last = {"version": _state_version(state), "at": time.time(), "judgements": judgements, "verdicts": found}
    caches["analyses"].set(_last_key(campaign_id), last, LAST_SECONDS)


def _queue_refresh(campaign_id: int, version: str) -> waits.Wait:
    from paraeval.celery import app

    job = waits.job_key(f"quality:{campaign_id}", version)

    def send() -> None:
        arguments = {"campaign_id": campaign_id, "job": job}
        app.send_task(REFRESH_TASK, kwargs=arguments, queue=broker.INTERACTIVE_QUEUE)

    try:
        return waits.wait_for(job, REFRESH_WHAT, send)
    except (BrokerError, OSError) as error:  # broker down: say so; the page still shows the last verdicts
        logger.warning("cannot queue the quality verdicts of campaign %s: %s", campaign_id, error)
        return waits.Wait("unavailable", 0, f"The task queue is unreachable ({type(error).__name__}): not refreshing.")


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


def staff_verdicts(campaign: Campaign) -> StaffVerdicts:
    """The quality verdicts for a staff page, at a cost that does not grow with the campaign.

    Below ``PARAEVAL_INLINE_QUALITY_JUDGEMENTS`` corpus judgements: :func:`volunteer_verdicts`
    (exact). Above: the last verdicts kept for the current data, or else the last kept ones with
    the moment they were computed while the ``interactive`` worker refreshes them (never shown as
    current: :attr:`StaffVerdicts.notice` says so)."""
    judgements = tally(campaign).judgements
    if judgements < settings.PARAEVAL_INLINE_QUALITY_JUDGEMENTS:
        return StaffVerdicts(volunteer_verdicts(campaign))
    version = _state_version(_verdicts_state(campaign))
    last = caches["analyses"].get(_last_key(campaign.pk))
    if last is not None and last["version"] == version:
        return StaffVerdicts(last["verdicts"])
    wait = _queue_refresh(campaign.pk, version)
    if last is None:
        return StaffVerdicts(None, wait=wait)
    found = _with_current_overrides(last["verdicts"], campaign)
    return StaffVerdicts(found, as_of=last["at"], answers_since=max(0, judgements - last["judgements"]), wait=wait)


__all__ = [
    "EVERY_CAMPAIGN",
    "PairVerdicts",
    "StaffVerdicts",
    "excluded_ids",
    "kept",
    "pair_verdicts",
    "refresh_verdicts",
    "staff_verdicts",
    "volunteer_verdicts",
]
