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


class _RecordCheck:
    """One record's fields checked one family at a time, its problems collected in order."""

    def __init__(self, record: SourceRecord) -> None:
        self.record = record
        self.problems: list[ImportProblem] = []

    def problem(self, canonical: str | None, message: str) -> None:
        name = self.record.name(canonical) if canonical else None
        self.problems.append(ImportProblem(self.record.line, name, message))

    def required_texts(self, max_length: int) -> dict[str, str]:
        """The source and hypothesis, stored exactly as given (no strip: exports re-import to the same text)."""
        texts: dict[str, str] = {}
        for canonical in f.REQUIRED_FIELDS:
            name = self.record.name(canonical)
            value = self.record.values.get(canonical)
            if value is None:
                self.problem(canonical, f"{name} is missing")
            elif not isinstance(value, str):
                self.problem(canonical, f"{name} must be text")
            elif not value.strip():
                self.problem(canonical, f"{name} is empty")
            elif len(value) > max_length:
                self.problem(canonical, f"{name} is {len(value):,} characters long; the limit is {max_length:,}")
            elif (why := f.text_problem(value)) is not None:
                self.problem(canonical, f"{name} {why}")
            else:
                texts[canonical] = value
        return texts

    def optional_texts(self) -> dict[str, str]:
        """The origin and system (stripped) and the explanation (as given), when present."""
        texts: dict[str, str] = {}
        for canonical, limit in (
            (f.ORIGIN, f.MAX_ORIGIN_LENGTH),
            (f.SYSTEM, f.MAX_SYSTEM_LENGTH),
            (f.EXPLANATION, None),
        ):
            value = self.record.values.get(canonical)
            if f.is_blank(value):
                continue
            name = self.record.name(canonical)
            if not isinstance(value, str):
                self.problem(canonical, f"{name} must be text")
            elif limit is not None and len(value.strip()) > limit:
                self.problem(canonical, f"{name} is {len(value.strip()):,} characters long; the limit is {limit:,}")
            elif (why := f.text_problem(value)) is not None:
                self.problem(canonical, f"{name} {why}")
            else:
                texts[canonical] = value if canonical == f.EXPLANATION else value.strip()
        return texts

    def external_id(self) -> str:
        """The record's id as text, "" when absent or refused."""
        raw_id = self.record.values.get(f.EXTERNAL_ID)
        if f.is_blank(raw_id):
            return ""
        name = self.record.name(f.EXTERNAL_ID)
        try:
            external_id = _id_text(raw_id)
        except f.InvalidValue as error:
            self.problem(f.EXTERNAL_ID, f"{name} {error}")
            return ""
        if len(external_id) > f.MAX_EXTERNAL_ID_LENGTH:
            self.problem(f.EXTERNAL_ID, f"{name} is {len(external_id):,} characters long; the limit is 200")
            return ""
        if (why := f.text_problem(external_id)) is not None:
            self.problem(f.EXTERNAL_ID, f"{name} {why}")
            return ""
        return external_id

    def read(self, canonical: str, parse: Callable[[object], _T | None]) -> _T | None:
        """One field parsed by ``parse``; None (and a problem) when it refuses the value."""
        try:
            return parse(self.record.values.get(canonical))
        except f.InvalidValue as error:
            self.problem(canonical, f"{self.record.name(canonical)} {error}")
            return None

    def role(self, is_check: bool) -> None:
        """A check pair needs its expected answer; a training pair its answer and explanation;
        any other pair neither."""
        name, given = self.record.name, self.record.values.get
        training_given = not f.is_blank(given(f.TRAINING_POSITION))
        if is_check:
            if training_given:
                self.problem(f.CHECK, f"a pair is either a check ({name(f.CHECK)}) or a training pair, not both")
            if f.is_blank(given(f.EXPECTED_LABEL)):
                self.problem(
                    f.EXPECTED_LABEL, f"a check pair needs {name(f.EXPECTED_LABEL)} (the answer a careful judge gives)"
                )
        elif training_given:
            if f.is_blank(given(f.EXPECTED_LABEL)):
                self.problem(
                    f.EXPECTED_LABEL, f"a training pair needs {name(f.EXPECTED_LABEL)} (the answer shown after it)"
                )
            if f.is_blank(given(f.EXPLANATION)):
                self.problem(f.EXPLANATION, f"a training pair needs {name(f.EXPLANATION)} (shown after the answer)")
        else:
            for canonical in (f.EXPECTED_LABEL, f.EXPLANATION):
                if not f.is_blank(given(canonical)):
                    self.problem(
                        canonical,
                        f"{name(canonical)} is only for training pairs, and {name(f.TRAINING_POSITION)} is empty",
                    )


def clean_record(
    record: SourceRecord, *, default_origin: str, max_length: int
) -> tuple[PairDraft | None, list[ImportProblem]]:
    """Validate one record; return its draft (None when it has problems) and its problems."""
    check = _RecordCheck(record)
    texts = check.required_texts(max_length)
    optional_texts = check.optional_texts()
    external_id = check.external_id()
    gold_label = check.read(f.GOLD_LABEL, f.parse_gold_label)
    gold_score = check.read(f.GOLD_SCORE, f.parse_gold_score)
    position = check.read(f.TRAINING_POSITION, f.parse_training_position)
    expected = check.read(f.EXPECTED_LABEL, f.parse_expected_label)
    is_check = bool(check.read(f.CHECK, f.parse_check))
    check.role(is_check)
    if check.problems:
        return None, check.problems
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
            explanation=optional_texts.get(f.EXPLANATION, ""),
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
