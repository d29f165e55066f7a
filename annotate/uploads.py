"""Staff uploads of pair files: stored on disk, previewed, mapped, checked and imported.

The third door of the one importer (after ``manage.py import_pairs`` and ``POST /api/pairs/``):
the file is streamed to ``PARAEVAL_DATA_DIR/uploads`` by the web process, which only reads its
first lines (the columns and a preview); the dry run and the import read the whole file in a
Celery task (:func:`run_upload`, on the ``interactive`` queue), through
:func:`annotate.importers.import_file`, so the rules, the problems and the all-or-nothing
transaction are the importer's own.

Progress is a small JSON file beside the upload (bytes read of the file's size), written by the
task at most twice a second: the import runs in one transaction, whose own writes nobody else
sees before it ends. The outcome (problems or summary) is written to the
:class:`~annotate.models.PairUpload` row in that same transaction, so a task delivered twice
finds the work done and stops.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, cast

from django.conf import settings
from django.db import transaction

from annotate.importers import ImportRefused, ImportReport, import_file
from annotate.importers import fields as f
from annotate.importers.formats import (
    MRPC_HEADER,
    PAWS_HEADER,
    STSB_FIELDS,
    detect_format,
    mapped_name,
    open_records,
)
from annotate.importers.options import GOLD_CONSTANT_CHOICES, ImportOptionError, ImportOptions, parse_gold_map
from annotate.importers.pipeline import RecordChecker
from annotate.importers.problems import ImportProblem
from annotate.importers.readers import TextLines
from annotate.importers.validation import SourceRecord, record_key
from annotate.models import Campaign, Pair, PairUpload, UploadState
from paraeval.textcheck import loads_bounded

logger = logging.getLogger(__name__)

UPLOAD_TASK = "annotate.tasks.run_upload"
PREVIEW_ROWS = 10
# Objects of a JSONL file read for its keys (a key first seen later is still read by its name).
JSONL_KEY_SAMPLE = 50
PROGRESS_INTERVAL_SECONDS = 0.5
# A queued task nobody has started after this long: the page asks whether a worker runs.
WAITING_HINT_SECONDS = 30
FORMATS = ("auto", "csv", "tsv", "jsonl", "mrpc", "paws", "stsb")
MAPPABLE_FORMATS = ("csv", "tsv", "jsonl")
CHECK, IMPORT = "check", "import"

# The pair fields a column can give, as the mapping form names them.
FIELD_LABELS: dict[str, str] = {
    f.SOURCE: "Sentence 1 (source)",
    f.HYPOTHESIS: "Sentence 2 (hypothesis)",
    f.EXTERNAL_ID: "Id",
    f.ORIGIN: "Origin (corpus)",
    f.SYSTEM: "System",
    f.GOLD_LABEL: "Gold label (paraphrase or not)",
    f.GOLD_SCORE: "Gold score",
    f.TRAINING_POSITION: "Training position",
    f.EXPECTED_LABEL: "Expected answer (training, check)",
    f.EXPLANATION: "Explanation (training)",
    f.CHECK: "Check (attention check)",
}


class UploadTooLarge(Exception):
    """The upload went past ``PARAEVAL_UPLOAD_MAX_MB``."""


def upload_dir() -> Path:
    """Where uploaded files and their progress files lie (shared by the web and the workers)."""
    folder = Path(settings.DATA_DIR) / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def max_upload_bytes() -> int:
    """The largest file the upload page accepts (setting ``PARAEVAL_UPLOAD_MAX_MB``)."""
    return int(settings.PARAEVAL_UPLOAD_MAX_MB) * 1024 * 1024


def new_key() -> str:
    """A fresh, unguessable name for an uploaded file."""
    return secrets.token_hex(16)


def file_path(upload: PairUpload) -> Path:
    return upload_dir() / f"{upload.key}.upload"


def progress_path(upload: PairUpload) -> Path:
    return upload_dir() / f"{upload.key}.progress.json"


# --- columns and preview ------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnChoice:
    """One column of the file and the pair field it gives ("" when it is ignored)."""

    column: str
    field: str
    label: str


# Problems a value mapping of the gold column can solve: a value the importer cannot read as a
# label, or one the mapping leaves out. The page links them to the mapping's field.
_GOLD_VALUE_PROBLEMS = (f.GOLD_LABEL_HELP, "is not in the gold mapping")
GOLD_MAP_ANCHOR = "id_gold_map"


def solved_by_gold_mapping(message: str) -> bool:
    """Whether a problem is a gold value that the page's value mapping can read."""
    return any(marker in message for marker in _GOLD_VALUE_PROBLEMS)


@dataclass(frozen=True)
class ShownProblem:
    """A problem of the dry run or the import as the page lists it, with where to fix it."""

    line: int | None
    field: str
    message: str
    gold_mapping: bool  # the value mapping of the gold column, on the same page, can solve it


def shown_problems(rows: list[list[object]]) -> list[ShownProblem]:
    """The stored problems of an upload (``[line, field, message]`` each), for the page."""
    shown = []
    for line, column, message in rows:
        text = str(message)
        number = line if isinstance(line, int) else None
        shown.append(ShownProblem(number, str(column or ""), text, solved_by_gold_mapping(text)))
    return shown


@dataclass
class PreviewRow:
    """One of the first records, as it will be stored (or the problems that keep it out)."""

    line: int | None
    values: dict[str, str]
    problems: list[str]
    cells: list[tuple[str, str, str]] = field(default_factory=list)  # (field, label, value) of the shown fields

    @property
    def gold_mapping(self) -> bool:
        """Whether the value mapping of the gold column can solve one of the row's problems."""
        return any(solved_by_gold_mapping(problem) for problem in self.problems)


@dataclass
class Preview:
    """What the page shows before a dry run: the format, the mapping, the first rows."""

    format: str
    mappable: bool
    columns: list[ColumnChoice] = field(default_factory=list)
    rows: list[PreviewRow] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the file cannot be read at all
    shown_fields: list[tuple[str, str]] = field(default_factory=list)


def _first_lines(path: Path, limit: int) -> Iterator[str]:
    with path.open("rb") as handle:
        yield from itertools.islice(TextLines(handle), limit)


def detected_format(upload: PairUpload) -> str:
    """The upload's format: the one chosen, or the one its first line shows.

    Raises ``ImportRefused`` where the importer refuses to guess (an STS-B file has no header:
    its format must be chosen, as ``import_pairs`` asks for ``--format stsb``), so the page never
    says "recognised: stsb" above a preview that the same file's import refuses.
    """
    if upload.format != "auto":
        return upload.format
    start = "".join(itertools.islice((line for line in _first_lines(file_path(upload), 50)), 50))
    return detect_format(start.lstrip("\n\r"), upload.filename)


def file_columns(upload: PairUpload, format_name: str) -> list[str]:
    """The columns (or JSON keys) of the file, in their order."""
    if format_name == "mrpc":
        return list(MRPC_HEADER)
    if format_name == "paws":
        return list(PAWS_HEADER)
    if format_name == "stsb":
        return list(STSB_FIELDS)  # no header: the distributed files' fixed columns
    if format_name == "jsonl":
        keys: dict[str, None] = {}
        for line in _first_lines(file_path(upload), JSONL_KEY_SAMPLE * 2):
            try:
                # Bounded depth: a line nested 1,000 deep raised RecursionError here, on every
                # visit of the upload's page; the preview names it as that line's problem.
                value = loads_bounded(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                keys.update((str(key), None) for key in value)
        return list(keys)
    if format_name in ("csv", "tsv"):
        for line in _first_lines(file_path(upload), 1000):
            if line.strip():
                delimiter = "," if format_name == "csv" else "\t"
                if delimiter == ",":
                    return next(csv.reader(io.StringIO(line)), [])
                return line.rstrip("\r\n").split("\t")
    return []


def column_choices(upload: PairUpload, format_name: str) -> list[ColumnChoice]:
    """Each column with the field it gives under the upload's mapping (or its name)."""
    mapping = upload.column_map if format_name in MAPPABLE_FORMATS else None
    if format_name == "mrpc":
        fixed = {"Quality": f.GOLD_LABEL, "#1 ID": f.EXTERNAL_ID, "#2 ID": f.EXTERNAL_ID}
        fixed.update({"#1 String": f.SOURCE, "#2 String": f.HYPOTHESIS})
    elif format_name == "paws":
        fixed = {"id": f.EXTERNAL_ID, "sentence1": f.SOURCE, "sentence2": f.HYPOTHESIS, "label": f.GOLD_LABEL}
    elif format_name == "stsb":
        fixed = {name: f.EXTERNAL_ID for name in STSB_FIELDS[:4]}  # the id joins genre, file, year and id
        fixed.update({"score": f.GOLD_SCORE, "sentence1": f.SOURCE, "sentence2": f.HYPOTHESIS})
    else:
        fixed = {}
    choices = []
    for column in file_columns(upload, format_name):
        if fixed:
            chosen = fixed.get(column, "")
        else:
            try:
                chosen = mapped_name(column, mapping) or ""
            except ImportOptionError:
                chosen = ""
        choices.append(ColumnChoice(column, chosen, FIELD_LABELS.get(chosen, "ignored")))
    return choices


def _message(problem: ImportProblem) -> str:
    return f"{problem.field}: {problem.message}" if problem.field else problem.message


def _shown(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


PREVIEW_FIELDS: tuple[tuple[str, str], ...] = (
    ("external_id", "Id"),
    ("source", "Sentence 1"),
    ("hypothesis", "Sentence 2"),
    ("origin", "Origin"),
    ("system", "System"),
    ("gold_label", "Gold label"),
    ("gold_score", "Gold score"),
    ("training_position", "Training"),
    ("is_check", "Check"),
    ("expected_label", "Expected"),
)


def import_options(upload: PairUpload) -> ImportOptions:
    """The importer's gold options saved with the upload (raises :class:`ImportOptionError`)."""
    saved = upload.gold_options or {}
    text = str(saved.get("gold_map", "")).strip()
    return ImportOptions(
        gold_map=parse_gold_map(text) if text else {},
        gold_constant=saved.get("gold_constant", ""),
        strict=bool(saved.get("strict", False)),
    )


def _first_records(
    items: Iterator[SourceRecord | ImportProblem], wanted: int
) -> Iterator[SourceRecord | ImportProblem]:
    """The items up to the ``wanted``-th record, with the problems named up to it."""
    records = 0
    for item in items:
        yield item
        if not isinstance(item, ImportProblem):
            records += 1
            if records >= wanted:
                return


def _campaign_keys(campaign_id: int, records: list[SourceRecord]) -> tuple[set[str], set[int]]:
    """The ids and training positions of ``records`` that the campaign already has (one query each)."""
    keys = [record_key(record) for record in records]
    ids = {key.external_id for key in keys if key.external_id}
    positions = {key.training_position for key in keys if key.training_position is not None}
    pairs = Pair.objects.filter(campaign_id=campaign_id)
    existing = set(pairs.filter(external_id__in=ids).values_list("external_id", flat=True)) if ids else set()
    taken = (
        {
            position
            for position in pairs.filter(is_training=True, training_position__in=positions).values_list(
                "training_position", flat=True
            )
            if position is not None
        }
        if positions
        else set()
    )
    return existing, taken


def preview(upload: PairUpload, rows: int = PREVIEW_ROWS) -> Preview:
    """The format, the column mapping and the first ``rows`` records as they will be stored."""
    try:
        format_name = detected_format(upload)
    except ImportRefused as refusal:
        return Preview(format=upload.format, mappable=False, problems=[str(p) for p in refusal.problems])
    result = Preview(format=format_name, mappable=format_name in MAPPABLE_FORMATS)
    result.columns = column_choices(upload, format_name)
    result.ignored = [choice.column for choice in result.columns if not choice.field]
    default_origin = upload.origin
    try:
        options = import_options(upload)
        with file_path(upload).open("rb") as handle:
            stream = open_records(
                handle,
                format=upload.format,
                filename=upload.filename,
                column_map=upload.column_map if result.mappable else None,
                options=options,
            )
            default_origin = upload.origin.strip() or stream.default_origin
            # Bounded: a file of bad lines must not be read whole for a preview.
            items = list(itertools.islice(_first_records(stream.items, rows), rows + PREVIEW_ROWS * 5))
            records = [item for item in items if not isinstance(item, ImportProblem)]
            existing_ids, taken_positions = _campaign_keys(upload.campaign_id, records)
            # The import's own checker, so the preview and the dry run never disagree about a row.
            checker = RecordChecker(
                options=options,
                default_origin=default_origin,
                max_length=settings.PARAEVAL_MAX_SENTENCE_LENGTH,
                existing_ids=existing_ids,
                taken_positions=taken_positions,
                campaign_slug=upload.campaign.slug,
            )
            pending: dict[int, list[str]] = {}
            for item in items:
                if isinstance(item, ImportProblem):
                    if item.line is None:
                        result.problems.append(str(item))
                    else:
                        pending.setdefault(item.line, []).append(_message(item))
                    continue
                checked = checker.check(item)
                values = {}
                if checked.draft is not None:
                    stored = asdict(checked.draft)
                    values = {name: _shown(stored.get(name)) for name, _ in PREVIEW_FIELDS if name in stored}
                    values["is_check"] = _shown(checked.draft.is_check)
                messages = pending.pop(item.line, []) if item.line is not None else []
                messages += [_message(problem) for problem in checked.problems]
                if messages:  # a row with a problem is not stored: it shows its problems, not its values
                    values = {}
                result.rows.append(PreviewRow(item.line, values, messages))
            result.rows.extend(PreviewRow(line, {}, messages) for line, messages in pending.items())
            result.rows.sort(key=lambda row: row.line or 0)
    except ImportRefused as refusal:
        result.problems.extend(str(problem) for problem in refusal.problems)
    except ImportOptionError as error:
        result.problems.append(str(error))
    used = {name for row in result.rows for name, value in row.values.items() if value}
    result.shown_fields = [
        (name, label) for name, label in PREVIEW_FIELDS if name in used or name in ("source", "hypothesis")
    ]
    for row in result.rows:
        row.cells = [(name, label, row.values.get(name, "")) for name, label in result.shown_fields]
    return result


def set_mapping(
    upload: PairUpload,
    format_name: str,
    chosen: Mapping[str, str],
    origin: str,
    gold: Mapping[str, object] | None = None,
) -> list[str]:
    """Save the format, the columns' fields, the default origin and the gold options (``gold_map``
    as text, ``gold_constant``, ``strict``); the reasons it cannot (empty: saved).

    Columns not named in ``chosen`` keep their usual reading; a field may be given by one column only.
    """
    errors = []
    gold_options = {
        "gold_map": str((gold or {}).get("gold_map", "")).strip(),
        "gold_constant": str((gold or {}).get("gold_constant", "")),
        "strict": bool((gold or {}).get("strict", False)),
    }
    if gold_options["gold_constant"] not in ("", *GOLD_CONSTANT_CHOICES):
        errors.append(
            f"the constant gold label must be paraphrase or non-paraphrase, not {gold_options['gold_constant']!r}"
        )
    else:
        try:
            ImportOptions(
                gold_map=parse_gold_map(str(gold_options["gold_map"])) if gold_options["gold_map"] else {},
                gold_constant=gold_options["gold_constant"],  # type: ignore[arg-type]
                strict=bool(gold_options["strict"]),
            )
        except ImportOptionError as error:
            errors.append(str(error))
    if format_name not in FORMATS:
        errors.append(f"unknown format {format_name!r}: choose one of {', '.join(FORMATS)}")
    mapping: dict[str, str] = {}
    for column, target in chosen.items():
        if target and target not in FIELD_LABELS:
            errors.append(f"column {column!r}: {target!r} is not a pair field")
        mapping[column.strip()] = target
    taken: dict[str, str] = {}
    for column, target in mapping.items():
        if target and target in taken:
            errors.append(f"columns {taken[target]!r} and {column!r} both give {FIELD_LABELS[target]}; keep one")
        taken.setdefault(target, column)
    if len(origin) > f.MAX_ORIGIN_LENGTH:
        errors.append(f"the origin is longer than {f.MAX_ORIGIN_LENGTH} characters")
    if errors:
        return errors
    upload.format = format_name
    upload.column_map = mapping
    upload.origin = origin.strip()
    upload.gold_options = gold_options
    if upload.state in (UploadState.CHECKED, UploadState.REFUSED, UploadState.FAILED):
        upload.state = UploadState.UPLOADED
    upload.save(update_fields=["format", "column_map", "origin", "gold_options", "state", "updated_at"])
    return []


# --- progress -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    """How far the running dry run or import has read the file."""

    phase: str  # "", "check" or "import"
    read: int
    total: int
    finished: bool = False
    age_seconds: float = 0.0  # since the progress was last written

    @property
    def percent(self) -> int:
        if self.finished:
            return 100
        return min(99, int(100 * self.read / self.total)) if self.total else 0


def write_progress(upload: PairUpload, progress: Progress) -> None:
    """Replace the progress file at once (readers never see half of it)."""
    target = progress_path(upload)
    temporary = target.with_suffix(f".{os.getpid()}.tmp")
    data = asdict(progress)
    del data["age_seconds"]  # the file's own time says it
    temporary.write_text(json.dumps(data))
    os.replace(temporary, target)


RUNNING_PHASES: dict[str, str] = {UploadState.CHECK_QUEUED: CHECK, UploadState.IMPORT_QUEUED: IMPORT}


def read_progress(upload: PairUpload) -> Progress:
    """The progress of the upload's own run: what its task last wrote, or nothing read yet.

    A progress left by another run (the dry run's, read while the import waits for a worker) is
    not this run's: the page would show the dry run's figures as the import's.
    """
    running = RUNNING_PHASES.get(upload.state)
    try:
        path = progress_path(upload)
        data = json.loads(path.read_text())
        age = max(0.0, time.time() - path.stat().st_mtime)
        found = Progress(str(data["phase"]), int(data["read"]), int(data["total"]), bool(data["finished"]), age)
    except (OSError, ValueError, KeyError, TypeError):
        return Progress(running or "", 0, upload.size)
    if running is not None and (found.phase != running or found.finished):
        return Progress(running, 0, upload.size, age_seconds=age)
    return found


class _CountingFile:
    """A binary file read line by line, counting the bytes and reporting them now and then."""

    def __init__(self, handle: IO[bytes], name: str, report: Callable[[int], None]) -> None:
        self._handle = handle
        self.name = name
        self._report = report

    def __iter__(self) -> Iterator[bytes]:
        read = 0
        last = time.monotonic()
        for line in self._handle:
            read += len(line)
            now = time.monotonic()
            if now - last >= PROGRESS_INTERVAL_SECONDS:
                last = now
                self._report(read)
            yield line
        self._report(read)


# --- the task -----------------------------------------------------------------------------


def queue(upload: PairUpload, mode: str) -> None:
    """Mark the upload queued for a dry run or an import and send the task once this commits."""
    if mode not in (CHECK, IMPORT):
        raise ValueError(f"mode must be {CHECK!r} or {IMPORT!r}")
    upload.state = UploadState.CHECK_QUEUED if mode == CHECK else UploadState.IMPORT_QUEUED
    upload.error = ""
    upload.save(update_fields=["state", "error", "updated_at"])
    write_progress(upload, Progress(mode, 0, upload.size))
    upload_id = upload.pk
    transaction.on_commit(lambda: _send(upload_id, mode))


def _send(upload_id: int, mode: str) -> None:
    from paraeval import broker

    result = broker.send([broker.TaskMessage(UPLOAD_TASK, (upload_id, mode), broker.INTERACTIVE_QUEUE)])
    if result.not_sent:  # the broker is down: say so on the page rather than wait forever
        logger.warning("cannot queue upload %s: %s", upload_id, result.error)
        PairUpload.objects.filter(pk=upload_id).update(
            state=UploadState.FAILED, error=f"The task queue is unreachable ({result.error}); try again later."
        )


def discard(upload: PairUpload) -> None:
    """Delete the uploaded file and its progress (nothing was imported from it)."""
    file_path(upload).unlink(missing_ok=True)
    progress_path(upload).unlink(missing_ok=True)
    upload.state = UploadState.DISCARDED
    upload.save(update_fields=["state", "updated_at"])


def _problem_rows(refusal: ImportRefused) -> list[list[object]]:
    return [[problem.line, problem.field or "", problem.message] for problem in refusal.problems]


def run_upload(upload_id: int, mode: str) -> str:
    """Run the dry run (``check``) or the import (``import``) of an upload; its new state.

    Idempotent: the upload's row is locked and its state read in the transaction that imports
    and records the outcome, so a second delivery finds the state moved on and does nothing.
    """
    expected = UploadState.CHECK_QUEUED if mode == CHECK else UploadState.IMPORT_QUEUED
    with transaction.atomic():
        upload = PairUpload.objects.select_for_update().filter(pk=upload_id).first()
        if upload is None or upload.state != expected:
            return "gone" if upload is None else upload.state
        campaign = Campaign.objects.get(pk=upload.campaign_id)

        def report(read: int) -> None:
            write_progress(upload, Progress(mode, read, upload.size))

        upload.problems, upload.problem_count, upload.report = [], 0, None
        try:
            options = import_options(upload)
            with file_path(upload).open("rb") as handle:
                counted = _CountingFile(handle, upload.filename, report)
                result = import_file(
                    campaign,
                    cast(IO[bytes], counted),
                    format=upload.format,
                    origin=upload.origin,
                    dry_run=mode == CHECK,
                    column_map=(upload.column_map or None),
                    options=options,
                )
        except ImportRefused as refusal:
            upload.state = UploadState.REFUSED
            upload.problems = _problem_rows(refusal)
            upload.problem_count = refusal.count
        except ImportOptionError as error:
            upload.state = UploadState.REFUSED
            upload.problems = [[None, "", str(error)]]
            upload.problem_count = 1
        except OSError as error:
            upload.state = UploadState.FAILED
            upload.error = f"cannot read the uploaded file: {error.strerror or error}"
        else:
            upload.state = UploadState.CHECKED if mode == CHECK else UploadState.IMPORTED
            upload.report = UploadReport.of(mode, result).as_json()
            if mode == CHECK:
                upload.checked_map = checked_map(upload)
        upload.save()
        # Written before the commit: once the new state shows, nothing of this run is left to
        # write, so a run queued right after it never has its progress overwritten by this one's.
        write_progress(upload, Progress(mode, upload.size, upload.size, finished=True))
    if upload.state == UploadState.IMPORTED:
        file_path(upload).unlink(missing_ok=True)  # the pairs are stored: the file is not needed
    return upload.state


def checked_map(upload: PairUpload) -> dict[str, object]:
    """What a dry run checked: the format, the mapping, the origin and the gold options."""
    return {
        "format": upload.format,
        "column_map": upload.column_map,
        "origin": upload.origin,
        "gold_options": upload.gold_options,
    }


GOLD_LABEL_NAMES = ("paraphrase", "not paraphrase", "none")


@dataclass(frozen=True)
class UploadReport:
    """The summary of a dry run (``mode`` check) or an import, stored as JSON on the upload.

    ``gold_labels`` counts the pairs by gold label ("paraphrase", "not paraphrase", "none").
    """

    mode: str
    pairs: int
    format: str
    training: int = 0
    checks: int = 0
    systems: dict[str, int] = field(default_factory=dict)
    gold_labels: dict[str, int] = field(default_factory=dict)
    gold_scores: int = 0
    warnings: list[str] = field(default_factory=list)
    ignored_columns: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, mode: str, result: ImportReport) -> UploadReport:
        """The summary of the importer's result for a run in ``mode``."""
        gold = {
            "paraphrase": result.gold_paraphrases,
            "not paraphrase": result.gold_non_paraphrases,
            "none": result.created - result.gold_paraphrases - result.gold_non_paraphrases,
        }
        return cls(
            mode=mode,
            pairs=result.created,
            format=result.format,
            training=result.training,
            checks=result.checks,
            systems=dict(result.systems),
            gold_labels=gold,
            gold_scores=result.gold_scores,
            warnings=list(result.warnings),
            ignored_columns=list(result.ignored_columns),
            notes=list(result.notes),
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UploadReport:
        """Read back what :meth:`as_json` stored (a key missing from an older row: its default)."""
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)

    def as_json(self) -> dict[str, Any]:
        """The row's JSON: the dataclass's fields, as the API has always shown them."""
        return asdict(self)

    def lines(self) -> list[str]:
        """The summary, one fact a line."""
        verb = "Would import" if self.mode == CHECK else "Imported"
        systems = ", ".join(f"{name} ({count:,})" for name, count in sorted(self.systems.items()))
        gold = ", ".join(f"{name} {self.gold_labels.get(name, 0):,}" for name in GOLD_LABEL_NAMES)
        lines = [
            f"{verb} {self.pairs:,} pair{'s' if self.pairs != 1 else ''} ({self.format}).",
            f"Training pairs: {self.training:,}",
            f"Check pairs: {self.checks:,}",
            f"Systems: {systems or 'none named'}",
            f"Gold labels: {gold}",
            f"Ignored columns: {', '.join(self.ignored_columns) if self.ignored_columns else 'none'}",
        ]
        if self.gold_scores:
            lines.append(f"Graded gold scores: {self.gold_scores:,}")
        lines.extend(f"Warning: {warning}" for warning in self.warnings)
        lines.extend(f"Note: {note}" for note in self.notes)
        return lines
