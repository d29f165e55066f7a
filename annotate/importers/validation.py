"""Validation: from canonical records to pair drafts, collecting every problem.

Three checks, all pure Python, each made record by record as the file is read: each record on
its own (:func:`clean_record`), against the records before it (:class:`DuplicateTracker`), and
against what the campaign already holds (:func:`campaign_problems`, given the existing ids and
training positions).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from annotate.importers import fields as f
from annotate.importers.problems import ImportProblem

_T = TypeVar("_T")


@dataclass(frozen=True)
class SourceRecord:
    """One record as read from a file, under canonical field names.

    ``names`` keeps the name each field had in the file (``#1 String``, ``sentence1``, ``id``)
    so that a message speaks the user's language.
    """

    line: int | None
    values: Mapping[str, object]
    names: Mapping[str, str] = field(default_factory=dict)

    def name(self, canonical: str) -> str:
        return self.names.get(canonical, canonical)


@dataclass(frozen=True)
class PairDraft:
    """A validated pair, ready to be stored."""

    line: int | None
    source: str
    hypothesis: str
    external_id: str = ""
    origin: str = ""
    gold_label: bool | None = None
    gold_score: float | None = None
    training_position: int | None = None
    expected_label: str = ""
    explanation: str = ""
    system: str = ""  # the system that produced the hypothesis (system-level analyses)
    is_check: bool = False  # an attention check (expected_label is required)

    @property
    def is_training(self) -> bool:
        return self.training_position is not None


def canonical_record(line: int | None, mapping: Mapping[object, object]) -> tuple[SourceRecord, list[str], list[str]]:
    """Map a JSON object's keys to canonical fields.

    Returns the record, its unknown keys (to report as ignored) and conflict messages: two
    keys for one field (``label`` and ``gold_label``) with different non-empty values.
    """
    values: dict[str, object] = {}
    names: dict[str, str] = {}
    unknown: list[str] = []
    conflicts: list[str] = []
    for key, value in mapping.items():
        canonical = f.canonical_name(key) if isinstance(key, str) else None
        if canonical is None:
            unknown.append(str(key))
            continue
        if canonical in values:
            previous = values[canonical]
            if f.is_blank(value) or previous == value:
                continue
            if not f.is_blank(previous):
                conflicts.append(f"{names[canonical]} and {key} disagree ({previous!r} and {value!r}); keep one")
                continue
        values[canonical] = value
        names[canonical] = str(key)
    return SourceRecord(line, values, names), unknown, conflicts


def _id_text(value: object) -> str:
    """An id as text: JSON ids may be numbers."""
    if isinstance(value, bool):
        raise f.InvalidValue(f"{value!r} is not an id")
    if isinstance(value, int | str):
        return str(value).strip()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    raise f.InvalidValue(f"{value!r} is not an id (use text or a whole number)")


def clean_record(
    record: SourceRecord, *, default_origin: str, max_length: int
) -> tuple[PairDraft | None, list[ImportProblem]]:
    """Validate one record; return its draft (None when it has problems) and its problems."""
    problems: list[ImportProblem] = []

    def problem(canonical: str | None, message: str) -> None:
        problems.append(ImportProblem(record.line, record.name(canonical) if canonical else None, message))

    texts: dict[str, str] = {}
    for canonical in f.REQUIRED_FIELDS:
        name = record.name(canonical)
        value = record.values.get(canonical)
        if value is None:
            problem(canonical, f"{name} is missing")
        elif not isinstance(value, str):
            problem(canonical, f"{name} must be text")
        elif not value.strip():
            problem(canonical, f"{name} is empty")
        elif len(value) > max_length:
            problem(canonical, f"{name} is {len(value):,} characters long; the limit is {max_length:,}")
        elif (why := f.text_problem(value)) is not None:
            problem(canonical, f"{name} {why}")
        else:
            # Stored exactly as given (no strip): exports re-import to the same text.
            texts[canonical] = value

    optional_texts: dict[str, str] = {}
    for canonical, limit in ((f.ORIGIN, f.MAX_ORIGIN_LENGTH), (f.SYSTEM, f.MAX_SYSTEM_LENGTH), (f.EXPLANATION, None)):
        value = record.values.get(canonical)
        if f.is_blank(value):
            continue
        name = record.name(canonical)
        if not isinstance(value, str):
            problem(canonical, f"{name} must be text")
        elif limit is not None and len(value.strip()) > limit:
            problem(canonical, f"{name} is {len(value.strip()):,} characters long; the limit is {limit:,}")
        elif (why := f.text_problem(value)) is not None:
            problem(canonical, f"{name} {why}")
        else:
            optional_texts[canonical] = value if canonical == f.EXPLANATION else value.strip()

    external_id = ""
    raw_id = record.values.get(f.EXTERNAL_ID)
    if not f.is_blank(raw_id):
        name = record.name(f.EXTERNAL_ID)
        try:
            external_id = _id_text(raw_id)
        except f.InvalidValue as error:
            problem(f.EXTERNAL_ID, f"{name} {error}")
        else:
            if len(external_id) > f.MAX_EXTERNAL_ID_LENGTH:
                problem(f.EXTERNAL_ID, f"{name} is {len(external_id):,} characters long; the limit is 200")
                external_id = ""
            elif (why := f.text_problem(external_id)) is not None:
                problem(f.EXTERNAL_ID, f"{name} {why}")
                external_id = ""

    def read(canonical: str, parse: Callable[[object], _T | None]) -> _T | None:
        try:
            return parse(record.values.get(canonical))
        except f.InvalidValue as error:
            problem(canonical, f"{record.name(canonical)} {error}")
            return None

    gold_label = read(f.GOLD_LABEL, f.parse_gold_label)
    gold_score = read(f.GOLD_SCORE, f.parse_gold_score)
    position = read(f.TRAINING_POSITION, f.parse_training_position)
    expected = read(f.EXPECTED_LABEL, f.parse_expected_label)
    explanation = optional_texts.get(f.EXPLANATION, "")
    training_given = not f.is_blank(record.values.get(f.TRAINING_POSITION))
    is_check = bool(read(f.CHECK, f.parse_check))
    if is_check:
        if training_given:
            problem(f.CHECK, f"a pair is either a check ({record.name(f.CHECK)}) or a training pair, not both")
        if f.is_blank(record.values.get(f.EXPECTED_LABEL)):
            problem(
                f.EXPECTED_LABEL,
                f"a check pair needs {record.name(f.EXPECTED_LABEL)} (the answer a careful judge gives)",
            )
    elif training_given:
        if f.is_blank(record.values.get(f.EXPECTED_LABEL)):
            problem(
                f.EXPECTED_LABEL, f"a training pair needs {record.name(f.EXPECTED_LABEL)} (the answer shown after it)"
            )
        if f.is_blank(record.values.get(f.EXPLANATION)):
            problem(f.EXPLANATION, f"a training pair needs {record.name(f.EXPLANATION)} (shown after the answer)")
    else:
        for canonical in (f.EXPECTED_LABEL, f.EXPLANATION):
            if not f.is_blank(record.values.get(canonical)):
                problem(
                    canonical,
                    f"{record.name(canonical)} is only for training pairs, and "
                    f"{record.name(f.TRAINING_POSITION)} is empty",
                )

    if problems:
        return None, problems
    return (
        PairDraft(
            line=record.line,
            source=texts[f.SOURCE],
            hypothesis=texts[f.HYPOTHESIS],
            external_id=external_id,
            origin=optional_texts.get(f.ORIGIN) or default_origin,
            gold_label=gold_label,
            gold_score=gold_score,
            training_position=position,
            expected_label=expected.value if expected is not None else "",
            explanation=explanation,
            system=optional_texts.get(f.SYSTEM, ""),
            is_check=is_check,
        ),
        [],
    )


@dataclass(frozen=True)
class RecordKey:
    """What must be unique about a record: its id and training position (when readable)."""

    line: int | None
    external_id: str
    training_position: int | None


def record_key(record: SourceRecord) -> RecordKey:
    """The id and training position of a record, even one with other problems, so that a
    duplicate is reported together with them."""
    external_id = ""
    raw_id = record.values.get(f.EXTERNAL_ID)
    if not f.is_blank(raw_id):
        with contextlib.suppress(f.InvalidValue):
            external_id = _id_text(raw_id)
    try:
        position = f.parse_training_position(record.values.get(f.TRAINING_POSITION))
    except f.InvalidValue:
        position = None
    return RecordKey(record.line, external_id, position)


def _where(line: int | None) -> str:
    return f"line {line}" if line is not None else "an earlier record"


class DuplicateTracker:
    """Ids and training positions used twice in the same file, found record by record.

    Holds each id once with its first line: memory grows with the number of ids, not with the
    size of the records.
    """

    def __init__(self) -> None:
        self.first_id: dict[str, int | None] = {}
        self.first_position: dict[int, int | None] = {}

    def check(self, key: RecordKey) -> list[ImportProblem]:
        """The problems of ``key`` against the records seen before it (then remember it)."""
        problems = []
        if key.external_id:
            if key.external_id in self.first_id:
                where = _where(self.first_id[key.external_id])
                problems.append(
                    ImportProblem(key.line, f.EXTERNAL_ID, f"id {key.external_id!r} is used twice (first on {where})")
                )
            else:
                self.first_id[key.external_id] = key.line
        if key.training_position is not None:
            if key.training_position in self.first_position:
                where = _where(self.first_position[key.training_position])
                problems.append(
                    ImportProblem(
                        key.line,
                        f.TRAINING_POSITION,
                        f"training_position {key.training_position} is used twice (first on {where})",
                    )
                )
            else:
                self.first_position[key.training_position] = key.line
        return problems


def duplicate_problems(drafts: Iterable[RecordKey]) -> list[ImportProblem]:
    """Ids and training positions used twice in the same file."""
    tracker = DuplicateTracker()
    return [problem for draft in drafts for problem in tracker.check(draft)]


def campaign_problems(
    drafts: Iterable[RecordKey], *, existing_ids: set[str], taken_positions: set[int], campaign: str
) -> list[ImportProblem]:
    """Ids and training positions that the campaign already has."""
    problems = []
    for draft in drafts:
        if draft.external_id and draft.external_id in existing_ids:
            problems.append(
                ImportProblem(
                    draft.line, f.EXTERNAL_ID, f"id {draft.external_id!r} is already in campaign {campaign!r}"
                )
            )
        if draft.training_position is not None and draft.training_position in taken_positions:
            problems.append(
                ImportProblem(
                    draft.line,
                    f.TRAINING_POSITION,
                    f"training_position {draft.training_position} is already taken in campaign {campaign!r}",
                )
            )
    return problems
