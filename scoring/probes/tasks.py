"""The Celery task that builds a probe set off the request path, on the ``cpu`` queue.

Thin: it calls :func:`scoring.probes.store.build_probe_set`. Safe to run twice: the request key
is stored once (a unique constraint), so a second delivery finds its probe set and stops, or
loses the race at the insert and stores nothing.
"""

from __future__ import annotations

from celery import shared_task
from django.db import IntegrityError

# Parsing runs at about 130 sentences a second on one core: an hour covers some 200,000 pairs.
TIME_LIMIT = 3600


@shared_task(
    name="scoring.probes.tasks.build_probe_set",
    ignore_result=True,
    acks_late=True,
    soft_time_limit=TIME_LIMIT,
    time_limit=TIME_LIMIT + 60,
)
def build_probe_set(campaign_id: int, kinds: list[str], seed: int, origin: str, request_key: str) -> int | None:
    """Build and store the probe set of one request; its id (None when there is nothing to do)."""
    from annotate.models import Campaign
    from scoring.probe_models import ProbeSet
    from scoring.probes import store

    done = ProbeSet.objects.filter(request_key=request_key).values_list("pk", flat=True).first()
    if done is not None:
        return int(done)
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return None  # deleted meanwhile
    try:
        built = store.build_probe_set(
            campaign, kinds=store.parse_kinds(kinds), seed=seed, origin=origin, request_key=request_key
        )
    except store.ProbeSetError:
        return None  # the pairs changed since the request was checked
    except IntegrityError:
        return None  # another delivery stored it first
    return built.probe_set_id
