"""How an import reads gold labels: one option set shared by the command, the API and the upload page.

A corpus often keeps its human label under a name the importer does not know (STS-H's
``Human Annotation - Consensus``, coded 1 / 0 / -100), or has none because every pair is a
paraphrase by construction (PARAPHRASUS' TRUE). :class:`ImportOptions` says which column holds the
gold, how its values read (a mapping to paraphrase / non-paraphrase / unlabelled / a graded
score), or gives one gold label to the whole file. A column that looks like a label and is
ignored is never dropped in silence: it becomes a warning, and with ``strict`` a refusal.

Pure Python: no database access.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from annotate.importers import fields as f
from annotate.importers.problems import ImportProblem
from annotate.importers.validation import SourceRecord

GoldAs = Literal["label", "score"]
GoldConstant = Literal["", "paraphrase", "non-paraphrase"]
GOLD_AS_CHOICES: tuple[str, ...] = ("label", "score")
GOLD_CONSTANT_CHOICES: tuple[str, ...] = ("paraphrase", "non-paraphrase")

PARAPHRASE = "paraphrase"
NON_PARAPHRASE = "non-paraphrase"
UNLABELLED = "unlabelled"
# A mapping's target: a binary label, "unlabelled" (the pair keeps no gold) or a graded score.
GoldTarget = str | float

_TARGET_WORDS = {
    "paraphrase": PARAPHRASE,
    "non paraphrase": NON_PARAPHRASE,
    "not paraphrase": NON_PARAPHRASE,
    "nonparaphrase": NON_PARAPHRASE,
    "unlabelled": UNLABELLED,
    "unlabeled": UNLABELLED,
    "none": UNLABELLED,
}
GOLD_MAP_HELP = (
    "each value maps to paraphrase, non-paraphrase, unlabelled or a number (a graded score), "
    "e.g. 1=paraphrase,0=non-paraphrase,-100=unlabelled"
)

# Words that make an ignored column look like a human label (compared with the column name's words).
_LABEL_WORDS = frozenset(
    {
        "label",
        "labels",
        "gold",
        "annotation",
        "annotations",
        "consensus",
        "quality",
        "score",
        "class",
        "judgement",
        "judgment",
        "rating",
        "human",
        "paraphrase",
        "equivalent",
        "equivalence",
        "similarity",
        "target",
    }
)
# A metric's score column of a scores export (``score[lev]``): not a human label.
_METRIC_SCORE = re.compile(r"^\s*score\s*\[.*\]\s*$", re.IGNORECASE)


class ImportOptionError(ValueError):
    """Options of an import that do not fit together (a programming or command-line error,
    not a problem of the file)."""


def _words(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.lower()).strip()


def value_key(value: object) -> str:
    """The form under which a cell is looked up in a gold mapping: numbers compare as numbers
    (``1``, ``1.0`` and ``1.00`` are one key), text compares trimmed and case-insensitively."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        number = float(value)
        return repr(number) if math.isfinite(number) else str(value)
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text.lower()
    return repr(number) if math.isfinite(number) else text.lower()


def parse_target(target: object) -> GoldTarget:
    """Read a mapping's target: paraphrase, non-paraphrase, unlabelled or a finite number."""
    if isinstance(target, bool):
        raise ImportOptionError(f"{target!r} is not a gold target; {GOLD_MAP_HELP}")
    if isinstance(target, int | float):
        if not math.isfinite(float(target)):
            raise ImportOptionError(f"{target!r} is not a finite score")
        return float(target)
    if isinstance(target, str):
        word = _TARGET_WORDS.get(_words(target))
        if word is not None:
            return word
        try:
            number = float(target.strip())
        except ValueError:
            pass
        else:
            if math.isfinite(number):
                return number
    raise ImportOptionError(f"{target!r} is not a gold target; {GOLD_MAP_HELP}")


def parse_gold_map(text: str) -> dict[str, GoldTarget]:
    """Read a mapping written on the command line: ``VALUE=TARGET`` pairs separated by commas."""
    mapping: dict[str, GoldTarget] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        value, sep, target = part.rpartition("=")
        if not sep or not value.strip():
            raise ImportOptionError(f"{part.strip()!r} is not VALUE=TARGET; {GOLD_MAP_HELP}")
        mapping[value.strip()] = parse_target(target)
    if not mapping:
        raise ImportOptionError(f"the gold mapping is empty; {GOLD_MAP_HELP}")
    return mapping


def looks_like_label(column: str) -> bool:
    """Whether a column's name suggests a human label or score (``Human Annotation - Consensus``,
    ``Quality``, ``gold``, ``score``), not a metric's score column (``score[lev]``)."""
    if _METRIC_SCORE.match(column):
        return False
    words = set(re.split(r"[^a-z0-9]+", column.lower()))
    return bool(words & _LABEL_WORDS)


@dataclass(frozen=True)
class ImportOptions:
    """How an import finds gold labels, and what it does with a label-like column it ignores.

    - ``gold_column``: the column (or JSON key) that holds the gold, whatever its name; matched
      trimmed and case-insensitively.
    - ``gold_as``: ``label`` (binary: 1/0, yes/no, paraphrase/not paraphrase) or ``score``
      (graded, any number) for the gold column's values when no ``gold_map`` is given.
    - ``gold_map``: the gold column's values (or, without ``gold_column``, the file's own label
      column's) mapped to ``paraphrase``, ``non-paraphrase``, ``unlabelled`` or a number (a
      graded score). Numbers match as numbers (``1`` matches ``1.0``). A value the mapping does
      not name refuses the file: nothing is guessed.
    - ``gold_constant``: ``paraphrase`` or ``non-paraphrase`` for every pair of the file (a file
      of paraphrases by construction); a row that carries its own label then refuses the file.
    - ``ignore_columns``: columns you have seen and mean to ignore: no warning for them.
    - ``strict``: refuse the file (nothing stored) instead of warning when a label-like column
      is ignored.
    """

    gold_column: str = ""
    gold_as: GoldAs = "label"
    gold_map: Mapping[str, GoldTarget] = field(default_factory=dict)
    gold_constant: GoldConstant = ""
    ignore_columns: tuple[str, ...] = ()
    strict: bool = False

    def __post_init__(self) -> None:
        if self.gold_as not in GOLD_AS_CHOICES:
            raise ImportOptionError(f"gold_as must be label or score, not {self.gold_as!r}")
        if self.gold_constant not in ("", *GOLD_CONSTANT_CHOICES):
            raise ImportOptionError(
                f"the constant gold label must be paraphrase or non-paraphrase, not {self.gold_constant!r}"
            )
        if self.gold_constant and (self.gold_column or self.gold_map):
            raise ImportOptionError(
                "a constant gold label and a gold column (or mapping) exclude each other: choose one"
            )
        if self.gold_map and self.gold_as != "label":
            raise ImportOptionError("a gold mapping gives labels or scores itself: leave gold_as at label")
        # Keys normalised once; targets checked (the API passes them as JSON values).
        normalised = {value_key(value): parse_target(target) for value, target in self.gold_map.items()}
        object.__setattr__(self, "_lookup", normalised)

    @property
    def lookup(self) -> dict[str, GoldTarget]:
        """The mapping with its keys in :func:`value_key` form."""
        return dict(getattr(self, "_lookup", {}))

    def gold_field(self) -> str:
        """The canonical field the gold column is read into (raw, before the mapping)."""
        return f.GOLD_SCORE if self.gold_as == "score" and not self.gold_map else f.GOLD_LABEL

    def is_gold_column(self, name: str) -> bool:
        """Whether a column (or JSON key) is the one ``gold_column`` names."""
        return bool(self.gold_column) and name.strip().lower() == self.gold_column.strip().lower()

    def describe_map(self) -> str:
        """The mapping in the user's words, for messages."""
        return ", ".join(f"{value} -> {target}" for value, target in self.gold_map.items())

    def apply(self, record: SourceRecord) -> tuple[SourceRecord, list[ImportProblem]]:
        """The record with the mapping or the constant label applied, and the problems found."""
        if self.gold_constant:
            if not f.is_blank(record.values.get(f.GOLD_LABEL)) or not f.is_blank(record.values.get(f.GOLD_SCORE)):
                name = record.name(f.GOLD_LABEL if f.GOLD_LABEL in record.values else f.GOLD_SCORE)
                return record, [
                    ImportProblem(
                        record.line,
                        name,
                        f"{name} gives this pair its own gold, and the whole file was given the constant gold "
                        f"label {self.gold_constant}: choose one",
                    )
                ]
            values = dict(record.values)
            values[f.GOLD_LABEL] = self.gold_constant == PARAPHRASE
            return SourceRecord(record.line, values, record.names), []
        if not self.gold_map:
            return record, []
        raw = record.values.get(f.GOLD_LABEL)
        if f.is_blank(raw):
            return record, []
        target = self.lookup.get(value_key(raw))
        name = record.name(f.GOLD_LABEL)
        if target is None:
            return record, [
                ImportProblem(record.line, name, f"{name} {raw!r} is not in the gold mapping ({self.describe_map()})")
            ]
        values = dict(record.values)
        del values[f.GOLD_LABEL]
        names = dict(record.names)
        if target in (PARAPHRASE, NON_PARAPHRASE):
            values[f.GOLD_LABEL] = target == PARAPHRASE
        elif isinstance(target, float):
            if not f.is_blank(values.get(f.GOLD_SCORE)):
                return record, [
                    ImportProblem(
                        record.line,
                        name,
                        f"{name} maps to a graded score and the row has its own {record.name(f.GOLD_SCORE)}; keep one",
                    )
                ]
            values[f.GOLD_SCORE] = target
            names[f.GOLD_SCORE] = name
        return SourceRecord(record.line, values, names), []

    def ignored_label_columns(self, ignored: Iterable[str]) -> list[str]:
        """The ignored columns that look like labels and were not named in ``ignore_columns``."""
        accepted = {name.strip().lower() for name in self.ignore_columns}
        return [name for name in ignored if looks_like_label(name) and name.strip().lower() not in accepted]

    def warnings(self, ignored: Iterable[str]) -> list[str]:
        """One warning for each ignored column that looks like a label."""
        return [
            f"column {name!r} looks like a gold label and is ignored: name it as the gold column "
            "(with a value mapping if its values are codes) to use it, or list it among the columns "
            "to ignore to silence this warning"
            for name in self.ignored_label_columns(ignored)
        ]


NO_OPTIONS = ImportOptions()
