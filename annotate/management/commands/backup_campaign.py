"""``manage.py backup_campaign --campaign SLUG --output FILE``: one campaign, every row, to a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.backup import BackupError, backup


class Command(BaseCommand):
    help = (
        "Back up a campaign (pairs, volunteers, assignments, judgements, scores and the metric configurations "
        "they use) to a JSON Lines file, timestamps to the microsecond; .gz compresses. Restore: restore_campaign."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="The campaign's slug.")
        parser.add_argument(
            "--output", required=True, type=Path, help="The file to write (FILE.jsonl or FILE.jsonl.gz)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        output: Path = options["output"]
        if not output.parent.is_dir():
            raise CommandError(f"{output.parent} is not a folder")
        try:
            summary = backup(options["campaign"], output)
        except BackupError as error:
            raise CommandError(str(error)) from None
        tables = ", ".join(f"{table.model} {table.rows}" for table in summary.tables)
        self.stdout.write(f"Backed up campaign {summary.campaign!r} to {output}: {summary.rows} rows ({tables}).")
