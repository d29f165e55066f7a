"""The cache keys of a campaign's verdicts, and dropping them: light enough for a signal handler.

The handlers that see an exclusion change (``scoring.apps``) drop them without importing the
analyses (SciPy, scikit-learn), which a command such as ``import_pairs`` must not pay for. (A
campaign's data state is not kept: :mod:`scoring.reports.dataset` reads the database's change
counters each time.)
"""

from __future__ import annotations

from django.core.cache import cache

# What :mod:`scoring.reports.verdicts` keeps per campaign for the staff pages.
VERDICT_KINDS = ("quality", "pairs", "disagreements", "facets", "totals", "status")


def verdicts_key(campaign_id: int, kind: str) -> str:
    """The cache key of one kind of verdicts the staff pages keep for a campaign."""
    return f"paraeval:verdicts:{kind}:{campaign_id}"


def forget_state(campaign_id: int) -> None:
    """Drop the verdicts the staff pages keep for a campaign: the next staff page runs the
    quality pass again.

    Called when something the change stamp cannot see changed who is excluded (a staff
    override, the campaign's rule), so that "exclude flagged volunteers" follows at once.
    """
    cache.delete_many([verdicts_key(campaign_id, kind) for kind in VERDICT_KINDS])
