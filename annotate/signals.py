"""Events other apps react to (scoring queues work on them).

They are sent only after the transaction that stored the rows has committed, through the
helpers below, so a receiver never reads a row that is not there yet (or never will be).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.dispatch import Signal

# kwargs: pair_ids (list[int]) -- pairs were imported or created.
pairs_created = Signal()
# kwargs: judgement_id (int), pair_id (int) -- a volunteer's answer was stored.
judgement_recorded = Signal()


def announce_pairs_created(pair_ids: Iterable[int]) -> None:
    """Send ``pairs_created`` once the current transaction commits."""
    ids = list(pair_ids)
    if ids:
        transaction.on_commit(lambda: pairs_created.send(sender=None, pair_ids=ids))


def announce_judgement_recorded(judgement_id: int, pair_id: int) -> None:
    """Send ``judgement_recorded`` once the current transaction commits."""
    transaction.on_commit(lambda: judgement_recorded.send(sender=None, judgement_id=judgement_id, pair_id=pair_id))


# kwargs: campaign_id (int) -- staff changed who is excluded (an override) or the campaign's rule.
exclusions_changed = Signal()


def announce_exclusions_changed(campaign_id: int) -> None:
    """Send ``exclusions_changed`` once the current transaction commits (analyses cached by
    data version must see the new exclusions at once, not when their cache expires)."""
    transaction.on_commit(lambda: exclusions_changed.send(sender=None, campaign_id=campaign_id))
