"""Scores for annotate's pair-level export, through the interface annotate defines.

Registered in :class:`scoring.apps.ScoringConfig` ``ready()``: annotate never imports scoring.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from annotate.exports.scores import PairScore, ScoredConfiguration
from annotate.models import Campaign
from scoring.models import Score
from scoring.tallies import scored_configs


class ScoringScoreSource:
    """Reads :class:`MetricConfig` and :class:`Score` rows for the export."""

    def configurations(self, campaign: Campaign) -> list[ScoredConfiguration]:
        """Configurations that scored at least one non-training pair of ``campaign``."""
        rows = (
            scored_configs(campaign)
            .order_by("metric", "label", "id")
            .values_list("id", "label", "metric", "config_hash")
        )
        return [ScoredConfiguration(*row) for row in rows]

    def scores(self, pair_filter: dict[str, Any], config_ids: Sequence[int]) -> Iterator[PairScore]:
        """One query: the scores of the selected pairs under ``config_ids``."""
        rows = (
            Score.objects.filter(metric_config_id__in=list(config_ids), **pair_filter)
            .order_by()
            .values_list("pair_id", "metric_config_id", "value", "status")
        )
        for pair_id, config_id, value, status in rows:
            yield PairScore(pair_id, config_id, value, status == Score.Status.DONE)
