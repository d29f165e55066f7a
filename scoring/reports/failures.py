"""Why a campaign's scores failed, counted per metric configuration and reason (the dashboard's note).

A served judge fails a pair with a reason that says what to do ("'No' is not among the server's
top 20": a larger top-k, or a server that echoes prompt log-probabilities); the dashboard says how
many pairs failed so, for each metric, rather than only a total.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.db.models import Count

from annotate.models import Campaign
from scoring.models import Score

# Reasons shown on the dashboard (the most frequent first); the admin lists every failed score.
SHOWN = 8


@dataclass(frozen=True)
class FailureReason:
    """How many of a campaign's pairs one metric configuration failed with one reason."""

    config_id: int
    label: str
    reason: str
    pairs: int


def failure_reasons(campaign: Campaign, *, limit: int = SHOWN) -> list[FailureReason]:
    """The campaign's failed scores grouped by configuration and error text, most frequent first."""
    rows = (
        Score.objects.filter(pair__campaign=campaign, status=Score.Status.FAILED)
        .values("metric_config_id", "metric_config__label", "error")
        .annotate(pairs=Count("id"))
        .order_by("-pairs", "metric_config__label", "error")[:limit]
    )
    return [
        FailureReason(row["metric_config_id"], row["metric_config__label"], row["error"], row["pairs"]) for row in rows
    ]


def failures_json(campaign: Campaign, *, limit: int = SHOWN) -> list[dict[str, Any]]:
    """:func:`failure_reasons` as the dashboard's poll sends them (``config_id``, ``label``,
    ``reason``, ``pairs``)."""
    return [asdict(failure) for failure in failure_reasons(campaign, limit=limit)]
