"""The cache key of a campaign's data state, and dropping it: light enough for a signal handler.

:mod:`scoring.reports.dataset` keeps each campaign's fingerprint under this key; the handlers
that see an exclusion change (``scoring.apps``) drop it without importing the analyses (SciPy,
scikit-learn), which a command such as ``import_pairs`` must not pay for.
"""

from __future__ import annotations

from django.core.cache import cache


def state_key(campaign_id: int) -> str:
    """The cache key of the campaign's data state."""
    return f"paraeval:state:{campaign_id}"


def forget_state(campaign_id: int) -> None:
    """Drop the cached state of a campaign: the next report reads its fingerprint again.

    Called when something the change stamp cannot see changed who is excluded (a staff
    override, the campaign's rule), so that "exclude flagged volunteers" follows at once.
    """
    cache.delete(state_key(campaign_id))
