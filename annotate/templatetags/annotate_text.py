"""Template filters of the volunteer pages."""

from __future__ import annotations

from django import template

from annotate import label_text as texts
from annotate.pseudonyms import volunteer_pseudonym

register = template.Library()


@register.filter
def label_text(label: str) -> str:
    """``{{ label|label_text }}``: an answer as its button says it, in the active language."""
    return texts.label_text(label)


@register.filter
def pseudonym(token: str) -> str:
    """``{{ volunteer.token|pseudonym }}``: the volunteer's public pseudonym, the one the exports,
    the API and the dashboard show (never the token, which is a credential)."""
    return volunteer_pseudonym(token)
