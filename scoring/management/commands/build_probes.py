"""Build a probe set from a campaign's pairs (``scoring.probes.store``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.models import Campaign
from scoring.probes.build import BUILDABLE
from scoring.probes.store import ProbeSetError, build_probe_set, parse_kinds


class Command(BaseCommand):
    help = (
        "Build probe pairs (word swaps, changed numbers, dates and negations, reversed and padded pairs) from a "
        "campaign's pairs and store them as a closed campaign of their own, scored like any pairs. "
        "Example: manage.py build_probes --campaign mrpc-test --kinds paws_swap,multi_swap"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Slug of the campaign whose pairs the probes come from.")
        parser.add_argument("--origin", default="", help="Only the pairs of this corpus / origin.")
        parser.add_argument(
            "--kinds", default="", help=f"Comma-separated probe kinds (default all: {', '.join(BUILDABLE)})."
        )
        parser.add_argument(
            "--seed", type=int, default=None, help="Seed of the random choices (default PARAEVAL_SEED)."
        )
        parser.add_argument("--limit", type=int, default=None, help="Only the first N source pairs.")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.filter(slug=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with slug {options['campaign']!r}")
        seed = settings.PARAEVAL_SEED if options["seed"] is None else options["seed"]
        try:
            kinds = parse_kinds([name.strip() for name in options["kinds"].split(",") if name.strip()])
            built = build_probe_set(campaign, kinds=kinds, seed=seed, origin=options["origin"], limit=options["limit"])
        except ProbeSetError as error:
            raise CommandError(str(error)) from None
        total = sum(count for _, count in built.counts)
        self.stdout.write(
            f"Probe set {built.probe_set_id}: campaign {built.campaign_slug}, "
            f"{total} pairs from {built.sources} source pairs"
        )
        for kind, count in built.counts:
            self.stdout.write(f"  {kind}: {count}")
