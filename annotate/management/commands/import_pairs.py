"""``manage.py import_pairs FILE --campaign SLUG``: load pairs from CSV, TSV or JSONL, all or nothing."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import slug_re
from django.db import transaction

from annotate.importers import FORMAT_CHOICES, ImportOptionError, ImportOptions, ImportRefused, import_file
from annotate.importers.options import GOLD_AS_CHOICES, GOLD_CONSTANT_CHOICES, GOLD_MAP_HELP, parse_gold_map
from annotate.importers.problems import format_problems
from annotate.models import Campaign

MAX_SLUG_LENGTH = Campaign._meta.get_field("slug").max_length or 50


class Command(BaseCommand):
    help = (
        "Import paraphrase pairs into a campaign from MRPC, PAWS, STS-B, CSV, TSV or JSONL. "
        "The whole file is checked first: if any line is wrong, nothing is stored and every "
        "problem is listed with its line."
    )
    # No system checks: they load the URLconf, hence every view and the analyses' scikit-learn,
    # SciPy and pandas (about 170 MiB resident) that an import never uses. ``manage.py check``
    # and ``migrate`` still run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="File to import ('-' reads standard input).")
        parser.add_argument("--campaign", required=True, help="Slug of the campaign that receives the pairs.")
        parser.add_argument("--create", action="store_true", help="Create the campaign if it does not exist.")
        parser.add_argument("--name", help="Name of a campaign made by --create (default: the slug).")
        parser.add_argument(
            "--format",
            choices=FORMAT_CHOICES,
            default="auto",
            help="File format (default: recognised from the header; STS-B has none and needs --format stsb).",
        )
        parser.add_argument(
            "--origin", default="", help="Origin of pairs whose row gives none (default: mrpc, paws or stsb)."
        )
        parser.add_argument(
            "--max-length",
            type=int,
            default=None,
            help="Longest sentence accepted, in characters (default: PARAEVAL_MAX_SENTENCE_LENGTH).",
        )
        parser.add_argument("--dry-run", action="store_true", help="Check the file and store nothing.")
        parser.add_argument(
            "--no-header",
            action="store_true",
            help=(
                "The file has no header line: every line is a pair. With --format paws or mrpc the "
                "columns are theirs (PAWS: id, sentence1, sentence2, label); with csv or tsv name them with --columns."
            ),
        )
        parser.add_argument(
            "--columns",
            default=None,
            help="Comma-separated column names of a file without a header, e.g. id,source,hypothesis,label,system.",
        )
        parser.add_argument(
            "--gold-column",
            default="",
            help="The column (or JSON key) that holds the gold label, whatever its name, "
            "e.g. 'Human Annotation - Consensus'.",
        )
        parser.add_argument(
            "--gold-as",
            choices=GOLD_AS_CHOICES,
            default="label",
            help="Read the gold column as a binary label (default) or as a graded score.",
        )
        parser.add_argument(
            "--gold-map",
            default="",
            help=f"How the gold column's values read: {GOLD_MAP_HELP}. A value it does not name refuses the file.",
        )
        parser.add_argument(
            "--gold-constant",
            choices=GOLD_CONSTANT_CHOICES,
            default="",
            help="Give every pair of the file this gold label (e.g. a file of paraphrases by construction).",
        )
        parser.add_argument(
            "--ignore-columns",
            default="",
            help="Comma-separated columns you mean to ignore: no warning that they look like labels.",
        )
        parser.add_argument(
            "--strict",
            action="store_true",
            help="Refuse the file (nothing stored) when a column that looks like a label would be ignored.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        slug: str = options["campaign"]
        max_length: int | None = options["max_length"]
        if max_length is not None and max_length < 1:
            raise CommandError("--max-length must be at least 1")
        if options["name"] and not options["create"]:
            raise CommandError("--name is only used with --create")
        columns = [name.strip() for name in options["columns"].split(",")] if options["columns"] else None
        if columns and not options["no_header"]:
            raise CommandError("--columns is only used with --no-header (a file with a header names its columns)")
        source = sys.stdin.buffer if options["file"] == "-" else options["file"]
        try:
            import_options = ImportOptions(
                gold_column=options["gold_column"].strip(),
                gold_as=options["gold_as"],
                gold_map=parse_gold_map(options["gold_map"]) if options["gold_map"].strip() else {},
                gold_constant=options["gold_constant"],
                ignore_columns=tuple(name.strip() for name in options["ignore_columns"].split(",") if name.strip()),
                strict=options["strict"],
            )
        except ImportOptionError as error:
            raise CommandError(str(error)) from None
        try:
            # One transaction: a campaign made by --create disappears again if the file is refused.
            with transaction.atomic():
                campaign, created = self._campaign(slug, create=options["create"], name=options["name"])
                report = import_file(
                    campaign,
                    source,
                    format=options["format"],
                    max_length=max_length,
                    origin=options["origin"],
                    dry_run=options["dry_run"],
                    header=not options["no_header"],
                    columns=columns,
                    options=import_options,
                )
                if options["dry_run"]:
                    transaction.set_rollback(True)
        except ImportOptionError as error:  # e.g. --no-header without a format
            raise CommandError(str(error)) from None
        except ImportRefused as refused:
            self.stderr.write(format_problems(refused.problems, total=refused.count))
            count = refused.count
            raise CommandError(
                f"{options['file']}: refused ({count:,} problem{'s' if count != 1 else ''}); nothing was stored."
            ) from None
        if created:
            self.stdout.write(f"{'Would create' if report.dry_run else 'Created'} campaign {slug!r}.")
        self.stdout.write("\n".join(report.describe(campaign.slug)))

    def _campaign(self, slug: str, *, create: bool, name: str | None) -> tuple[Campaign, bool]:
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is not None:
            return campaign, False
        if not create:
            raise CommandError(f"campaign {slug!r} does not exist (add --create to create it)")
        if not slug_re.fullmatch(slug) or len(slug) > MAX_SLUG_LENGTH:
            raise CommandError(
                f"{slug!r} is not a valid campaign slug (letters, digits, - and _, at most {MAX_SLUG_LENGTH})"
            )
        return Campaign.objects.create(slug=slug, name=name or slug), True
