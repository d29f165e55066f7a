"""Plan an adaptive campaign's order from its metric scores (``scoring.selection``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.models import Campaign
from scoring.selection import SelectionError, plan_selection


class Command(BaseCommand):
    help = (
        "Give every pair of an adaptive campaign its draw weight and place in the order (the pairs whose label would "
        "move the compared metrics' ΔAUCs most come first). Run it after the metrics scored the pairs and before the "
        "first volunteer. Example: manage.py plan_selection --campaign mrpc-test"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Slug of the campaign.")
        parser.add_argument("--seed", type=int, default=None, help="Seed of the draws (default PARAEVAL_SEED).")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.filter(slug=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with slug {options['campaign']!r}")
        if campaign.selection != "adaptive":
            raise CommandError(
                f"campaign {campaign.slug!r} uses the {campaign.selection} order: set its selection to adaptive first"
            )
        try:
            plan = plan_selection(campaign, seed=options["seed"])
        except (SelectionError, ValueError) as error:
            raise CommandError(str(error)) from None
        compared = ", ".join(plan.metrics) or "none (no metric has scored the pairs yet: a seeded random order)"
        self.stdout.write(
            f"Planned {plan.pairs} pairs of {campaign.slug}: compared {compared}; "
            f"draw weights from {plan.smallest_weight:.2f} to 1 (floor {plan.floor}); "
            f"{plan.unscored} pairs not scored by every compared metric come early with weight 1."
        )
