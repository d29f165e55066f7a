"""``Pair.judgement_count`` kept in step with the Judgement rows.

The allocator needs "how many campaign judgements does this pair have" for every candidate,
in "fewest first" order. Counting Judgement rows per pair on every allocation is O(pool);
walking an index on a counter column stops at the first free pair. The counter is changed by
the same transaction that inserts or deletes the Judgement row (model signals below, so the
flow, the admin, a cascade and the test builders all keep it right), and
:func:`recount_judgements` rebuilds it from the rows when in doubt.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, F, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce, Greatest
from django.db.models.signals import post_delete, post_save

from annotate.models import Campaign, Judgement, Pair


def _judgement_saved(sender: type[Judgement], instance: Judgement, created: bool, raw: bool, **kwargs: Any) -> None:
    if created and not raw and not instance.is_training:
        Pair.objects.filter(pk=instance.pair_id).update(judgement_count=F("judgement_count") + 1)


def _judgement_deleted(sender: type[Judgement], instance: Judgement, **kwargs: Any) -> None:
    if not instance.is_training:
        # Greatest: never below zero, even if the counter was rebuilt in between.
        Pair.objects.filter(pk=instance.pair_id).update(judgement_count=Greatest(F("judgement_count") - 1, Value(0)))


def connect() -> None:
    """Connect the counter receivers (called once from ``AnnotateConfig.ready``)."""
    post_save.connect(_judgement_saved, sender=Judgement, dispatch_uid="annotate.counters.saved")
    post_delete.connect(_judgement_deleted, sender=Judgement, dispatch_uid="annotate.counters.deleted")


def recount_judgements(campaign: Campaign) -> int:
    """Rebuild ``judgement_count`` of every pair of ``campaign`` from its Judgement rows.

    Returns the number of pairs whose counter changed.
    """
    actual = (
        Judgement.objects.filter(pair=OuterRef("pk"), is_training=False)
        .order_by()
        .values("pair")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return (
        Pair.objects.filter(campaign=campaign)
        .annotate(actual=Coalesce(Subquery(actual), 0))
        .exclude(judgement_count=F("actual"))
        .update(judgement_count=Coalesce(Subquery(actual), 0))
    )


__all__ = ["connect", "recount_judgements"]
