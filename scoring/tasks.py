"""Celery tasks: thin wrappers around :mod:`scoring.runner` and :mod:`scoring.dispatch`.

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

from celery import shared_task
from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError

from scoring import dispatch, runner
from scoring.models import MetricConfig

logger = logging.getLogger(__name__)

# Errors worth another attempt: the database went away or a concurrent delete raced us.
TRANSIENT_ERRORS = (OperationalError, InterfaceError, IntegrityError)


def backoff_seconds(retries: int) -> int:
    """Delay before retry number ``retries + 1``: 5 s, 10 s, 20 s… with full jitter, capped."""
    return get_exponential_backoff_interval(
        factor=5, retries=retries, maximum=settings.PARAEVAL_SCORING_RETRY_MAX_SECONDS, full_jitter=True
    )


@shared_task(
    bind=True, name="scoring.tasks.score_batch", acks_late=True, reject_on_worker_lost=True, ignore_result=True
)
def score_batch(self, config_id: int, pair_ids: list[int]) -> dict[str, object] | None:
    """Score ``pair_ids`` for metric configuration ``config_id`` (what is already there is skipped)."""
    attempts = self.request.retries + 1
    try:
        summary = runner.score_config_batch(config_id, pair_ids, attempts=attempts)
    except TRANSIENT_ERRORS as error:
        if self.request.retries < settings.PARAEVAL_SCORING_MAX_RETRIES:
            delay = backoff_seconds(self.request.retries)
            logger.warning("scoring configuration %s: %s; retry %d in %d s", config_id, error, attempts, delay)
            raise self.retry(exc=error, countdown=delay, max_retries=settings.PARAEVAL_SCORING_MAX_RETRIES) from error
        _give_up(config_id, pair_ids, f"gave up after {attempts} attempts: {type(error).__name__}: {error}", attempts)
        return None
    except Exception as error:  # not transient: store the failure where staff see it
        logger.exception("scoring batch for configuration %s failed", config_id)
        _give_up(config_id, pair_ids, f"{type(error).__name__}: {error}", attempts)
        return None
    return summary.as_dict() if summary else None


@shared_task(
    bind=True, name="scoring.tasks.score_pairs", acks_late=True, reject_on_worker_lost=True, ignore_result=True
)
def score_pairs(self, config_ids: list[int], pair_ids: list[int]) -> list[dict[str, object]] | None:
    """Score ``pair_ids`` with each configuration of ``config_ids`` (what is already there is skipped)."""
    attempts = self.request.retries + 1
    try:
        summaries = runner.score_configs(config_ids, pair_ids, attempts=attempts)
    except TRANSIENT_ERRORS as error:
        if self.request.retries < settings.PARAEVAL_SCORING_MAX_RETRIES:
            delay = backoff_seconds(self.request.retries)
            logger.warning("scoring configurations %s: %s; retry %d in %d s", config_ids, error, attempts, delay)
            raise self.retry(exc=error, countdown=delay, max_retries=settings.PARAEVAL_SCORING_MAX_RETRIES) from error
        text = f"gave up after {attempts} attempts: {type(error).__name__}: {error}"
        for config_id in config_ids:
            _give_up(config_id, pair_ids, text, attempts)
        return None
    except Exception as error:  # not transient: store the failure where staff see it
        logger.exception("scoring pairs for configurations %s failed", config_ids)
        for config_id in config_ids:
            _give_up(config_id, pair_ids, f"{type(error).__name__}: {error}", attempts)
        return None
    return [summary.as_dict() for summary in summaries]


def _give_up(config_id: int, pair_ids: list[int], error: str, attempts: int) -> None:
    # If even this fails (database still down), the pairs stay missing and the sweep queues
    # them again later: nothing is lost, only delayed.
    config = MetricConfig.objects.filter(pk=config_id).first()
    if config is not None:
        runner.mark_failed(config, pair_ids, error, attempts=attempts)


@shared_task(name="scoring.tasks.sweep", ignore_result=True)
def sweep() -> dict[str, object]:
    """Queue every missing score (the beat schedule runs this every ``PARAEVAL_SWEEP_SECONDS``)."""
    return dispatch.queue_sweep().as_dict()


# The meta-evaluation and generation tasks live in their own modules (scoring/analysis_tasks.py,
# scoring/generation_tasks.py); importing them here registers them with every worker that
# autodiscovers this module.
from scoring import analysis_tasks, generation_tasks  # noqa: E402, F401
