"""``manage.py corpus_objective --campaign SLUG ORIGIN=OBJECTIVE ...``: the PARAPHRASUS objective of each corpus."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.models import Campaign


class Command(BaseCommand):
    help = (
        "Set the PARAPHRASUS objective of corpora (origins) of a campaign: classify (by the gold labels), "
        "minimise (no pair is a paraphrase) or maximise (every pair is one); ORIGIN=none removes it. "
        "Without assignments, list the corpora and their objectives. "
        "Example: manage.py corpus_objective --campaign paraphrasus mrpc=classify sts=minimise true=maximise"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Campaign slug.")
        parser.add_argument("assignments", nargs="*", help="ORIGIN=classify|minimise|maximise|none")

    def handle(self, *args: Any, **options: Any) -> None:
        from scoring.reports.paraphrasus import ObjectiveError, campaign_origins, objectives, set_objectives

        campaign = Campaign.objects.filter(slug=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign {options['campaign']!r}")
        wanted: dict[str, str | None] = {}
        for assignment in options["assignments"]:
            origin, sep, objective = assignment.rpartition("=")
            if not sep or not origin.strip():
                raise CommandError(f"{assignment!r} is not ORIGIN=OBJECTIVE (e.g. mrpc=classify)")
            value = objective.strip().lower()
            wanted[origin.strip()] = None if value == "none" else value
        try:
            stored = set_objectives(campaign, wanted) if wanted else objectives(campaign)
        except ObjectiveError as error:
            raise CommandError(str(error)) from None
        for origin in campaign_origins(campaign):
            objective = stored.get(origin)
            self.stdout.write(f"{origin or '(no origin)'}: {objective.value if objective else 'no objective'}")
