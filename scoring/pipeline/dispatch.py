"""Decide which scores are missing and not yet queued, and queue them: one message per queue.

One task (``scoring.pipeline.tasks.score_pairs``) carries pairs and the list of configurations to score
them with, all on one queue (``llm.<model>`` for each ParaPLUIE judge model, ``llm`` for the
embedding models, ``cpu`` for the lexical metrics): an answer queues at most one message per
queue, not one per configuration. A configuration with a language (a ParaPLUIE template written
for English or French pairs) is applied only to the pairs of campaigns in that language. Nothing here
imports a model library or the worker's runner, so the web process can call it (a test checks
``sys.modules`` and the imports).

Three things queue work:

* ``pairs_created`` (an import): the new pairs' missing scores;
* ``judgement_recorded`` (a volunteer's answer): whatever that pair still lacks (nothing at all,
  and no message, when it has every score), at the front of its queues (priority
  :data:`~paraeval.broker.PRIORITY_FIRST`), even the scores already queued behind an import;
* the periodic :func:`queue_sweep`: every missing score in the database that is not queued, so
  nothing depends on a message that was never sent (broker down at the time, worker killed on
  the embedded broker, a score reset from the admin…).

What is queued is remembered per (pair, configuration) by a :class:`QueuedScore` marker
(:mod:`scoring.pipeline.pending`), written just before the message is sent and deleted by the worker
once the score is stored: nothing is queued twice, so after a broker outage the sweep's work
is not followed by the same work queued again by every answer. A send that fails never breaks
its caller: the judgement is already committed, the failure is logged, the markers of what was
not sent are dropped, and the sweep queues the scores once the broker is back.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Protocol

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotate.signals import judgement_recorded, pairs_created
from paraeval import broker
from scoring.models import EXTERNAL_QUEUE, MetricConfig, Score
from scoring.pipeline import configs, limits, pending

logger = logging.getLogger(__name__)


class Configuration(Protocol):
    """What dispatch reads of a configuration (an :class:`~scoring.pipeline.configs.EnabledConfig` or a row)."""

    @property
    def id(self) -> int: ...

    @property
    def metric(self) -> str: ...

    @property
    def queue(self) -> str: ...

    @property
    def language(self) -> str: ...


@dataclass(frozen=True)
class ScoringTask:
    """Pairs to score on one queue, with each of a list of configurations: one message.

    ``time_limit``: Celery's hard limit for the message, the sum of its metrics' own limits and
    a grace period (:func:`scoring.pipeline.limits.task_time_limit`); a bound, not an identity.
    """

    queue: str
    config_ids: tuple[int, ...]
    pair_ids: tuple[int, ...]
    priority: int = broker.PRIORITY_BACKLOG
    time_limit: int | None = field(default=None, compare=False)

    def message(self) -> broker.TaskMessage:
        arguments = (list(self.config_ids), list(self.pair_ids))
        return broker.TaskMessage(broker.SCORE_PAIRS_TASK, arguments, self.queue, self.priority, self.time_limit)

    def markers(self) -> dict[int, list[int]]:
        return {config_id: list(self.pair_ids) for config_id in self.config_ids}


@dataclass
class DispatchResult:
    """What a dispatch found to queue and what it managed to send."""

    tasks: int = 0
    scores: int = 0  # (pair, configuration) scores in the tasks
    sent: int = 0
    not_sent: int = 0
    error: str | None = None
    busy_queues: list[str] = field(default_factory=list)  # sweep: queues that still had a backlog

    def as_dict(self) -> dict[str, object]:
        return {
            "tasks": self.tasks,
            "scores": self.scores,
            "sent": self.sent,
            "not_sent": self.not_sent,
            "error": self.error,
            "busy_queues": self.busy_queues,
        }


def is_model_queue(queue: str) -> bool:
    """``llm`` and ``llm.<model>``: queues whose workers hold a model in memory."""
    return queue == "llm" or queue.startswith("llm.")


def group_tasks(
    missing: dict[int, list[int]],
    queue_of: dict[int, str],
    batch_size: int | None = None,
    *,
    metric_of: Mapping[int, str] | None = None,
) -> list[ScoringTask]:
    """Tasks for (configuration -> missing pair ids): pairs needing the same configurations of a
    queue go together, at most ``batch_size`` pairs a task; the model queues' tasks first.

    ``metric_of`` (configuration -> metric name) gives each task its hard time limit."""
    size = batch_size or settings.PARAEVAL_SCORING_BATCH_SIZE
    needs: dict[tuple[str, int], set[int]] = {}
    for config_id, pair_ids in missing.items():
        for pair_id in pair_ids:
            needs.setdefault((queue_of[config_id], pair_id), set()).add(config_id)
    groups: dict[tuple[str, tuple[int, ...]], list[int]] = {}
    for (queue, pair_id), config_ids in needs.items():
        groups.setdefault((queue, tuple(sorted(config_ids))), []).append(pair_id)
    return [
        ScoringTask(
            queue,
            config_ids,
            tuple(chunk),
            time_limit=limits.task_time_limit(metric_of[i] for i in config_ids) if metric_of else None,
        )
        for (queue, config_ids), pair_ids in sorted(
            groups.items(), key=lambda item: (not is_model_queue(item[0][0]), item[0])
        )
        for chunk in pending.chunked(sorted(pair_ids), size)
    ]


def missing_tasks(
    pair_ids: Iterable[int],
    *,
    configurations: Sequence[Configuration] | None = None,
    batch_size: int | None = None,
    include_queued: bool = False,
) -> list[ScoringTask]:
    """Tasks for the scores the given pairs lack and nobody has queued (training pairs never).

    ``include_queued``: also the scores already queued (an answered pair whose scores wait in an
    import's backlog)."""
    chosen = list(configurations) if configurations is not None else list(configs.enabled())
    ids = sorted(set(pair_ids))
    if not chosen or not ids:
        return []
    wanted = sorted({config.id for config in chosen})
    missing: dict[int, list[int]] = {}
    for chunk in pending.chunked(ids, pending.ID_CHUNK):
        # One raw statement per chunk (an answer's pair: one in all): the ORM's three querysets
        # cost more CPU to compile than the database takes to answer them.
        for pair_id, language, have in pending.scorable_with_scores(chunk, wanted, include_queued=include_queued):
            for config in chosen:
                if config.id not in have and pending.applies(config.language, language):
                    missing.setdefault(config.id, []).append(pair_id)
    return group_tasks(
        missing,
        {config.id: config.queue for config in chosen},
        batch_size,
        metric_of={config.id: config.metric for config in chosen},
    )


def send_tasks(tasks: Sequence[ScoringTask], *, refresh: bool = False) -> DispatchResult:
    """Mark ``tasks`` queued and send them; a broker that cannot be reached is logged, never raised.

    The markers go in before the send (a worker may take the message at once and delete them),
    and the markers of the messages not sent are removed again, for the sweep to queue them.
    ``refresh``: the sweep re-sends stale markers, whose time is set to now.
    """
    result = DispatchResult(tasks=len(tasks), scores=sum(len(t.config_ids) * len(t.pair_ids) for t in tasks))
    if not tasks:
        return result
    if not broker.gate.is_open():
        result.not_sent = len(tasks)
        result.error = f"broker unreachable a moment ago ({broker.gate.last_error}); not tried"
        return result
    markers: dict[int, list[int]] = {}
    for task in tasks:
        for config_id, pair_ids in task.markers().items():
            markers.setdefault(config_id, []).extend(pair_ids)
    (pending.refresh_queued if refresh else pending.mark_queued)(markers)
    outcome = broker.send([task.message() for task in tasks])
    result.sent, result.not_sent, result.error = outcome.sent, outcome.not_sent, outcome.error
    for task in tasks[outcome.sent :]:
        pending.clear_queued_many(task.markers())
    return result


# Pairs looked at and sent per round of queue_missing: an import of 700,000 pairs queues in
# rounds, so the dispatch after its commit holds one round's tasks and markers, not all of them.
DISPATCH_ROUND = 2000


def queue_missing(pair_ids: Iterable[int]) -> DispatchResult:
    """Queue every enabled score the given pairs lack that is not queued yet (in bounded rounds)."""
    total = DispatchResult()
    ids = pair_ids if isinstance(pair_ids, list) else list(pair_ids)
    # An import's ids come sorted and unique: no second copy of 900,000 ints for nothing.
    if any(later <= earlier for earlier, later in itertools.pairwise(ids)):
        ids = sorted(set(ids))
    for chunk in pending.chunked(ids, DISPATCH_ROUND):
        result = send_tasks(missing_tasks(chunk))
        total.tasks += result.tasks
        total.scores += result.scores
        total.sent += result.sent
        total.not_sent += result.not_sent
        total.error = total.error or result.error
    return total


def sweep_tasks(
    chosen: Sequence[Configuration], idle_queues: Iterable[str], stale_before: datetime
) -> tuple[list[ScoringTask], list[ScoringTask]]:
    """The sweep's work: (tasks of missing scores never queued, tasks of stale markers to re-send).

    A marker is stale when its queue is idle and it is older than ``stale_before``: its message
    was lost (a worker killed on the embedded broker) or its task is still running (a
    duplicate is harmless: the runner skips what is stored meanwhile).
    """
    idle = set(idle_queues)
    fresh: dict[int, list[int]] = {}
    stale: dict[int, list[int]] = {}
    for config in chosen:
        lacking = pending.scorable_pairs(config.language).filter(pending.lacking_score(config.id))
        fresh[config.id] = list(lacking.exclude(pending.queued(config.id)).order_by("id").values_list("id", flat=True))
        if config.queue in idle:
            stale[config.id] = list(
                lacking.filter(pending.queued(config.id, before=stale_before))
                .order_by("id")
                .values_list("id", flat=True)
            )
    queue_of = {config.id: config.queue for config in chosen}
    metric_of = {config.id: config.metric for config in chosen}
    return group_tasks(fresh, queue_of, metric_of=metric_of), group_tasks(stale, queue_of, metric_of=metric_of)


def queue_answered(pair_ids: Iterable[int]) -> DispatchResult:
    """Queue what answered pairs still lack, ahead of any backlog (:data:`broker.PRIORITY_FIRST`).

    Scores already queued with an import's backlog are queued again, in front: a volunteer's
    answer would otherwise wait behind the whole pool. The copy left in the backlog is harmless:
    the worker that takes it finds the scores stored and skips them.
    """
    tasks = [replace(task, priority=broker.PRIORITY_FIRST) for task in missing_tasks(pair_ids, include_queued=True)]
    return send_tasks(tasks, refresh=True)


def queue_sweep(now: datetime | None = None) -> DispatchResult:
    """Queue every missing score that is not queued; re-send stale markers on idle queues.

    Queues with a backlog get the scores nobody queued (a pair imported while the broker was
    down): they are not in that backlog. Markers of scores stored or of deleted pairs are
    dropped, and so are those of configurations no longer enabled (a metric taken out of
    ``PARAEVAL_METRICS``). Unreachable broker: nothing is sent; the next sweep tries again.
    """
    now = now or timezone.now()
    configs.forget_enabled()  # a sweep a minute keeps this process's cached rows fresh too
    chosen = configs.enabled()
    queues = sorted({config.queue for config in chosen})
    waiting = broker.queue_lengths(queues)
    if waiting.lengths is None:
        logger.warning("sweep: broker unreachable (%s); trying again at the next sweep", waiting.error)
        return DispatchResult(error=waiting.error)
    pending.drop_settled_markers()
    pending.drop_markers_except(config.id for config in chosen)
    busy = [queue for queue in queues if waiting.lengths.get(queue, 0) > 0]
    stale_before = now - timedelta(seconds=settings.PARAEVAL_SWEEP_SECONDS)
    fresh, stale = sweep_tasks(chosen, [queue for queue in queues if queue not in busy], stale_before)
    result = send_tasks(fresh)
    again = send_tasks(stale, refresh=True)
    result.tasks += again.tasks
    result.scores += again.scores
    result.sent += again.sent
    result.not_sent += again.not_sent
    result.error = result.error or again.error
    result.busy_queues = busy
    if result.tasks:
        logger.info(
            "sweep: %d missing scores in %d tasks queued (%d re-sent after their message went missing)%s",
            result.scores,
            result.sent,
            again.scores,
            f"; queues with a backlog: {', '.join(busy)}" if busy else "",
        )
    return result


def retry_failed(scores: QuerySet[Score]) -> int:
    """Delete the failed scores among ``scores`` and queue them again once that is committed.

    Returns how many were reset. If the broker is unreachable, the sweep queues them later.
    """
    with transaction.atomic():
        rows = list(scores.filter(status=Score.Status.FAILED).values_list("pk", "metric_config_id", "pair_id"))
        for chunk in pending.chunked([pk for pk, _, _ in rows], pending.ID_CHUNK):
            Score.objects.filter(pk__in=chunk, status=Score.Status.FAILED).delete()
        by_config: dict[int, list[int]] = {}
        for _, config_id, pair_id in rows:
            by_config.setdefault(config_id, []).append(pair_id)
        if by_config:
            transaction.on_commit(lambda: _safely(lambda: _queue_reset(by_config), "retry", len(rows)))
    return len(rows)


def _queue_reset(by_config: dict[int, list[int]]) -> None:
    # Imported scores (queue "external") are never computed: a reset one stays missing.
    chosen = list(MetricConfig.objects.filter(pk__in=list(by_config)).exclude(queue=EXTERNAL_QUEUE))
    tasks = [task for config in chosen for task in missing_tasks(by_config[config.pk], configurations=[config])]
    send_tasks(tasks)


# --- Signal receivers (connected in ScoringConfig.ready) ---------------------------------------


def on_pairs_created(sender: object, pair_ids: list[int], **kwargs: object) -> None:
    """Queue the scores of newly imported pairs (runs after the import committed)."""
    _safely(lambda: queue_missing(pair_ids), "pairs_created", len(pair_ids))


def on_judgement_recorded(sender: object, judgement_id: int, pair_id: int, **kwargs: object) -> None:
    """Queue whatever the judged pair still lacks, first in line (runs after the judgement committed)."""
    _safely(lambda: queue_answered([pair_id]), "judgement_recorded", 1)


def _safely(action: Callable[[], object], event: str, pairs: int) -> None:
    # The caller's rows are committed; a failure here (database hiccup, broker down) must not
    # turn a stored judgement into an error page. The sweep catches up.
    try:
        action()
    except Exception:  # logged with its traceback; the sweep retries
        logger.exception("%s: could not queue the scores of %d pairs; the sweep will", event, pairs)


def connect_receivers() -> None:
    """Connect the receivers to the annotate signals (idempotent thanks to ``dispatch_uid``)."""
    pairs_created.connect(on_pairs_created, dispatch_uid="scoring.pipeline.dispatch.on_pairs_created")
    judgement_recorded.connect(on_judgement_recorded, dispatch_uid="scoring.pipeline.dispatch.on_judgement_recorded")
