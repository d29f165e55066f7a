"""The import pipeline: read, validate everything, then store it all in one transaction.

Nothing is written unless the whole file is valid. The campaign row is locked while its
existing ids are read and the new pairs inserted, so two imports into one campaign run one
after the other and cannot both take the same id. ``pairs_created`` is sent after commit.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import IO

from django.conf import settings
from django.db import IntegrityError, transaction

from annotate.importers.formats import ParsedFile, parse_file, parse_mappings
from annotate.importers.problems import ImportProblem, ImportRefused, ImportReport
from annotate.importers.validation import (
    PairDraft,
    RecordKey,
    campaign_problems,
    clean_record,
    duplicate_problems,
    record_key,
)
from annotate.models import Campaign, Pair
from annotate.signals import announce_pairs_created

# Rows per INSERT: well under PostgreSQL's 65,535 and SQLite's 32,766 parameters per query.
BATCH_SIZE = 1000


def import_records(
    campaign: Campaign,
    records: Iterable[Mapping[str, object]],
    *,
    format_name: str = "records",
    max_length: int | None = None,
    origin: str = "",
    dry_run: bool = False,
) -> ImportReport:
    """Store pairs given as mappings with the canonical fields, all or nothing.

    Fields: ``source`` and ``hypothesis`` (required); ``id`` or ``external_id``, ``origin``,
    ``label`` or ``gold_label``, ``gold_score``; for training pairs ``training_position``,
    ``expected_label`` and ``explanation``. Unknown keys are ignored and listed in the report.
    A problem's ``line`` is the 1-based position of the record. Raises :class:`ImportRefused`
    with every problem when any record is invalid; then nothing is stored.
    """
    parsed = parse_mappings(((number, record) for number, record in enumerate(records, start=1)), format_name)
    return _store(campaign, parsed, max_length=max_length, origin=origin, dry_run=dry_run)


def import_file(
    campaign: Campaign,
    path_or_file: str | os.PathLike[str] | IO[bytes] | IO[str],
    *,
    format: str = "auto",
    max_length: int | None = None,
    origin: str = "",
    dry_run: bool = False,
) -> ImportReport:
    """Import a CSV, TSV or JSONL file (a path or an open file) into ``campaign``, all or nothing.

    ``format`` is ``auto`` (recognised from the header) or one of ``mrpc``, ``paws``, ``stsb``,
    ``csv``, ``tsv``, ``jsonl``. ``origin`` names the corpus of rows that give none (default:
    the format's corpus name for MRPC, PAWS and STS-B). ``max_length`` overrides
    ``settings.PARAEVAL_MAX_SENTENCE_LENGTH``. ``dry_run`` validates (database checks
    included) and stores nothing. Raises :class:`ImportRefused` listing every problem.
    """
    if isinstance(path_or_file, str | os.PathLike):
        path = Path(path_or_file)
        try:
            data: bytes | str = path.read_bytes()
        except OSError as error:
            raise ImportRefused([ImportProblem(None, None, f"cannot read {path}: {error.strerror}")]) from None
        filename = path.name
    else:
        data = path_or_file.read()
        filename = str(getattr(path_or_file, "name", "") or "")
    parsed = parse_file(data, format=format, filename=filename)
    return _store(campaign, parsed, max_length=max_length, origin=origin, dry_run=dry_run)


def validate_parsed(
    parsed: ParsedFile, *, max_length: int, origin: str
) -> tuple[list[PairDraft], list[RecordKey], list[ImportProblem]]:
    """Check every record of a parsed file on its own and against the others (no database).

    Returns the valid drafts, the id/position keys of all records and every problem found.
    """
    default_origin = origin.strip() or parsed.default_origin
    drafts: list[PairDraft] = []
    problems = list(parsed.problems)
    for record in parsed.records:
        draft, record_problems = clean_record(record, default_origin=default_origin, max_length=max_length)
        problems.extend(record_problems)
        if draft is not None:
            drafts.append(draft)
    keys = [record_key(record) for record in parsed.records]
    problems.extend(duplicate_problems(keys))
    return drafts, keys, problems


def _refuse(problems: list[ImportProblem]) -> ImportRefused:
    # File-level problems first, then by line; a stable sort keeps each line's own order.
    ordered = sorted(problems, key=lambda problem: -1 if problem.line is None else problem.line)
    return ImportRefused(ordered)


def _store(
    campaign: Campaign, parsed: ParsedFile, *, max_length: int | None, origin: str, dry_run: bool
) -> ImportReport:
    if campaign.pk is None:
        raise ValueError("the campaign must be saved before pairs are imported into it")
    if max_length is None:
        max_length = settings.PARAEVAL_MAX_SENTENCE_LENGTH
    drafts, keys, problems = validate_parsed(parsed, max_length=max_length, origin=origin)
    if not parsed.records and not problems:
        problems.append(ImportProblem(None, None, "nothing to import: no pairs (only a header or blank lines)"))

    with transaction.atomic():
        # Lock the campaign: concurrent imports into it wait here, so the ids read below stay true.
        if not Campaign.objects.select_for_update().filter(pk=campaign.pk).exists():
            raise ImportRefused([ImportProblem(None, None, f"campaign {campaign.slug!r} no longer exists")])
        existing = Pair.objects.filter(campaign_id=campaign.pk)
        existing_ids = set(existing.exclude(external_id="").values_list("external_id", flat=True))
        positions = set(existing.filter(is_training=True).values_list("training_position", flat=True))
        clashes = campaign_problems(keys, existing_ids=existing_ids, taken_positions=positions, campaign=campaign.slug)
        with_ids = sum(bool(key.external_id) for key in keys)
        if with_ids > 1 and sum(problem.field == "external_id" for problem in clashes) == with_ids:
            problems.append(
                ImportProblem(
                    None,
                    None,
                    f"every id in the file is already in campaign {campaign.slug!r}: was the file imported before?",
                )
            )
        problems.extend(clashes)
        if problems:
            raise _refuse(problems)
        report = ImportReport(
            created=len(drafts),
            format=parsed.format,
            training=sum(draft.is_training for draft in drafts),
            ignored_columns=list(parsed.ignored_columns),
            pair_ids=[],
            paraeval_export=parsed.paraeval_export,
            dry_run=dry_run,
            notes=_notes(parsed, drafts),
        )
        if dry_run:
            return report
        pairs = [_pair(campaign, draft) for draft in drafts]
        try:
            with transaction.atomic():
                Pair.objects.bulk_create(pairs, batch_size=BATCH_SIZE)
        except IntegrityError as error:
            # Only a pair written at the same moment by something that does not lock the
            # campaign (the admin) can get here; the whole import is rolled back.
            raise ImportRefused(
                [
                    ImportProblem(
                        None, None, f"the campaign changed during the import ({str(error).splitlines()[0]}); try again"
                    )
                ]
            ) from None
        pair_ids = [pair.pk for pair in pairs]
        announce_pairs_created(pair_ids)
    return replace(report, pair_ids=pair_ids)


def _pair(campaign: Campaign, draft: PairDraft) -> Pair:
    return Pair(
        campaign=campaign,
        external_id=draft.external_id,
        origin=draft.origin,
        source=draft.source,
        hypothesis=draft.hypothesis,
        gold_label=draft.gold_label,
        gold_score=draft.gold_score,
        is_training=draft.is_training,
        training_position=draft.training_position,
        expected_label=draft.expected_label,
        explanation=draft.explanation,
    )


def _notes(parsed: ParsedFile, drafts: list[PairDraft]) -> list[str]:
    notes = list(parsed.notes)
    seen: set[tuple[str, str]] = set()
    repeated = 0
    for draft in drafts:
        key = (draft.source, draft.hypothesis)
        repeated += key in seen
        seen.add(key)
    if repeated:
        pairs = "1 pair repeats" if repeated == 1 else f"{repeated:,} pairs repeat"
        notes.append(f"{pairs} the texts of an earlier pair in the file (stored anyway)")
    return notes
