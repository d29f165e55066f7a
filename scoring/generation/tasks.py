"""The Celery task that generates candidate paraphrases, on the generator model's queue.

Acknowledged late: a worker killed mid-batch leaves its message to another worker, which
generates only the candidates not stored yet (:func:`scoring.generation.run.generate_missing`).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from annotate.models import Campaign

logger = logging.getLogger(__name__)


def _generate_candidates(
    campaign_id: int,
    template: str,
    model: str,
    settings: dict[str, Any],
    sources: list[str],
    run_id: int | None = None,
) -> dict[str, object] | None:
    """Generate one candidate per source with ``template`` x ``model`` and store each once;
    ``run_id``: the :class:`~scoring.models.GenerationRun` whose counters say where it stands."""
    from scoring.generation.candidates import GenerationSettings, Generator, note_task
    from scoring.generation.run import generate_missing

    if not Campaign.objects.filter(pk=campaign_id).exists():
        return None  # deleted meanwhile
    generator = Generator(template, model, GenerationSettings(**settings))
    note_task(run_id, tasks_started=1)
    try:
        summary = generate_missing(campaign_id, generator, sources)
    except BaseException:
        note_task(run_id, tasks_failed=1)
        raise
    note_task(run_id, tasks_done=1, stored=summary.stored)
    logger.info(
        "generated %d candidates with %s (%d stored, %d already there, %d empty) in %.1f s",
        summary.generated,
        summary.system,
        summary.stored,
        summary.already,
        summary.empty,
        summary.seconds,
    )
    return summary.as_dict()


_OPTIONS: dict[str, Any] = {"ignore_result": True, "acks_late": True, "reject_on_worker_lost": True}
generate_candidates = shared_task(name="scoring.generation.tasks.generate_candidates", **_OPTIONS)(_generate_candidates)

# The name this task had before it followed its module: messages queued by the previous release
# still arrive and run. Remove it in the release after 0.1.0.
FORMER_NAMES = {
    "scoring.tasks.generate_candidates": shared_task(name="scoring.tasks.generate_candidates", **_OPTIONS)(
        _generate_candidates
    ),
}
