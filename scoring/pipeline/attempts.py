"""Computations started and not finished: how a worker learns that a batch killed its predecessor.

Celery redelivers the message of a pool process that died (late acknowledgement, rejected on
worker loss), so a metric that ends its process would be tried forever; a hard time limit
acknowledges the message instead, and the sweep queues its scores again. Neither tells the next
worker what happened. The runner therefore writes a :class:`~scoring.models.ScoreAttempt` row
per (pair, configuration) before it computes a batch, committed at once, and deletes it where it
stores the scores. A row already there when a batch starts is a computation that never ended:
:func:`begin` returns how many, per pair, and the runner stores the scores as failed once that
reaches the crash budget. Counting in the database, not in the message, holds across brokers,
redeliveries, re-sent messages and worker restarts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import transaction
from django.db.models import F

from scoring.models import ScoreAttempt
from scoring.pipeline.pending import ID_CHUNK, chunked


def begin(config_id: int, pair_ids: Sequence[int]) -> dict[int, int]:
    """Record that ``config_id`` starts on ``pair_ids``; return the earlier unfinished starts per pair.

    Committed before returning (the caller computes outside any transaction): if this process
    dies while computing, the rows stay for the next attempt to find.
    """
    earlier: dict[int, int] = {}
    with transaction.atomic():
        for chunk in chunked(sorted(set(pair_ids)), ID_CHUNK):
            rows = ScoreAttempt.objects.filter(config_id=config_id, pair_id__in=chunk)
            earlier.update(rows.values_list("pair_id", "starts"))
            rows.update(starts=F("starts") + 1)
        fresh = [ScoreAttempt(pair_id=pair_id, config_id=config_id) for pair_id in pair_ids if pair_id not in earlier]
        # A concurrent start of the same batch (a duplicated message) may have inserted some:
        # counting it once is enough.
        ScoreAttempt.objects.bulk_create(fresh, ignore_conflicts=True)
    return earlier


def finish(config_id: int, pair_ids: Iterable[int]) -> None:
    """Forget the starts of these scores (stored, given up on, or dropped)."""
    for chunk in chunked(sorted(set(pair_ids)), ID_CHUNK):
        ScoreAttempt.objects.filter(config_id=config_id, pair_id__in=chunk).delete()


def undo(config_id: int, pair_ids: Iterable[int]) -> None:
    """Take back one start of these scores: the computation ended with an error its process
    survived (a transient database error before a retry), which is no death."""
    for chunk in chunked(sorted(set(pair_ids)), ID_CHUNK):
        rows = ScoreAttempt.objects.filter(config_id=config_id, pair_id__in=chunk)
        rows.filter(starts__lte=1).delete()
        rows.filter(starts__gt=1).update(starts=F("starts") - 1)


def unfinished_configs(config_ids: Iterable[int], pair_ids: Iterable[int]) -> set[int]:
    """The configurations among ``config_ids`` with an unfinished start on any of ``pair_ids``."""
    found: set[int] = set()
    wanted = list(config_ids)
    for chunk in chunked(sorted(set(pair_ids)), ID_CHUNK):
        rows = ScoreAttempt.objects.filter(config_id__in=wanted, pair_id__in=chunk)
        found.update(rows.values_list("config_id", flat=True).distinct())
    return found
