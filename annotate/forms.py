"""Forms of the volunteer flow: the welcome page and the answer buttons."""

from __future__ import annotations

from django import forms

from annotate.labels import ENGLISH_LEVEL_ORDER, LABEL_DISPLAY, LABEL_ORDER

ENGLISH_LEVEL_LABELS = {"poor": "Poor", "good": "Good", "advanced": "Advanced", "native": "Native"}


class StartForm(forms.Form):
    """Consent and the self-assessed English level (paper, appendix A.2)."""

    consent = forms.BooleanField(
        required=True,
        label="I agree to take part. My answers are stored anonymously and used for research.",
        error_messages={"required": "Please tick the consent box to start."},
    )
    english_level = forms.ChoiceField(
        choices=[(level.value, ENGLISH_LEVEL_LABELS[level.value]) for level in ENGLISH_LEVEL_ORDER],
        widget=forms.RadioSelect,
        label="How would you rate your English?",
        error_messages={
            "required": "Please choose your English level.",
            "invalid_choice": "Please choose one of the four English levels.",
        },
    )


class AnswerForm(forms.Form):
    """One answer: which pair, and which of the five labels."""

    pair = forms.IntegerField(min_value=1, error_messages={"required": "The answer names no pair."})
    label = forms.ChoiceField(
        choices=[(label.value, LABEL_DISPLAY[label]) for label in LABEL_ORDER],
        error_messages={
            "required": "Please choose one of the five answers.",
            "invalid_choice": "That is not one of the five answers.",
        },
    )
