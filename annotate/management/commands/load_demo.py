"""``manage.py load_demo``: create the demo campaign with its pairs, once (run on every start)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotate.importers import ImportRefused
from annotate.importers.demo import load_demo_campaign


class Command(BaseCommand):
    help = (
        "Create the demo campaign (PARAEVAL_DEMO_CAMPAIGN) and load its 5 training pairs and 71 "
        "campaign pairs. Does nothing when the campaign already has pairs."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            outcome = load_demo_campaign()
        except ImportRefused as refused:  # only if the shipped file were broken
            raise CommandError(f"the demo file was refused:\n{refused}") from None
        slug = outcome.campaign.slug
        if outcome.report is None:
            self.stdout.write(f"Demo campaign {slug!r} already has {outcome.existing_pairs:,} pairs; nothing changed.")
            return
        if outcome.created_campaign:
            self.stdout.write(f"Created demo campaign {slug!r} ({outcome.campaign.name}).")
        self.stdout.write("\n".join(outcome.report.describe(slug)))
