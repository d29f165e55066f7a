"""The five answers and the four levels as volunteers read them, in the interface's language.

``annotate.labels`` stays free of Django; the words on the buttons are translated here with
Django's translation machinery (the paper's order and colours do not change with the language).
"""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from annotate.labels import EnglishLevel, Label

LABEL_TEXT: dict[Label, Promise] = {
    Label.VERY_DIFFERENT: _("Very different"),
    Label.SLIGHTLY_SIMILAR: _("Slightly similar"),
    Label.MOSTLY_SIMILAR: _("Mostly similar"),
    Label.SAME_MEANING: _("Same meaning"),
    Label.DONT_KNOW: _("Don't know"),
}

LEVEL_TEXT: dict[EnglishLevel, Promise] = {
    EnglishLevel.POOR: _("Poor"),
    EnglishLevel.GOOD: _("Good"),
    EnglishLevel.ADVANCED: _("Advanced"),
    EnglishLevel.NATIVE: _("Native"),
}

# The self-assessed level asks about the language of the pairs, not of the interface.
LEVEL_QUESTION: dict[str, Promise] = {
    "en": _("How would you rate your English?"),
    "fr": _("How would you rate your French?"),
}


def label_text(label: Label | str) -> str:
    """The answer as its button says it, in the active language."""
    return str(LABEL_TEXT[Label(label)])


def level_question(campaign_language: str) -> str:
    """The English-level question, about the campaign's language."""
    return str(LEVEL_QUESTION.get(campaign_language, LEVEL_QUESTION["en"]))


__all__ = ["LABEL_TEXT", "LEVEL_QUESTION", "LEVEL_TEXT", "label_text", "level_question"]
