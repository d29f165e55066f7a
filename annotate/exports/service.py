"""One entry point for every export: the staff page, the API and ``manage.py export_corpus``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.utils import timezone

from annotate.exports.formatters import (
    DEFAULT_CHUNK_SIZE,
    JUDGEMENT_COLUMNS,
    judgement_rows,
    metric_columns,
    pair_columns,
    pair_rows,
)
from annotate.exports.writers import write_csv, write_jsonl
from annotate.models import Campaign
from annotate.quality import VolunteerQuality


class Level(StrEnum):
    """What one row of the export is."""

    JUDGEMENTS = "judgements"
    PAIRS = "pairs"


class Format(StrEnum):
    """How the rows are written."""

    CSV = "csv"
    JSONL = "jsonl"


CONTENT_TYPES: dict[Format, str] = {
    Format.CSV: "text/csv; charset=utf-8",
    Format.JSONL: "application/x-ndjson; charset=utf-8",
}

_WRITERS: dict[Format, Callable[[Sequence[str], Any], Iterator[str]]] = {
    Format.CSV: write_csv,
    Format.JSONL: write_jsonl,
}


@dataclass(frozen=True)
class Export:
    """A prepared export: its header is known, its rows are read only while it is consumed."""

    campaign: Campaign
    level: Level
    format: Format
    columns: tuple[str, ...]
    rows: Iterator[Mapping[str, Any]]
    created_at: Any

    @property
    def content_type(self) -> str:
        return CONTENT_TYPES[self.format]

    @property
    def filename(self) -> str:
        """e.g. ``demo-pairs-20250131-142500.csv`` (slugs are ASCII, safe in a header)."""
        stamp = self.created_at.strftime("%Y%m%d-%H%M%S")
        return f"{self.campaign.slug}-{self.level.value}-{stamp}.{self.format.value}"

    def chunks(self) -> Iterator[str]:
        """The export as text chunks of bounded size (a generator: nothing is read until asked)."""
        return _WRITERS[self.format](self.columns, self.rows)


def build_export(
    campaign: Campaign,
    level: Level | str,
    format: Format | str,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    verdicts: Sequence[VolunteerQuality] | None = None,
) -> Export:
    """Prepare the export of ``campaign`` at ``level`` in ``format``.

    Only the metric columns are queried now (so a bad request fails before anything is sent);
    pairs and judgements are read in chunks of ``chunk_size`` while :meth:`Export.chunks` runs.
    ``verdicts`` are the campaign's quality verdicts (:func:`annotate.quality.campaign_quality`)
    when the caller holds them all; without them each chunk finds its own judges' verdicts from
    their own judgements (:class:`~annotate.exports.formatters.ExclusionVerdicts`): exact, and the
    first rows never wait for a pass over the whole campaign.
    """
    level = Level(level)
    format = Format(format)
    if level is Level.PAIRS:
        metrics = metric_columns(campaign)
        columns = pair_columns(metrics)
        rows = pair_rows(campaign, metrics, chunk_size=chunk_size, verdicts=verdicts)
    else:
        columns = JUDGEMENT_COLUMNS
        rows = judgement_rows(campaign, chunk_size=chunk_size, verdicts=verdicts)
    return Export(campaign=campaign, level=level, format=format, columns=columns, rows=rows, created_at=timezone.now())


class ExportOptionError(ValueError):
    """A query parameter of an export request has a value we do not know; names the parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def parse_export_options(params: Mapping[str, str]) -> tuple[Level, Format]:
    """Read ``level`` (default pairs) and ``format`` (default csv) from query parameters."""
    chosen: list[StrEnum] = []
    for field, enum, default in (("level", Level, Level.PAIRS), ("format", Format, Format.CSV)):
        raw = params.get(field) or default.value
        try:
            chosen.append(enum(raw.strip().lower()))
        except ValueError:
            allowed = ", ".join(member.value for member in enum)
            raise ExportOptionError(field, f"{raw!r} is not one of {allowed}.") from None
    level, format = chosen
    assert isinstance(level, Level) and isinstance(format, Format)
    return level, format
