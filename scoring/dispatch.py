"""Decide which scores are missing and queue them for the workers, in batches.

One task scores a batch of pairs for one metric configuration, on that configuration's queue
(``llm`` for transformer models, ``cpu`` for the lexical metrics). Nothing here imports a model
library, so the web process can call it (a test checks ``sys.modules``).

Three things queue work:

* ``pairs_created`` (an import): the new pairs' missing scores;
* ``judgement_recorded`` (a volunteer's answer): whatever that pair still lacks;
* the periodic :func:`queue_sweep`: every missing score in the database, so nothing depends on
  a message that was never sent (broker down at the time, worker killed on the embedded
  broker, a score reset from the admin…).

A send that fails never breaks its caller: the judgement is already committed, the failure is
logged, and the sweep queues the scores once the broker is back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet

from annotate.signals import judgement_recorded, pairs_created
from scoring import broker, configs
from scoring.models import MetricConfig, Score
from scoring.runner import ID_CHUNK, chunked, missing_pair_ids, scorable_pairs

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScoringBatch:
    """Pairs to score for one metric configuration, on that configuration's queue."""

    config_id: int
    metric: str
    queue: str
    pair_ids: tuple[int, ...]

    def message(self) -> broker.TaskMessage:
        return broker.TaskMessage(broker.SCORE_BATCH_TASK, (self.config_id, list(self.pair_ids)), self.queue)


@dataclass
class DispatchResult:
    """What a dispatch found missing and what it managed to queue."""

    batches: int = 0
    pairs: int = 0  # (pair, configuration) scores missing
    sent: int = 0
    not_sent: int = 0
    error: str | None = None
    skipped_queues: list[str] = field(default_factory=list)  # sweep: queues that still had a backlog

    def as_dict(self) -> dict[str, object]:
        return {
            "batches": self.batches,
            "pairs": self.pairs,
            "sent": self.sent,
            "not_sent": self.not_sent,
            "error": self.error,
            "skipped_queues": self.skipped_queues,
        }


def missing_batches(
    pair_ids: Iterable[int] | None = None,
    *,
    configurations: Sequence[MetricConfig] | None = None,
    batch_size: int | None = None,
) -> list[ScoringBatch]:
    """Batches of the missing scores: for the given pairs, or for every pair when ``None``.

    Batches are grouped per configuration (hence per queue); the slowest queue's batches come
    first so that the model work starts as early as possible.
    """
    size = batch_size or settings.PARAEVAL_SCORING_BATCH_SIZE
    chosen = list(configurations) if configurations is not None else configs.enabled_configs()
    if not chosen:
        return []
    if pair_ids is None:
        missing = {config.pk: missing_pair_ids(config) for config in chosen}
    else:
        missing = _missing_for_pairs(sorted(set(pair_ids)), chosen)
    batches = [
        ScoringBatch(config.pk, config.metric, config.queue, tuple(chunk))
        for config in sorted(chosen, key=lambda config: (config.queue != "llm", config.pk))
        for chunk in chunked(missing.get(config.pk, []), size)
    ]
    return batches


def _missing_for_pairs(pair_ids: list[int], chosen: Sequence[MetricConfig]) -> dict[int, list[int]]:
    """Missing (configuration -> pair ids) for a few pairs, in two queries per id chunk."""
    missing: dict[int, list[int]] = {config.pk: [] for config in chosen}
    for chunk in chunked(pair_ids, ID_CHUNK):
        scorable = list(scorable_pairs().filter(id__in=chunk).order_by("id").values_list("id", flat=True))
        if not scorable:
            continue
        have = set(
            Score.objects.filter(pair_id__in=scorable, metric_config__in=list(chosen)).values_list(
                "metric_config_id", "pair_id"
            )
        )
        for config in chosen:
            missing[config.pk].extend(pair_id for pair_id in scorable if (config.pk, pair_id) not in have)
    return missing


def send_batches(batches: Sequence[ScoringBatch]) -> DispatchResult:
    """Queue ``batches``; a broker that cannot be reached is logged, never raised."""
    result = DispatchResult(batches=len(batches), pairs=sum(len(batch.pair_ids) for batch in batches))
    outcome = broker.send([batch.message() for batch in batches])
    result.sent, result.not_sent, result.error = outcome.sent, outcome.not_sent, outcome.error
    return result


def queue_missing(pair_ids: Iterable[int]) -> DispatchResult:
    """Queue every enabled score the given pairs lack."""
    return send_batches(missing_batches(pair_ids))


def queue_sweep() -> DispatchResult:
    """Queue every missing score in the database, on the queues that have no backlog.

    A queue with messages still waiting is left alone this time: the work in it is probably
    the missing work itself, and queueing it again every sweep would only pile up duplicates
    behind a busy worker (a duplicate is harmless, just wasted polling). It is swept once the
    queue drains. Unreachable broker: nothing is sent; the next sweep tries again.
    """
    chosen = configs.enabled_configs()
    queues = sorted({config.queue for config in chosen})
    waiting = broker.queue_lengths(queues)
    if waiting.lengths is None:
        logger.warning("sweep: broker unreachable (%s); trying again at the next sweep", waiting.error)
        return DispatchResult(error=waiting.error)
    busy = [queue for queue in queues if waiting.lengths.get(queue, 0) > 0]
    result = send_batches(missing_batches(configurations=[config for config in chosen if config.queue not in busy]))
    result.skipped_queues = busy
    if result.batches or busy:
        logger.info(
            "sweep: %d missing scores in %d batches queued%s",
            result.pairs,
            result.sent,
            f"; queues with a backlog left alone: {', '.join(busy)}" if busy else "",
        )
    return result


def retry_failed(scores: QuerySet[Score]) -> int:
    """Delete the failed scores among ``scores`` and queue them again once that is committed.

    Returns how many were reset. If the broker is unreachable, the sweep queues them later.
    """
    with transaction.atomic():
        rows = list(scores.filter(status=Score.Status.FAILED).values_list("pk", "metric_config_id", "pair_id"))
        for chunk in chunked([pk for pk, _, _ in rows], ID_CHUNK):
            Score.objects.filter(pk__in=chunk, status=Score.Status.FAILED).delete()
        by_config: dict[int, list[int]] = {}
        for _, config_id, pair_id in rows:
            by_config.setdefault(config_id, []).append(pair_id)
        if by_config:
            transaction.on_commit(lambda: _safely(lambda: _queue_reset(by_config), "retry", len(rows)))
    return len(rows)


def _queue_reset(by_config: dict[int, list[int]]) -> None:
    chosen = list(MetricConfig.objects.filter(pk__in=list(by_config)))
    batches = [batch for config in chosen for batch in missing_batches(by_config[config.pk], configurations=[config])]
    send_batches(batches)


# --- Signal receivers (connected in ScoringConfig.ready) ---------------------------------------


def on_pairs_created(sender: object, pair_ids: list[int], **kwargs: object) -> None:
    """Queue the scores of newly imported pairs (runs after the import committed)."""
    _safely(lambda: queue_missing(pair_ids), "pairs_created", len(pair_ids))


def on_judgement_recorded(sender: object, judgement_id: int, pair_id: int, **kwargs: object) -> None:
    """Queue whatever the judged pair still lacks (runs after the judgement committed)."""
    _safely(lambda: queue_missing([pair_id]), "judgement_recorded", 1)


def _safely(action: Callable[[], object], event: str, pairs: int) -> None:
    # The caller's rows are committed; a failure here (database hiccup, broker down) must not
    # turn a stored judgement into an error page. The sweep catches up.
    try:
        action()
    except Exception:  # logged with its traceback; the sweep retries
        logger.exception("%s: could not queue the scores of %d pairs; the sweep will", event, pairs)


def connect_receivers() -> None:
    """Connect the receivers to the annotate signals (idempotent thanks to ``dispatch_uid``)."""
    pairs_created.connect(on_pairs_created, dispatch_uid="scoring.dispatch.on_pairs_created")
    judgement_recorded.connect(on_judgement_recorded, dispatch_uid="scoring.dispatch.on_judgement_recorded")
