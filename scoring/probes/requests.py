"""A probe set asked for from the web: the checks that can be made at once, and the message that
queues the build on the ``cpu`` workers. Web-safe: nothing here loads the parser
(:mod:`scoring.probes.store` does, on the worker)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence

from django.db import transaction

from annotate.models import Campaign, Pair
from scoring.probe_models import ProbeSet
from scoring.probes.build import BUILDABLE, ProbeKind

logger = logging.getLogger(__name__)


class ProbeSetError(ValueError):
    """A request for a probe set that cannot be met; the message says what is wrong."""


def parse_kinds(names: Sequence[str]) -> list[ProbeKind]:
    """Probe kinds from their names (all buildable kinds when empty); refuses an unknown name."""
    if not names:
        return list(BUILDABLE)
    known = {kind.value: kind for kind in BUILDABLE}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ProbeSetError(f"unknown probe kind {unknown[0]!r}; choose from {', '.join(known)}")
    return [known[name] for name in dict.fromkeys(names)]


BUILD_TASK = "scoring.probes.tasks.build_probe_set"


def check_request(campaign: Campaign, origin: str = "") -> None:
    """What can be refused before building: a probe set as source, a campaign or corpus without pairs."""
    if ProbeSet.objects.filter(campaign=campaign).exists():
        raise ProbeSetError(f"campaign {campaign.slug!r} is a probe set itself; build probes from its source campaign")
    pairs = Pair.objects.filter(campaign=campaign, is_training=False, is_check=False)
    if not (pairs.filter(origin=origin) if origin else pairs).exists():
        where = f" of origin {origin!r}" if origin else ""
        raise ProbeSetError(f"campaign {campaign.slug!r} has no pairs{where} to build probes from")


def queue_probe_set(campaign: Campaign, *, kinds: Sequence[ProbeKind], seed: int, origin: str = "") -> str:
    """Check the request and send it to the ``cpu`` queue after the commit; its request key."""
    from paraeval import broker

    check_request(campaign, origin)
    key = uuid.uuid4().hex
    message = broker.TaskMessage(BUILD_TASK, (campaign.pk, [k.value for k in kinds], seed, origin, key), "cpu")

    def publish() -> None:
        result = broker.send([message])
        if result.not_sent:
            logger.warning(
                "probe set of %s not queued: %s; build it with manage.py build_probes", campaign.slug, result.error
            )

    transaction.on_commit(publish)
    return key
