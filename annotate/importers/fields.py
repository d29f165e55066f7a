"""The canonical pair fields of an import, their accepted names, and how values are read.

Pure Python: no database access, so every rule here is tested without Django's ORM.
"""

from __future__ import annotations

import math
import re

from annotate.labels import LABEL_DISPLAY, Label

SOURCE = "source"
HYPOTHESIS = "hypothesis"
EXTERNAL_ID = "external_id"
ORIGIN = "origin"
GOLD_LABEL = "gold_label"
GOLD_SCORE = "gold_score"
TRAINING_POSITION = "training_position"
EXPECTED_LABEL = "expected_label"
EXPLANATION = "explanation"
SYSTEM = "system"
CHECK = "check"  # an attention check: expected_label is the answer a careful judge gives

CANONICAL_FIELDS: tuple[str, ...] = (
    SOURCE,
    HYPOTHESIS,
    EXTERNAL_ID,
    ORIGIN,
    GOLD_LABEL,
    GOLD_SCORE,
    TRAINING_POSITION,
    EXPECTED_LABEL,
    EXPLANATION,
    SYSTEM,
    CHECK,
)
REQUIRED_FIELDS: tuple[str, ...] = (SOURCE, HYPOTHESIS)

# Other names accepted for a canonical field (GLUE / PAWS style columns, short names).
ALIASES: dict[str, str] = {
    "id": EXTERNAL_ID,
    "label": GOLD_LABEL,
    "sentence1": SOURCE,
    "sentence2": HYPOTHESIS,
    "is_check": CHECK,
}

# Limits of the database columns (annotate.models.Pair).
MAX_EXTERNAL_ID_LENGTH = 200
MAX_ORIGIN_LENGTH = 100
MAX_SYSTEM_LENGTH = 100
MAX_TRAINING_POSITION = 32767


def canonical_name(name: str) -> str | None:
    """The canonical field a column or key name stands for, or None for an unknown one."""
    key = name.strip().lower()
    if key in CANONICAL_FIELDS:
        return key
    return ALIASES.get(key)


def _words(text: str) -> str:
    """Lower-case with runs of spaces, underscores and hyphens made one space."""
    return re.sub(r"[\s_\-]+", " ", text.lower()).strip()


_GOLD_TRUE = {"1", "true", "t", "yes", "y", "paraphrase", "equivalent", "positive"}
_GOLD_FALSE = {
    "0",
    "false",
    "f",
    "no",
    "n",
    "not paraphrase",
    "non paraphrase",
    "nonparaphrase",
    "not equivalent",
    "negative",
}
GOLD_LABEL_HELP = "use 1/0, true/false, yes/no or paraphrase/not paraphrase"


class InvalidValue(ValueError):
    """A value that cannot be read; the message says what is expected."""


def is_blank(value: object) -> bool:
    """Whether an optional field is absent: None or a string of blanks."""
    return value is None or (isinstance(value, str) and not value.strip())


def parse_gold_label(value: object) -> bool | None:
    """Read a binary gold label: paraphrase (True), not (False) or absent (None)."""
    if is_blank(value):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            text = _words(value)
            if text in _GOLD_TRUE:
                return True
            if text in _GOLD_FALSE:
                return False
        else:
            if number in (0.0, 1.0):
                return bool(number)
    raise InvalidValue(f"{value!r} is not a gold label ({GOLD_LABEL_HELP})")


_YES = {"1", "true", "yes", "y", "check"}
_NO = {"0", "false", "no", "n"}


def parse_check(value: object) -> bool:
    """Read the check marker of a pair: true (1, true, yes) or false / absent."""
    if is_blank(value):
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _YES | _NO:
        return value.strip().lower() in _YES
    raise InvalidValue(f"{value!r} is not true or false (1, true, yes / 0, false, no)")


def parse_gold_score(value: object) -> float | None:
    """Read a graded gold score (any finite number, e.g. STS 0-5), or None when absent."""
    if is_blank(value):
        return None
    if isinstance(value, bool):
        raise InvalidValue(f"{value!r} is not a number")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise InvalidValue(f"{value!r} is not a number") from None
    else:
        raise InvalidValue(f"{value!r} is not a number")
    if not math.isfinite(number):
        raise InvalidValue(f"{value!r} is not a finite number")
    return number


def parse_training_position(value: object) -> int | None:
    """Read the position of a training pair in the training trial (1, 2, ...), or None."""
    if is_blank(value):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise InvalidValue(f"{value!r} is not a whole number from 1")
    if not 1 <= number <= MAX_TRAINING_POSITION:
        raise InvalidValue(f"{number} is not a position from 1 to {MAX_TRAINING_POSITION}")
    return number


_EXPECTED_LABELS: dict[str, Label] = {}
for _label in Label:
    _EXPECTED_LABELS[_words(_label.value)] = _label
    _EXPECTED_LABELS[_words(LABEL_DISPLAY[_label])] = _label
    _EXPECTED_LABELS[_words(LABEL_DISPLAY[_label].replace("'", ""))] = _label
EXPECTED_LABEL_HELP = ", ".join(label.value for label in Label)


def parse_expected_label(value: object) -> Label | None:
    """Read the expected answer of a training pair: a label value or its button text."""
    if is_blank(value):
        return None
    if isinstance(value, str):
        label = _EXPECTED_LABELS.get(_words(value))
        if label is not None:
            return label
    raise InvalidValue(f"{value!r} is not one of {EXPECTED_LABEL_HELP}")


def text_problem(value: str) -> str | None:
    """Why a string cannot be stored as text (PostgreSQL refuses NUL), or None when it can."""
    if "\x00" in value:
        return "contains a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "contains an unpaired surrogate (not valid Unicode text)"
    return None
