"""Which metric configurations scored a campaign, read from the score tallies the database keeps.

:class:`scoring.models.ScoreTally` holds the done and failed scores of each (campaign,
configuration), written by triggers (migration ``score_tallies_kept_by_triggers``): asking
"which configurations scored this campaign" reads a handful of tally rows instead of probing
the scores table, whose rows are the campaign's pairs times its configurations.
"""

from __future__ import annotations

from django.db.models import Exists, Max, OuterRef, Q, QuerySet, Subquery, Sum

from annotate.models import Campaign
from annotate.tallies import Changes
from scoring.models import MetricConfig, ScoreTally


def scored_configs(campaign: Campaign | int) -> QuerySet[MetricConfig]:
    """The configurations with at least one score (done or failed) of a non-training pair of ``campaign``."""
    tallied = ScoreTally.objects.filter(metric_config=OuterRef("pk"), campaign=campaign).filter(
        Q(done__gt=0) | Q(failed__gt=0)
    )
    return MetricConfig.objects.filter(Exists(tallied))


def score_changes(campaign_id: int) -> Changes:
    """Scores written on the campaign's pairs (inserted, updated, deleted), and when the last was:
    its tallies summed, one indexed statement."""
    found = ScoreTally.objects.filter(campaign_id=campaign_id).aggregate(count=Sum("changes"), at=Max("changed_at"))
    return Changes(count=found["count"] or 0, at=found["at"])


def score_changes_subqueries(prefix: str) -> dict[str, Subquery]:
    """``{prefix}_count`` and ``{prefix}_at``: :func:`score_changes` of the outer query's campaign,
    as annotations of a campaign query."""
    tallies = ScoreTally.objects.filter(campaign=OuterRef("pk")).values("campaign").order_by()
    return {
        f"{prefix}_count": Subquery(tallies.annotate(n=Sum("changes")).values("n")),
        f"{prefix}_at": Subquery(tallies.annotate(at=Max("changed_at")).values("at")),
    }


__all__ = ["score_changes", "score_changes_subqueries", "scored_configs"]
