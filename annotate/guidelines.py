"""The campaign guidelines, as the ParaPLUIE paper gave them to its judges (appendix A.2).

The text and the five examples are copied verbatim from the paper (including its spelling),
so a campaign run with ParaEval shows volunteers what the paper's volunteers saw. Pure data:
the templates render it, with the word differences of each example highlighted.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from annotate.diff import Segment, highlight
from annotate.labels import Label

INTRODUCTION = (
    "You are going to see two sentences. You are asked to estimate the extent to which the two "
    "sentences share a common meaning. To help you, the differences between the sentences are "
    "highlighted in yellow of which several examples are shown below."
)


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


EXAMPLES: tuple[GuidelineExample, ...] = (
    GuidelineExample(
        first="The cat drinks water.",
        second="The cat eats kibble.",
        label=Label.VERY_DIFFERENT,
        explanation=(
            "The associated actions have nothing in common even though the two sentences have the same subject."
        ),
    ),
    GuidelineExample(
        first="The cat drinks milk.",
        second="The cat drinks water.",
        label=Label.SLIGHTLY_SIMILAR,
        explanation="The subjects and actions are similar, but water is not milk.",
    ),
    GuidelineExample(
        first="The cat drinks water.",
        second="The cat quenches its thirst.",
        label=Label.MOSTLY_SIMILAR,
        explanation="The only difference is that the first sentence specifies the type of liquid that is being drunk.",
    ),
    GuidelineExample(
        first="The cat eats the mouse.",
        second="The mouse is eaten by the cat.",
        label=Label.SAME_MEANING,
        explanation=(
            "Differences linked to context interpretation in these two sentences are too small to say that "
            "their meaning is different."
        ),
    ),
    GuidelineExample(
        first="The cat drinks tomato soup.",
        second="Cat tomato soup.",
        label=Label.DONT_KNOW,
        explanation="The second sentence doesn't make any sense. We can't draw any conclusions from it.",
    ),
)


@dataclass(frozen=True)
class HighlightedExample:
    """An example ready to render: both sentences cut into highlighted segments."""

    example: GuidelineExample
    first: list[Segment]
    second: list[Segment]


@cache
def highlighted_examples() -> tuple[HighlightedExample, ...]:
    """The five examples with their word differences marked, as the campaign pages show them."""
    result = []
    for example in EXAMPLES:
        first, second = highlight(example.first, example.second)
        result.append(HighlightedExample(example, first, second))
    return tuple(result)


__all__ = ["EXAMPLES", "INTRODUCTION", "GuidelineExample", "HighlightedExample", "highlighted_examples"]
