"""Write a campaign's labelled corpus as CSV or JSON Lines (``annotate.exports``)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.exports.service import Format, Level, build_export
from annotate.models import Campaign


class Command(BaseCommand):
    help = "Export a campaign's judgements or pairs as CSV or JSONL (stdout unless --output is given)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="Campaign slug.")
        parser.add_argument("--format", choices=[f.value for f in Format], default=Format.CSV.value)
        parser.add_argument(
            "--level",
            choices=[level.value for level in Level],
            default=Level.PAIRS.value,
            help="judgements: one row per judgement; pairs: one row per pair with labels and scores.",
        )
        parser.add_argument("--output", type=Path, help="File to write (replaced only once complete).")

    def handle(self, *args: object, **options: object) -> None:
        slug = str(options["campaign"])
        try:
            campaign = Campaign.objects.get(slug=slug)
        except Campaign.DoesNotExist:
            known = ", ".join(Campaign.objects.order_by("slug").values_list("slug", flat=True)[:20]) or "none"
            raise CommandError(f"No campaign with slug {slug!r} (known: {known}).") from None
        export = build_export(campaign, str(options["level"]), str(options["format"]))
        output = options["output"]
        if output is None:
            for chunk in export.chunks():
                self.stdout.write(chunk, ending="")
            return
        assert isinstance(output, Path)
        self._write_file(output, export.chunks())
        self.stderr.write(f"Wrote {export.level.value} of {slug!r} to {output}")

    @staticmethod
    def _write_file(output: Path, chunks: Iterator[str]) -> None:
        """Write next to ``output`` and rename at the end: a failed export leaves no half file."""
        directory = output.resolve().parent
        if not directory.is_dir():
            raise CommandError(f"--output: folder {directory} does not exist.")
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{output.name}.", suffix=".part")
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
                for chunk in chunks:
                    file.write(chunk)
            os.replace(temporary, output)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
