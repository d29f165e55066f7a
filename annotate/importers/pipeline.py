"""The import pipeline: read, validate and store record by record, all in one transaction.

A file is streamed: each line is read, checked (on its own, against the lines before it and
against the campaign) and, while no problem has been found, added to a batch that is inserted
when full. Memory stays bounded by a batch and the set of ids, whatever the file's size.
Nothing is kept unless the whole file is valid: the first problem stops the inserts, the rest
of the file is still read to list every problem, and the transaction is rolled back. The
campaign row is locked while its existing ids are read and the new pairs inserted, so two
imports into one campaign run one after the other and cannot both take the same id.
``pairs_created`` is sent after commit.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from django.conf import settings
from django.db import IntegrityError, transaction

from annotate.importers.formats import ParsedFile, RecordStream, open_records, stream_mappings
from annotate.importers.options import NO_OPTIONS, ImportOptions
from annotate.importers.problems import MAX_PROBLEMS_KEPT, ImportProblem, ImportRefused, ImportReport
from annotate.importers.validation import (
    DuplicateTracker,
    PairDraft,
    RecordKey,
    SourceRecord,
    campaign_problems,
    clean_record,
    duplicate_problems,
    record_key,
)
from annotate.models import Campaign, Pair
from annotate.signals import announce_pairs_created

# Rows per INSERT: 2,000 rows of 16 columns stay under PostgreSQL's 65,535 parameters a query
# (Django lowers it further where SQLite allows fewer), and a batch of pairs is all the file
# that is held in memory at once.
BATCH_SIZE = 2000
# Distinct system names counted for the summary; more are stored but not counted one by one.
MAX_SYSTEMS_COUNTED = 1000


def import_records(
    campaign: Campaign,
    records: Iterable[Mapping[str, object]],
    *,
    format_name: str = "records",
    max_length: int | None = None,
    origin: str = "",
    dry_run: bool = False,
    options: ImportOptions = NO_OPTIONS,
) -> ImportReport:
    """Store pairs given as mappings with the canonical fields, all or nothing.

    Fields: ``source`` and ``hypothesis`` (required); ``id`` or ``external_id``, ``origin``,
    ``system``, ``label`` or ``gold_label``, ``gold_score``; for training pairs
    ``training_position``, ``expected_label`` and ``explanation``. Unknown keys are ignored and
    listed in the report. A problem's ``line`` is the 1-based position of the record. Raises
    :class:`ImportRefused` with every problem when any record is invalid; then nothing is stored.
    ``options`` say where the gold is (see :class:`~annotate.importers.options.ImportOptions`).
    """
    stream = stream_mappings(
        ((number, record) for number, record in enumerate(records, start=1)), format_name, options=options
    )
    return _store(campaign, stream, max_length=max_length, origin=origin, dry_run=dry_run, options=options)


def import_file(
    campaign: Campaign,
    path_or_file: str | os.PathLike[str] | IO[bytes] | IO[str],
    *,
    format: str = "auto",
    max_length: int | None = None,
    origin: str = "",
    dry_run: bool = False,
    header: bool = True,
    columns: Sequence[str] | None = None,
    options: ImportOptions = NO_OPTIONS,
    column_map: Mapping[str, str] | None = None,
) -> ImportReport:
    """Import a CSV, TSV or JSONL file (a path or an open file) into ``campaign``, all or nothing.

    ``format`` is ``auto`` (recognised from the header) or one of ``mrpc``, ``paws``, ``stsb``,
    ``csv``, ``tsv``, ``jsonl``. ``origin`` names the corpus of rows that give none (default:
    the format's corpus name for MRPC, PAWS and STS-B). ``max_length`` overrides
    ``settings.PARAEVAL_MAX_SENTENCE_LENGTH``. ``dry_run`` validates (database checks
    included) and stores nothing. ``header=False`` reads a file without a header line (PAWS or
    MRPC columns, or the ``columns`` given for CSV / TSV). The file is read line by line, never
    whole. ``options`` say where the gold is, or give the whole file one gold label; a
    label-like column left unread is a warning of the report (a refusal with ``options.strict``).
    ``column_map`` names the pair field of a CSV / TSV column or JSONL key (``""``: ignore it).
    Raises :class:`ImportRefused` listing every problem.
    """
    if not isinstance(path_or_file, str | os.PathLike):
        filename = str(getattr(path_or_file, "name", "") or "")
        stream = open_records(
            path_or_file,
            format=format,
            filename=filename,
            header=header,
            columns=columns,
            options=options,
            column_map=column_map,
        )
        return _store(campaign, stream, max_length=max_length, origin=origin, dry_run=dry_run, options=options)
    path = Path(path_or_file)
    try:
        with path.open("rb") as handle:
            stream = open_records(
                handle,
                format=format,
                filename=path.name,
                header=header,
                columns=columns,
                options=options,
                column_map=column_map,
            )
            return _store(campaign, stream, max_length=max_length, origin=origin, dry_run=dry_run, options=options)
    except OSError as error:
        raise ImportRefused([ImportProblem(None, None, f"cannot read {path}: {error.strerror}")]) from None


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


@dataclass(frozen=True, slots=True)
class CheckedRecord:
    """One record after every check: its draft (None when it has problems), its problems, its
    id and training position, and whether its id is already in the campaign."""

    draft: PairDraft | None
    problems: list[ImportProblem]
    key: RecordKey
    id_clash: bool


class RecordChecker:
    """Every check of a record, in one place: the gold options, the record on its own, against
    the records before it and against the campaign.

    The import, its dry run and the staff upload's preview all check records through this one
    object, so a preview never shows a row as fine that the dry run refuses, nor the other way.
    """

    def __init__(
        self,
        *,
        options: ImportOptions,
        default_origin: str,
        max_length: int,
        existing_ids: set[str],
        taken_positions: set[int],
        campaign_slug: str,
    ) -> None:
        self.options = options
        self.default_origin = default_origin
        self.max_length = max_length
        self.existing_ids = existing_ids
        self.taken_positions = taken_positions
        self.campaign_slug = campaign_slug
        self.duplicates = DuplicateTracker()

    def check(self, record: SourceRecord) -> CheckedRecord:
        """The record's draft and every problem found with it (remembering its id for the next ones)."""
        mapped, found = self.options.apply(record)
        draft = None
        if not found:  # a gold mapping problem stops the row: its value cannot be read
            draft, found = clean_record(mapped, default_origin=self.default_origin, max_length=self.max_length)
        key = record_key(mapped)
        found.extend(self.duplicates.check(key))
        clashes = campaign_problems(
            (key,), existing_ids=self.existing_ids, taken_positions=self.taken_positions, campaign=self.campaign_slug
        )
        found.extend(clashes)
        id_clash = any(problem.field == "external_id" for problem in clashes)
        return CheckedRecord(draft if not found else None, found, key, id_clash)


@dataclass
class _Problems:
    """The problems found so far: the first ones kept, all of them counted."""

    kept: list[ImportProblem] = field(default_factory=list)
    count: int = 0

    def extend(self, problems: Iterable[ImportProblem]) -> None:
        for problem in problems:
            self.count += 1
            if len(self.kept) < MAX_PROBLEMS_KEPT:
                self.kept.append(problem)

    def refusal(self) -> ImportRefused:
        # File-level problems first, then by line; a stable sort keeps each line's own order.
        ordered = sorted(self.kept, key=lambda problem: -1 if problem.line is None else problem.line)
        return ImportRefused(ordered, count=self.count)


@dataclass
class _Tally:
    """What the stored pairs add up to, counted as they go by."""

    records: int = 0
    created: int = 0
    training: int = 0
    checks: int = 0
    # Pairs per system name, for the summary of the staff upload page (bounded: a file of
    # free-text names would otherwise grow it by a pair).
    systems: dict[str, int] = field(default_factory=dict)
    with_ids: int = 0
    id_clashes: int = 0
    paraphrases: int = 0  # pairs stored with gold label paraphrase
    non_paraphrases: int = 0
    graded: int = 0  # pairs stored with a graded gold score
    # 64-bit hashes of (source, hypothesis), 8 bytes a pair, not the texts nor a set of Python
    # ints (~90 bytes a pair): the note on repeated pairs must not cost the file's size in
    # memory. A hash collision would only miscount that note.
    text_hashes: array[int] = field(default_factory=lambda: array("q"))
    # Lines of check pairs whose two sentences are the same: no word is highlighted on such a
    # pair, which tells it apart from every real pair.
    identical_checks: list[int | None] = field(default_factory=list)

    def add(self, draft: PairDraft) -> None:
        if draft.is_check and " ".join(draft.source.split()) == " ".join(draft.hypothesis.split()):
            self.identical_checks.append(draft.line)
        self.created += 1
        self.training += draft.is_training
        self.checks += draft.is_check
        if draft.system in self.systems or len(self.systems) < MAX_SYSTEMS_COUNTED:
            self.systems[draft.system] = self.systems.get(draft.system, 0) + 1
        self.paraphrases += draft.gold_label is True
        self.non_paraphrases += draft.gold_label is False
        self.graded += draft.gold_score is not None
        self.text_hashes.append(hash((draft.source, draft.hypothesis)))

    def repeated(self) -> int:
        """How many pairs repeat the texts of an earlier pair."""
        if not self.text_hashes:
            return 0
        import numpy as np  # only here: the web process needs numpy for nothing else of the importer

        return len(self.text_hashes) - len(np.unique(np.frombuffer(self.text_hashes, dtype=np.int64)))


def _insert(batch: list[Pair]) -> list[int]:
    try:
        Pair.objects.bulk_create(batch)
    except IntegrityError as error:
        # Only a pair written at the same moment by something that does not lock the campaign
        # (the admin) can get here; the whole import is rolled back.
        raise ImportRefused(
            [
                ImportProblem(
                    None, None, f"the campaign changed during the import ({str(error).splitlines()[0]}); try again"
                )
            ]
        ) from None
    return [pair.pk for pair in batch]


def _store(
    campaign: Campaign,
    stream: RecordStream,
    *,
    max_length: int | None,
    origin: str,
    dry_run: bool,
    options: ImportOptions = NO_OPTIONS,
) -> ImportReport:
    if campaign.pk is None:
        raise ValueError("the campaign must be saved before pairs are imported into it")
    if max_length is None:
        max_length = settings.PARAEVAL_MAX_SENTENCE_LENGTH
    default_origin = origin.strip() or stream.default_origin
    problems = _Problems()
    tally = _Tally()
    batch: list[Pair] = []
    # The new ids as 8-byte machine integers while the file is read: a Python int per pair,
    # allocated between the rows' short-lived objects, would pin memory the rows free.
    stored_ids: array[int] = array("q")

    with transaction.atomic():
        # Lock the campaign: concurrent imports into it wait here, so the ids read below stay true.
        if not Campaign.objects.select_for_update().filter(pk=campaign.pk).exists():
            raise ImportRefused([ImportProblem(None, None, f"campaign {campaign.slug!r} no longer exists")])
        checker = _checker(campaign, options, default_origin, max_length)
        for item in stream.items:
            if isinstance(item, ImportProblem):
                problems.extend((item,))
                continue
            tally.records += 1
            checked = checker.check(item)
            tally.with_ids += bool(checked.key.external_id)
            tally.id_clashes += checked.id_clash
            problems.extend(checked.problems)
            if problems.count:
                batch.clear()  # the file is refused: read on only to name every problem
                continue
            draft = checked.draft
            assert draft is not None  # no problem: clean_record made a draft
            tally.add(draft)
            if not dry_run:
                batch.append(_pair(campaign, draft))
                if len(batch) >= BATCH_SIZE:
                    stored_ids.extend(_insert(batch))
                    batch = []
        stream.finish()  # lines that are not UTF-8 came through the items; this is a safeguard
        # The per-record trackers are done with: free them (about 100 bytes a pair) before the
        # list of new ids and the scoring dispatch after the commit need memory of their own.
        del checker

        warnings = [*stream.warnings, *options.warnings(stream.ignored_columns)]
        problems.extend(_file_problems(campaign, tally, problems.count, warnings if options.strict else []))
        if problems.count:
            raise problems.refusal()
        if batch:
            stored_ids.extend(_insert(batch))
        notes = _notes(stream, tally)
        pair_ids = stored_ids.tolist()
        del stored_ids
        report = ImportReport(
            created=tally.created,
            format=stream.format,
            training=tally.training,
            checks=tally.checks,
            ignored_columns=list(stream.ignored_columns),
            pair_ids=pair_ids,
            paraeval_export=stream.paraeval_export,
            dry_run=dry_run,
            notes=notes,
            warnings=warnings,
            gold_paraphrases=tally.paraphrases,
            gold_non_paraphrases=tally.non_paraphrases,
            gold_scores=tally.graded,
            systems={name: count for name, count in tally.systems.items() if name},
        )
        if pair_ids:
            announce_pairs_created(pair_ids)
    return report


def _checker(campaign: Campaign, options: ImportOptions, default_origin: str, max_length: int) -> RecordChecker:
    """The record checker, told the campaign's ids and training positions already taken."""
    existing = Pair.objects.filter(campaign_id=campaign.pk)
    existing_ids = set(existing.exclude(external_id="").values_list("external_id", flat=True))
    positions = {
        position
        for position in existing.filter(is_training=True).values_list("training_position", flat=True)
        if position is not None
    }
    return RecordChecker(
        options=options,
        default_origin=default_origin,
        max_length=max_length,
        existing_ids=existing_ids,
        taken_positions=positions,
        campaign_slug=campaign.slug,
    )


def _file_problems(campaign: Campaign, tally: _Tally, found: int, strict_warnings: list[str]) -> list[ImportProblem]:
    """The problems of the whole file, once it is read: nothing in it, every id imported before,
    and, for a strict import, each warning (``found``: the problems of its records so far)."""
    problems: list[ImportProblem] = []
    if not tally.records and not found:
        problems.append(ImportProblem(None, None, "nothing to import: no pairs (only a header or blank lines)"))
    if tally.with_ids > 1 and tally.id_clashes == tally.with_ids:
        problems.append(
            ImportProblem(
                None,
                None,
                f"every id in the file is already in campaign {campaign.slug!r}: was the file imported before?",
            )
        )
    problems.extend(ImportProblem(None, None, f"{warning} (strict import)") for warning in strict_warnings)
    return problems


def _notes(stream: RecordStream, tally: _Tally) -> list[str]:
    """What the summary says of the file besides its counts: the stream's notes, repeats, no gold, identical checks."""
    notes = list(stream.notes)
    if repeats := tally.repeated():
        repeated = "1 pair repeats" if repeats == 1 else f"{repeats:,} pairs repeat"
        notes.append(f"{repeated} the texts of an earlier pair in the file (stored anyway)")
    if tally.created and not (tally.paraphrases or tally.non_paraphrases or tally.graded):
        notes.append(
            "no pair has a gold label or a graded score: if the file has them, name the gold column "
            "(with a value mapping for coded values); a file of paraphrases by construction can be "
            "given the constant gold label paraphrase"
        )
    if identical := tally.identical_checks:
        lines = ", ".join(str(line) for line in identical[:10]) + (", …" if len(identical) > 10 else "")
        notes.append(
            f"warning: {len(identical):,} check pair{'s' if len(identical) > 1 else ''} "
            f"(line{'s' if len(identical) > 1 else ''} {lines}) "
            f"show{'' if len(identical) > 1 else 's'} two identical sentences: nothing is highlighted on such "
            "a pair, so volunteers can tell it is a check (change a few words; see the how-to on attention checks)"
        )
    return notes


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
        system=draft.system,
        is_check=draft.is_check,
    )
