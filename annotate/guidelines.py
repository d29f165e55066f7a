"""The campaign guidelines, as the ParaPLUIE paper gave them to its judges (appendix A.2).

The text and the five examples are copied verbatim from the paper (including its spelling),
so a campaign run with ParaEval shows volunteers what the paper's volunteers saw. The texts are
data (``guideline_texts/<language>.json``); the templates render them, with the word differences
of each example highlighted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from annotate.diff import Segment, highlight
from annotate.labels import Label


@dataclass(frozen=True)
class GuidelineExample:
    """Two sentences, the answer they call for, and why."""

    first: str
    second: str
    label: Label
    explanation: str

    @property
    def dont_know(self) -> bool:
        return self.label is Label.DONT_KNOW


# One JSON file per language in guideline_texts/ (``en.json`` is the paper's text): a language
# is added by adding its file, not by editing code; the text stays reviewable by translators.
TEXTS_DIR = Path(__file__).resolve().parent / "guideline_texts"


@dataclass(frozen=True)
class Guidelines:
    """The guidelines of one language: the introduction and the five examples."""

    language: str
    introduction: str
    examples: tuple[GuidelineExample, ...]


def _load(path: Path) -> Guidelines:
    data = json.loads(path.read_text(encoding="utf-8"))
    examples = tuple(
        GuidelineExample(
            first=item["first"], second=item["second"], label=Label(item["label"]), explanation=item["explanation"]
        )
        for item in data["examples"]
    )
    return Guidelines(language=data["language"], introduction=data["introduction"], examples=examples)


GUIDELINES: dict[str, Guidelines] = {path.stem: _load(path) for path in sorted(TEXTS_DIR.glob("*.json"))}
INTRODUCTIONS: dict[str, str] = {language: entry.introduction for language, entry in GUIDELINES.items()}
EXAMPLES_BY_LANGUAGE: dict[str, tuple[GuidelineExample, ...]] = {
    language: entry.examples for language, entry in GUIDELINES.items()
}
INTRODUCTION = INTRODUCTIONS["en"]
EXAMPLES = EXAMPLES_BY_LANGUAGE["en"]
INTRODUCTION_FR = INTRODUCTIONS["fr"]
EXAMPLES_FR = EXAMPLES_BY_LANGUAGE["fr"]


def introduction(language: str = "en") -> str:
    """The guidelines' text in ``language`` (English when there is none in that language)."""
    return INTRODUCTIONS.get(language, INTRODUCTION)


@dataclass(frozen=True)
class HighlightedExample:
    """An example ready to render: both sentences cut into highlighted segments."""

    example: GuidelineExample
    first: list[Segment]
    second: list[Segment]


@cache
def highlighted_examples(language: str = "en") -> tuple[HighlightedExample, ...]:
    """The five examples with their word differences marked, as the campaign pages show them."""
    result = []
    for example in EXAMPLES_BY_LANGUAGE.get(language, EXAMPLES):
        first, second = highlight(example.first, example.second)
        result.append(HighlightedExample(example, first, second))
    return tuple(result)


__all__ = [
    "EXAMPLES",
    "EXAMPLES_BY_LANGUAGE",
    "EXAMPLES_FR",
    "GUIDELINES",
    "INTRODUCTION",
    "INTRODUCTION_FR",
    "GuidelineExample",
    "Guidelines",
    "HighlightedExample",
    "highlighted_examples",
    "introduction",
]
