"""Print the agreement tables of one campaign (the dashboard's tables) as Markdown, CSV or LaTeX."""

from __future__ import annotations

import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.labels import EnglishLevel
from annotate.models import Campaign
from scoring.analysis.formats import FORMATS, render
from scoring.analysis.service import FilterError, campaign_report, default_resamples
from scoring.analysis.tables import all_tables


def _day(value: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"not a date (YYYY-MM-DD): {value!r}") from None


class Command(BaseCommand):
    help = (
        "Print the paper's agreement tables (Tables 1-5, ranking, agreement, volunteers) of a campaign. "
        "Example: manage.py evaluate_metrics --campaign demo --gold imported --format latex"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Campaign slug (or numeric id).")
        parser.add_argument(
            "--gold",
            choices=["volunteers", "imported"],
            default="volunteers",
            help="Reference labels: the volunteers' majority (default) or the imported gold labels.",
        )
        parser.add_argument("--origin", help="Only the pairs of this corpus / origin.")
        parser.add_argument(
            "--english-level", choices=[level.value for level in EnglishLevel], help="Only these volunteers."
        )
        parser.add_argument("--from", dest="date_from", type=_day, help="Judgements answered on or after this day.")
        parser.add_argument("--to", dest="date_to", type=_day, help="Judgements answered on or before this day.")
        parser.add_argument("--format", choices=FORMATS, default="markdown")
        parser.add_argument(
            "--resamples",
            type=int,
            default=None,
            help=f"Bootstrap resamples for the 95%% intervals (default {default_resamples()}; 0: none).",
        )
        parser.add_argument("--seed", type=int, default=None, help="Seed of the bootstrap (fixed by default).")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = self._campaign(options["campaign"])
        try:
            report = campaign_report(
                campaign.pk,
                reference="gold" if options["gold"] == "imported" else "volunteers",
                origin=options["origin"],
                english_level=options["english_level"],
                date_from=options["date_from"],
                date_to=options["date_to"],
                resamples=options["resamples"],
                seed=options["seed"],
                use_cache=False,
            )
        except FilterError as error:
            raise CommandError(str(error)) from None
        if options["origin"] and report["counts"]["pairs"] == 0:
            raise CommandError(f"campaign {campaign.slug!r} has no pairs with origin {options['origin']!r}")
        self.stdout.write(render(all_tables(report), options["format"], self._preamble(report)), ending="")

    def _campaign(self, key: str) -> Campaign:
        campaign = Campaign.objects.filter(slug=key).first()
        if campaign is None and key.isdigit():
            campaign = Campaign.objects.filter(pk=int(key)).first()
        if campaign is None:
            known = ", ".join(Campaign.objects.order_by("slug").values_list("slug", flat=True)[:20]) or "none"
            raise CommandError(f"no campaign {key!r} (campaigns: {known})")
        return campaign

    @staticmethod
    def _preamble(report: dict[str, Any]) -> str:
        counts = report["counts"]
        reference = "imported gold labels" if report["reference"] == "gold" else "volunteers' majority labels"
        filters = ", ".join(
            f"{name}={value}" for name, value in report["filters"].items() if value and name != "reference"
        )
        return (
            f"# {report['campaign']['name']} ({report['campaign']['slug']}): metrics against {reference}\n\n"
            f"{counts['pairs']} pairs ({counts['paraphrases']} paraphrases, {counts['non_paraphrases']} "
            f"non-paraphrases, {counts['ties']} ties, {counts['unjudged']} unjudged); "
            f"{counts['judgements']} judgements from {counts['volunteers']} volunteers "
            f"({counts['training_judgements']} training answers not counted); "
            f"{counts['scores']} scores ({counts['scores_failed']} failed, {counts['scores_missing']} missing). "
            f"Bootstrap: {report['bootstrap']['resamples']} resamples, seed {report['bootstrap']['seed']}."
            + (f" Filters: {filters}." if filters else "")
            + f" Data version {report['version']}.\n"
        )
