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


# The French guidelines, written for ParaEval to be faithful to the paper's English (same
# examples, same answers, same explanations), for campaigns whose pairs are in French.
INTRODUCTION_FR = (
    "Vous allez voir deux phrases. On vous demande d'estimer dans quelle mesure les deux phrases "
    "partagent un sens commun. Pour vous aider, les différences entre les phrases sont surlignées en "
    "jaune ; plusieurs exemples sont présentés ci-dessous."
)

EXAMPLES_FR: tuple[GuidelineExample, ...] = (
    GuidelineExample(
        first="Le chat boit de l'eau.",
        second="Le chat mange des croquettes.",
        label=Label.VERY_DIFFERENT,
        explanation="Les actions associées n'ont rien en commun, même si les deux phrases ont le même sujet.",
    ),
    GuidelineExample(
        first="Le chat boit du lait.",
        second="Le chat boit de l'eau.",
        label=Label.SLIGHTLY_SIMILAR,
        explanation="Les sujets et les actions sont semblables, mais l'eau n'est pas du lait.",
    ),
    GuidelineExample(
        first="Le chat boit de l'eau.",
        second="Le chat étanche sa soif.",
        label=Label.MOSTLY_SIMILAR,
        explanation="La seule différence est que la première phrase précise le type de liquide qui est bu.",
    ),
    GuidelineExample(
        first="Le chat mange la souris.",
        second="La souris est mangée par le chat.",
        label=Label.SAME_MEANING,
        explanation=(
            "Les différences liées à l'interprétation du contexte dans ces deux phrases sont trop faibles "
            "pour dire que leur sens est différent."
        ),
    ),
    GuidelineExample(
        first="Le chat boit de la soupe à la tomate.",
        second="Chat soupe tomate.",
        label=Label.DONT_KNOW,
        explanation="La deuxième phrase n'a aucun sens. On ne peut en tirer aucune conclusion.",
    ),
)

INTRODUCTIONS: dict[str, str] = {"en": INTRODUCTION, "fr": INTRODUCTION_FR}
EXAMPLES_BY_LANGUAGE: dict[str, tuple[GuidelineExample, ...]] = {"en": EXAMPLES, "fr": EXAMPLES_FR}


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
    "INTRODUCTION",
    "INTRODUCTION_FR",
    "GuidelineExample",
    "HighlightedExample",
    "highlighted_examples",
    "introduction",
]
