"""Celery tasks: thin wrappers around :mod:`scoring.pipeline.runner` and :mod:`scoring.pipeline.dispatch`.

``score_pairs`` (pairs and the configurations of one queue to score them with) is what
dispatch sends; ``score_batch`` (one configuration) stays for messages queued by an older
version. Both are acknowledged late (``CELERY_TASK_ACKS_LATE``): a worker killed while scoring
leaves its message to another worker, and the unique (pair, configuration) constraint makes
the second delivery harmless. Transient errors (the database unreachable, a lost race on a
deleted pair) are retried with exponential back-off; after the last retry, or on any other
error, the batch's pairs are stored as failed with the error text, for staff to see and retry.
"""

from __future__ import annotations

import logging

from celery import Task, shared_task
from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError

from scoring.models import MetricConfig
from scoring.pipeline import dispatch, runner

logger = logging.getLogger(__name__)

# Errors worth another attempt: the database went away or a concurrent delete raced us.
TRANSIENT_ERRORS = (OperationalError, InterfaceError, IntegrityError)


class ScoringTask(Task):
    """The retry and failure rules of every scoring task, written once.

    Transient errors are retried by Celery itself (``autoretry_for``) with exponential back-off
    and jitter; when a task fails for good (the last retry, or any other error) ``on_failure``
    stores its pairs as failed with the error text, where staff see it and can retry. Both
    tasks pass ``config_ids`` (or ``config_id``) and ``pair_ids``, which is all the hook needs.
    """

    autoretry_for = TRANSIENT_ERRORS
    retry_backoff = 5  # seconds before the first retry, then doubled: 5, 10, 20…
    retry_jitter = True
    acks_late = True
    reject_on_worker_lost = True
    ignore_result = True

    # Read at each retry, not at import: the settings of the running worker decide.
    @property
    def max_retries(self) -> int:
        return int(settings.PARAEVAL_SCORING_MAX_RETRIES)

    @property
    def retry_backoff_max(self) -> int:
        return int(settings.PARAEVAL_SCORING_RETRY_MAX_SECONDS)

    def on_failure(self, exc: BaseException, task_id: str, args: tuple, kwargs: dict, einfo: object) -> None:
        # (config_ids or config_id, pair_ids), positional as dispatch sends them, or by name.
        first = kwargs.get("config_ids", kwargs.get("config_id", args[0] if args else None))
        pair_ids = kwargs.get("pair_ids", args[1] if len(args) > 1 else [])
        config_ids = list(first) if isinstance(first, list | tuple) else [first]
        attempts = self.request.retries + 1
        transient = isinstance(exc, TRANSIENT_ERRORS)
        text = f"{type(exc).__name__}: {exc}"
        if transient:
            text = f"gave up after {attempts} attempts: {text}"
        else:
            logger.error("scoring configurations %s failed: %s", config_ids, text, exc_info=exc)
        for config_id in config_ids:
            if config_id is not None:
                _give_up(int(config_id), [int(pair_id) for pair_id in pair_ids], text, attempts)


def _score_batch(self: ScoringTask, config_id: int, pair_ids: list[int]) -> dict[str, object] | None:
    """Score ``pair_ids`` for metric configuration ``config_id`` (what is already there is skipped)."""
    summary = runner.score_config_batch(config_id, pair_ids, attempts=self.request.retries + 1)
    return summary.as_dict() if summary else None


def _score_pairs(self: ScoringTask, config_ids: list[int], pair_ids: list[int]) -> list[dict[str, object]] | None:
    """Score ``pair_ids`` with each configuration of ``config_ids`` (what is already there is skipped)."""
    summaries = runner.score_configs(config_ids, pair_ids, attempts=self.request.retries + 1)
    return [summary.as_dict() for summary in summaries]


score_batch = shared_task(bind=True, base=ScoringTask, name="scoring.pipeline.tasks.score_batch")(_score_batch)
score_pairs = shared_task(bind=True, base=ScoringTask, name="scoring.pipeline.tasks.score_pairs")(_score_pairs)


def _give_up(config_id: int, pair_ids: list[int], error: str, attempts: int) -> None:
    # If even this fails (database still down), the pairs stay missing and the sweep queues
    # them again later: nothing is lost, only delayed.
    try:
        config = MetricConfig.objects.filter(pk=config_id).first()
        if config is not None:
            runner.mark_failed(config, pair_ids, error, attempts=attempts)
    except TRANSIENT_ERRORS:
        logger.warning("could not store the failure of configuration %s: the sweep will queue it again", config_id)


def _sweep() -> dict[str, object]:
    """Queue every missing score (the beat schedule runs this every ``PARAEVAL_SWEEP_SECONDS``)."""
    return dispatch.queue_sweep().as_dict()


sweep = shared_task(name="scoring.pipeline.tasks.sweep", ignore_result=True)(_sweep)

# The names these tasks had before they followed their module (``scoring.tasks.*``): messages
# queued by the previous release still arrive and run. Remove them in the release after 0.1.0.
FORMER_NAMES = {
    "scoring.tasks.score_batch": shared_task(bind=True, base=ScoringTask, name="scoring.tasks.score_batch")(
        _score_batch
    ),
    "scoring.tasks.score_pairs": shared_task(bind=True, base=ScoringTask, name="scoring.tasks.score_pairs")(
        _score_pairs
    ),
    "scoring.tasks.sweep": shared_task(name="scoring.tasks.sweep", ignore_result=True)(_sweep),
}


# The meta-evaluation, generation and judge-tuning tasks live in their own packages' tasks
# modules, which the Celery app autodiscovers (paraeval/celery.py).
