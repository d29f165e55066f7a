"""``manage.py import_scores``: store a file of precomputed scores as an external metric configuration.

All or nothing: the first 50 problems of the file are printed with their line (and how many
more there are), and nothing is stored.
Importing the same file again changes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.models import Campaign
from scoring.external.score_import import (
    ScoreFileMetric,
    ScoreImportError,
    import_scores,
    parse_direction,
    parse_options,
)


class Command(BaseCommand):
    help = "Import a CSV or JSONL file of precomputed scores (pair_id or external_id, score) as a metric."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="A .csv (header: pair_id or external_id, score) or .jsonl file.")
        parser.add_argument("--campaign", required=True, help="Slug of the campaign whose pairs the file scores.")
        parser.add_argument("--name", required=True, help="The metric's name, e.g. my_metric.")
        parser.add_argument(
            "--metric-version", dest="metric_version", required=True, help="The metric's version, e.g. 1.0."
        )
        parser.add_argument(
            "--direction", default="higher", help="higher (↑, a larger score is closer; default) or lower (↓)."
        )
        parser.add_argument("--threshold", type=float, default=None, help="The metric's natural threshold, if any.")
        parser.add_argument(
            "--options", default="{}", help='The metric\'s settings as a JSON object, e.g. \'{"model": "x"}\'.'
        )

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.filter(slug=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign {options['campaign']!r}")
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"no file {path}")
        try:
            higher = parse_direction(options["direction"])
            settings_given = parse_options(options["options"])
        except ValueError as error:
            raise CommandError(str(error)) from None
        metric = ScoreFileMetric(
            name=options["name"],
            version=options["metric_version"],
            higher_is_closer=higher,
            natural_threshold=options["threshold"],
            options=settings_given,
        )
        try:
            result = import_scores(campaign, path.read_bytes(), path.name, metric)
        except ScoreImportError as error:
            lines = "\n".join(f"  {problem}" for problem in error.problems)
            more = f"\n  and {error.more:,} more" if error.more else ""
            summary = f"{path.name} refused, nothing stored ({error.total} problems)"
            raise CommandError(f"{summary}:\n{lines}{more}") from None
        described = f"{result.config.label} (configuration {result.config.config_hash[:12]})"
        if result.created:
            self.stdout.write(f"{result.scores} scores stored as {described}")
        else:
            self.stdout.write(f"already imported as {described}; nothing changed")
