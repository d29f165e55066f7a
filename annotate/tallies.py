"""A campaign's sizes as the staff pages show them, read from the counters the database keeps.

:class:`annotate.models.CampaignTally` (and ``scoring``'s score tallies) are written by triggers
in the transaction of every insert and delete (migrations ``campaign_tallies_kept_by_triggers``
and ``campaign_tallies_striped``), spread over a few stripes per campaign so that concurrent
answers do not queue on one row: reading a campaign's pairs, checks, judgements and volunteers
sums its stripes in one indexed statement, whatever the campaign's size. :func:`counted` counts
the same rows with COUNT(*): what the tests hold the triggers to, and the reference when in doubt.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Max, OuterRef, Subquery, Sum

from annotate.models import Campaign, CampaignTally, Judgement, Pair, Volunteer


@dataclass(frozen=True)
class CampaignCounts:
    """Corpus pairs, attention checks, corpus judgements and volunteers of one campaign."""

    pairs: int = 0
    checks: int = 0
    judgements: int = 0
    volunteers: int = 0


def tallies(campaign_ids: Iterable[int]) -> dict[int, CampaignCounts]:
    """The kept counts of each campaign of ``campaign_ids``: its stripes summed (one query; zeros
    for one with no row yet)."""
    ids = list(campaign_ids)
    rows = (
        CampaignTally.objects.filter(campaign_id__in=ids)
        .values("campaign_id")
        .annotate(pairs=Sum("pairs"), checks=Sum("checks"), judgements=Sum("judgements"), volunteers=Sum("volunteers"))
        .order_by()
    )
    found = {
        row["campaign_id"]: CampaignCounts(row["pairs"], row["checks"], row["judgements"], row["volunteers"])
        for row in rows
    }
    return {pk: found.get(pk, CampaignCounts()) for pk in ids}


def tally(campaign: Campaign) -> CampaignCounts:
    """The kept counts of one campaign."""
    return tallies([campaign.pk])[campaign.pk]


@dataclass(frozen=True)
class Changes:
    """How many writes that can change an analysis a campaign has had, and when the last one was."""

    count: int = 0
    at: datetime | None = None


def changes(campaign_id: int) -> Changes:
    """The campaign's change counter: its stripes summed (one indexed statement). It only grows,
    so two reads that agree saw the same pairs, judgements and volunteers."""
    found = CampaignTally.objects.filter(campaign_id=campaign_id).aggregate(count=Sum("changes"), at=Max("changed_at"))
    return Changes(count=found["count"] or 0, at=found["at"])


def changes_subqueries(prefix: str) -> dict[str, Subquery]:
    """``{prefix}_count`` and ``{prefix}_at``: :func:`changes` of the outer query's campaign, as
    annotations of a campaign query (so that one statement reads the campaign and its counter)."""
    stripes = CampaignTally.objects.filter(campaign=OuterRef("pk")).values("campaign").order_by()
    return {
        f"{prefix}_count": Subquery(stripes.annotate(n=Sum("changes")).values("n")),
        f"{prefix}_at": Subquery(stripes.annotate(at=Max("changed_at")).values("at")),
    }


def counted(campaign: Campaign) -> CampaignCounts:
    """The same counts by COUNT(*) over the campaign's rows (four scans: tests and checks only)."""
    pairs = Pair.objects.filter(campaign=campaign, is_training=False)
    return CampaignCounts(
        pairs=pairs.filter(is_check=False).count(),
        checks=pairs.filter(is_check=True).count(),
        judgements=Judgement.objects.filter(pair__campaign=campaign, is_training=False, is_check=False).count(),
        volunteers=Volunteer.objects.filter(campaign=campaign).count(),
    )


__all__ = ["CampaignCounts", "Changes", "changes", "changes_subqueries", "counted", "tallies", "tally"]
