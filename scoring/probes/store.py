"""Build a probe set from a campaign's pairs and store it as a campaign of its own.

Reading and parsing happen outside the transaction; the probe campaign, its pairs and what each
pair was built to be are stored in one transaction, all or nothing, and the new pairs are
announced after the commit so the workers score them like any imported pair.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.utils.text import slugify

from annotate.models import Campaign, Pair
from annotate.signals import announce_pairs_created
from scoring.probe_models import ProbePair, ProbeSet
from scoring.probes.build import BUILDABLE, Probe, ProbeKind, SourcePair, build_probes

logger = logging.getLogger(__name__)

# Slugs are at most 50 characters (Django's SlugField).
SLUG_LENGTH = 50


class ProbeSetError(ValueError):
    """A request for a probe set that cannot be met; the message says what is wrong."""


@dataclass(frozen=True)
class BuiltProbeSet:
    probe_set_id: int
    campaign_slug: str
    sources: int
    counts: tuple[tuple[str, int], ...]


def parse_kinds(names: Sequence[str]) -> list[ProbeKind]:
    """Probe kinds from their names (all buildable kinds when empty); refuses an unknown name."""
    if not names:
        return list(BUILDABLE)
    known = {kind.value: kind for kind in BUILDABLE}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ProbeSetError(f"unknown probe kind {unknown[0]!r}; choose from {', '.join(known)}")
    return [known[name] for name in dict.fromkeys(names)]


def source_pairs(campaign: Campaign, origin: str = "") -> list[tuple[int, SourcePair]]:
    """The campaign's corpus pairs (no training or check pair), with their imported gold label."""
    pairs = Pair.objects.filter(campaign=campaign, is_training=False, is_check=False)
    if origin:
        pairs = pairs.filter(origin=origin)
    return [
        (row["id"], SourcePair(str(row["id"]), row["source"], row["hypothesis"], row["gold_label"]))
        for row in pairs.order_by("id").values("id", "source", "hypothesis", "gold_label")
    ]


def _free_slug(base: str) -> str:
    stem = slugify(base)[: SLUG_LENGTH - 4] or "probes"
    slug, number = stem, 1
    while Campaign.objects.filter(slug=slug).exists():
        number += 1
        slug = f"{stem}-{number}"
    return slug


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


def build_probe_set(
    campaign: Campaign,
    *,
    kinds: Sequence[ProbeKind],
    seed: int,
    origin: str = "",
    limit: int | None = None,
    request_key: str = "",
) -> BuiltProbeSet:
    """Build the probes of ``campaign``'s pairs and store them as a new closed campaign."""
    check_request(campaign, origin)
    rows = source_pairs(campaign, origin)[:limit] if limit else source_pairs(campaign, origin)
    # The parser is loaded here only: the web process never imports spaCy.
    from scoring.probes.parse import parse_pairs, pipeline_signature

    probes = build_probes(parse_pairs(pair for _, pair in rows), kinds, seed)
    if not probes:
        raise ProbeSetError("no probe of the kinds asked for could be built from these pairs")
    ids = {pair.key: pair_id for pair_id, pair in rows}
    signature = pipeline_signature()
    with transaction.atomic():
        probe_campaign = Campaign.objects.create(
            slug=_free_slug(f"{campaign.slug}-probes"),
            name=f"Probes of {campaign.name}"[:200],
            description=f"Probe set built from campaign {campaign.slug} (seed {seed}); never shown to volunteers.",
            is_open=False,
            language=campaign.language,
        )
        probe_set = ProbeSet.objects.create(
            campaign=probe_campaign,
            source_campaign=campaign,
            source_origin=origin,
            seed=seed,
            kinds=[kind.value for kind in kinds],
            pipeline=signature,
            sources=len(rows),
            request_key=request_key,
        )
        pairs = Pair.objects.bulk_create([_pair(probe_campaign, index, probe) for index, probe in enumerate(probes)])
        ProbePair.objects.bulk_create(
            [
                ProbePair(
                    pair=pair,
                    probe_set=probe_set,
                    kind=probe.kind.value,
                    group=probe.group,
                    source_pair_id=ids[probe.group],
                    expected_paraphrase=probe.expected_paraphrase,
                    swaps=probe.swaps,
                    detail=probe.detail[:300],
                )
                for pair, probe in zip(pairs, probes, strict=True)
            ]
        )
        announce_pairs_created(pair.pk for pair in pairs)
    counts: dict[str, int] = {}
    for probe in probes:
        counts[probe.kind.value] = counts.get(probe.kind.value, 0) + 1
    return BuiltProbeSet(probe_set.pk, probe_campaign.slug, len(rows), tuple(sorted(counts.items())))


def _pair(campaign: Campaign, index: int, probe: Probe) -> Pair:
    return Pair(
        campaign=campaign,
        external_id=f"{probe.group}:{probe.kind.value}:{index}",
        origin=f"probes-{probe.kind.value}",
        source=probe.source,
        hypothesis=probe.hypothesis,
        gold_label=probe.expected_paraphrase,
    )
