"""Queueing the stopping rule's check after a judgement: light enough to load in every process.

The web process connects :func:`on_judgement_recorded` when the scoring app starts, so this module
imports no statistics (:mod:`scoring.reports.stopping` does, and runs on the interactive queue).
"""

from __future__ import annotations

import logging

from django.core.cache import cache
from django.db.models import Subquery

from annotate.models import Pair
from paraeval import broker
from scoring.models import StoppingRule

logger = logging.getLogger(__name__)

CHECK_TASK = "scoring.reports.tasks.check_settled"
CHECK_DELAY_SECONDS = 10


def _waiting_key(campaign_id: int) -> str:
    return f"paraeval:stopping-check:{campaign_id}"


def queue_check(campaign_id: int, countdown: int = CHECK_DELAY_SECONDS) -> bool:
    """Send the check to the interactive queue (by name: this module never imports the tasks)
    through :func:`paraeval.broker.send`: one connection attempt, no publish retries, so an
    unreachable broker never holds the volunteer's answer (the next judgement queues it again).
    True when sent."""
    message = broker.TaskMessage(CHECK_TASK, (campaign_id,), broker.INTERACTIVE_QUEUE, countdown=countdown)
    return broker.send([message]).sent == 1


def check_started(campaign_id: int) -> None:
    """The check begins: judgements from now on queue the next one."""
    try:
        cache.delete(_waiting_key(campaign_id))
    except Exception:  # the cache is down: the key expires by itself
        logger.warning("could not clear the stopping check's key of campaign %s", campaign_id, exc_info=True)


def on_judgement_recorded(sender: object, judgement_id: int, pair_id: int, **kwargs: object) -> None:
    """After a judgement committed: queue the check when the pair's campaign has a rule that has
    not settled yet and no check is waiting (one indexed query otherwise). A failure never
    reaches the volunteer."""
    try:
        # One statement: the unsettled rule of the pair's campaign, if any.
        of_pair = Pair.objects.filter(pk=pair_id).values("campaign_id")[:1]
        unsettled = StoppingRule.objects.filter(campaign_id=Subquery(of_pair), settled_at__isnull=True)
        campaign_id = next(iter(unsettled.values_list("campaign_id", flat=True)[:1]), None)
        if campaign_id is None:
            return
        try:
            # Expires by itself should the check never run (a lost message).
            first = cache.add(_waiting_key(campaign_id), judgement_id, timeout=CHECK_DELAY_SECONDS * 6)
        except Exception:  # the cache is down: a check per judgement rather than none
            logger.warning("no cache for the stopping check of campaign %s", campaign_id, exc_info=True)
            first = True
        if first:
            queue_check(campaign_id)
    except Exception:  # logged; the next judgement queues the check again
        logger.exception("could not queue the stopping rule's check after judgement %s", judgement_id)


def connect_receivers() -> None:
    from annotate.signals import judgement_recorded

    judgement_recorded.connect(
        on_judgement_recorded, dispatch_uid="scoring.reports.stopping_queue.on_judgement_recorded"
    )
