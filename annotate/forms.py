"""Forms of the volunteer flow: the welcome page and the answer buttons."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotate.label_text import LABEL_TEXT, LEVEL_TEXT
from annotate.labels import ENGLISH_LEVEL_ORDER, LABEL_ORDER


class StartForm(forms.Form):
    """Consent and the self-assessed level in the campaign's language (paper, appendix A.2)."""

    consent = forms.BooleanField(
        required=True,
        label=_("I agree to take part. My answers are stored anonymously and used for research."),
        error_messages={"required": _("Please tick the consent box to start.")},
    )
    english_level = forms.ChoiceField(
        choices=[(level.value, LEVEL_TEXT[level]) for level in ENGLISH_LEVEL_ORDER],
        widget=forms.RadioSelect,
        error_messages={
            "required": _("Please choose your level."),
            "invalid_choice": _("Please choose one of the four levels."),
        },
    )


class AnswerForm(forms.Form):
    """One answer: which pair, and which of the five labels."""

    pair = forms.IntegerField(min_value=1, error_messages={"required": _("The answer names no pair.")})
    label = forms.ChoiceField(
        choices=[(label.value, LABEL_TEXT[label]) for label in LABEL_ORDER],
        error_messages={
            "required": _("Please choose one of the five answers."),
            "invalid_choice": _("That is not one of the five answers."),
        },
    )
