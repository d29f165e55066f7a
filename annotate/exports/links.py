"""The downloads of a campaign's export, as the staff hub and the dashboard offer them."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

EXPORT_LEVELS = ("pairs", "judgements")
EXPORT_FORMATS = ("csv", "jsonl")


@dataclass(frozen=True)
class ExportLink:
    """One download of a campaign's export."""

    level: str
    format: str
    url: str

    @property
    def text(self) -> str:
        return f"{self.level.capitalize()} ({self.format.upper()})"


def export_links(slug: str) -> tuple[ExportLink, ...]:
    """The four downloads of a campaign: pairs and judgements, each as CSV and JSONL."""
    base = reverse("staff:campaign-export", args=[slug])
    return tuple(
        ExportLink(level, format, f"{base}?level={level}&format={format}")
        for level in EXPORT_LEVELS
        for format in EXPORT_FORMATS
    )
