"""``manage.py restore_campaign FILE``: a campaign from ``backup_campaign``, all or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.backup import BackupError, restore


class Command(BaseCommand):
    help = "Restore a campaign written by backup_campaign into this installation (all or nothing)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="The backup (FILE.jsonl or FILE.jsonl.gz).")

    def handle(self, *args: Any, **options: Any) -> None:
        source: Path = options["file"]
        if not source.is_file():
            raise CommandError(f"{source} is not a file")
        try:
            summary = restore(source)
        except BackupError as error:
            raise CommandError(f"nothing restored: {error}") from None
        tables = ", ".join(f"{table.model} {table.rows}" for table in summary.tables)
        self.stdout.write(f"Restored campaign {summary.campaign!r}: {summary.rows} rows ({tables}).")
        if summary.reused_configs:
            self.stdout.write(f"{summary.reused_configs} metric configurations were already here and are shared.")
        if summary.renumbered:
            self.stdout.write(f"New ids (this installation had rows already): {', '.join(summary.renumbered)}.")
