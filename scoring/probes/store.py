"""Build a probe set from a campaign's pairs and store it as a campaign of its own.

Reading and parsing happen outside the transaction; the probe campaign, its pairs and what each
pair was built to be are stored in one transaction, all or nothing, and the new pairs are
announced after the commit so the workers score them like any imported pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.utils.text import slugify

from annotate.models import Campaign, Pair
from annotate.signals import announce_pairs_created
from scoring.probe_models import ProbePair, ProbeSet
from scoring.probes.build import Probe, ProbeKind, SourcePair, build_probes
from scoring.probes.requests import ProbeSetError, check_request, parse_kinds

__all__ = ["BuiltProbeSet", "ProbeSetError", "build_probe_set", "parse_kinds", "source_pairs"]

# Slugs are at most 50 characters (Django's SlugField).
SLUG_LENGTH = 50


@dataclass(frozen=True)
class BuiltProbeSet:
    probe_set_id: int
    campaign_slug: str
    sources: int
    counts: tuple[tuple[str, int], ...]


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
            team=campaign.team,  # the source campaign's team owns its probes too
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
