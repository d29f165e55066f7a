"""The five answers of the campaign and how they map to the binary and ordinal scales.

Pure Python (no Django import), shared by the volunteer flow, the analyses and the exports.
"""

from __future__ import annotations

from enum import StrEnum


class Label(StrEnum):
    """The five answers, in the order the buttons show them (keys 1-5)."""

    VERY_DIFFERENT = "very_different"
    SLIGHTLY_SIMILAR = "slightly_similar"
    MOSTLY_SIMILAR = "mostly_similar"
    SAME_MEANING = "same_meaning"
    DONT_KNOW = "dont_know"

    @property
    def display(self) -> str:
        return LABEL_DISPLAY[self]


LABEL_ORDER: tuple[Label, ...] = (
    Label.VERY_DIFFERENT,
    Label.SLIGHTLY_SIMILAR,
    Label.MOSTLY_SIMILAR,
    Label.SAME_MEANING,
    Label.DONT_KNOW,
)

LABEL_DISPLAY: dict[Label, str] = {
    Label.VERY_DIFFERENT: "Very different",
    Label.SLIGHTLY_SIMILAR: "Slightly similar",
    Label.MOSTLY_SIMILAR: "Mostly similar",
    Label.SAME_MEANING: "Same meaning",
    Label.DONT_KNOW: "Don't know",
}

# Ordinal 4-point scale used for correlations and Krippendorff's alpha; Don't know is missing.
ORDINAL: dict[Label, int] = {
    Label.VERY_DIFFERENT: 1,
    Label.SLIGHTLY_SIMILAR: 2,
    Label.MOSTLY_SIMILAR: 3,
    Label.SAME_MEANING: 4,
}


def ordinal(label: str) -> int | None:
    """Return the 1-4 ordinal value of a label, or None for Don't know."""
    return ORDINAL.get(Label(label))


def is_paraphrase(label: str) -> bool | None:
    """Binary reading of the paper: Mostly similar / Same meaning are paraphrases,
    Very different / Slightly similar are not, Don't know is left out (None)."""
    value = ordinal(label)
    if value is None:
        return None
    return value >= 3


class EnglishLevel(StrEnum):
    """Self-assessed English level of a volunteer (paper, appendix A.2)."""

    POOR = "poor"
    GOOD = "good"
    ADVANCED = "advanced"
    NATIVE = "native"


ENGLISH_LEVEL_ORDER: tuple[EnglishLevel, ...] = (
    EnglishLevel.POOR,
    EnglishLevel.GOOD,
    EnglishLevel.ADVANCED,
    EnglishLevel.NATIVE,
)
