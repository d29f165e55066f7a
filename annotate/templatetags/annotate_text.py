"""Template filters of the volunteer pages."""

from __future__ import annotations

from django import template

from annotate import label_text as texts

register = template.Library()


@register.filter
def label_text(label: str) -> str:
    """``{{ label|label_text }}``: an answer as its button says it, in the active language."""
    return texts.label_text(label)
