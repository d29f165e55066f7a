"""How far a campaign is: judgements against targets, what is reserved, the answer rate, the
time left. A handful of aggregate queries; the staff settings page shows it.

Counts are of corpus pairs (neither training nor check pairs) and their judgements; a pair's
judgements beyond its target count once per target place (extra answers do not make another
pair done).
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass

from django.db.models import Count, F, Q, Sum
from django.db.models.functions import Least
from django.utils import timezone

from annotate import allocation
from annotate.models import Campaign, Judgement, Pair


@dataclass(frozen=True)
class CampaignProgress:
    """A campaign's progress, as the staff page shows it."""

    pairs: int
    target: int  # pairs x judges per pair
    judged: int  # judgements that count toward the target (at most the target per pair)
    pairs_lacking: int  # pairs with fewer judgements than the target
    reserved_now: int  # judgements held by reservations running now (allocation.Places.held)
    places_left: int  # volunteers who can still start: judgements missing / pairs per volunteer
    last_hour: int  # campaign answers in the last hour
    hours_left: float | None  # at the last hour's rate; None when nothing was answered in it
    state: str  # "closed", "empty" (no pair to judge yet), "full" (every place taken or done) or "open"

    @property
    def percent(self) -> int:
        return int(100 * self.judged / self.target) if self.target else 0


@dataclass(frozen=True)
class PairTotals:
    """A campaign's pairs by kind, and its corpus pairs against the judges per pair: one scan of
    its pairs, which the staff pages keep until the campaign's data changes."""

    pairs: int  # corpus pairs
    training: int
    checks: int
    judged: int  # judgements that count toward the target (at most the target per pair)
    lacking: int  # corpus pairs with fewer judgements than the target


def pair_totals(campaign: Campaign) -> PairTotals:
    """The campaign's pair counts and judged places (one aggregate over its pairs)."""
    per_pair = campaign.judges_per_pair
    corpus = Q(is_training=False, is_check=False)
    totals = Pair.objects.filter(campaign=campaign).aggregate(
        pairs=Count("pk", filter=corpus),
        training=Count("pk", filter=Q(is_training=True)),
        checks=Count("pk", filter=Q(is_check=True)),
        judged=Sum(Least(F("judgement_count"), per_pair), filter=corpus),
        lacking=Count("pk", filter=corpus & Q(judgement_count__lt=per_pair)),
    )
    return PairTotals(**{name: value or 0 for name, value in totals.items()})


def campaign_progress(
    campaign: Campaign, now: datetime.datetime | None = None, totals: PairTotals | None = None
) -> CampaignProgress:
    """Judgements against targets, reservations, the last hour's rate and the time left.

    ``totals``: the campaign's :func:`pair_totals` when the caller keeps them (read now else).
    """
    now = now or timezone.now()
    per_pair = campaign.judges_per_pair
    totals = pair_totals(campaign) if totals is None else totals
    pairs = totals.pairs
    judged = totals.judged
    target = pairs * per_pair
    # Reserved and free places by the allocator's own definition (the welcome page's "full", the
    # volunteers page's counts): a reservation that would yield to a newcomer holds nothing.
    found = allocation.places(campaign, now=now)
    reserved = found.held
    missing = found.free
    places = math.ceil(missing / campaign.quota) if campaign.quota else 0
    last_hour = Judgement.objects.filter(
        pair__campaign=campaign, is_training=False, is_check=False, answered_at__gte=now - datetime.timedelta(hours=1)
    ).count()
    remaining = max(0, target - judged)
    hours_left = remaining / last_hour if last_hour else None
    if not campaign.is_open:
        state = "closed"
    elif not pairs:  # nothing to judge: not "full", and not done either
        state = "empty"
    elif found.is_full:
        state = "full"
    else:
        state = "open"
    return CampaignProgress(
        pairs=pairs,
        target=target,
        judged=judged,
        pairs_lacking=totals.lacking,
        reserved_now=reserved,
        places_left=places,
        last_hour=last_hour,
        hours_left=hours_left,
        state=state,
    )
