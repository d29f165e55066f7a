"""Which metric configurations scored a campaign, read from the score tallies the database keeps.

:class:`scoring.models.ScoreTally` holds the done and failed scores of each (campaign,
configuration), written by triggers (migration ``score_tallies_kept_by_triggers``): asking
"which configurations scored this campaign" reads a handful of tally rows instead of probing
the scores table, whose rows are the campaign's pairs times its configurations.
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet

from annotate.models import Campaign
from scoring.models import MetricConfig, ScoreTally


def scored_configs(campaign: Campaign | int) -> QuerySet[MetricConfig]:
    """The configurations with at least one score (done or failed) of a non-training pair of ``campaign``."""
    tallied = ScoreTally.objects.filter(metric_config=OuterRef("pk"), campaign=campaign).filter(
        Q(done__gt=0) | Q(failed__gt=0)
    )
    return MetricConfig.objects.filter(Exists(tallied))


__all__ = ["scored_configs"]
