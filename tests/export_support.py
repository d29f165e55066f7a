"""Helpers of the export tests: read an export back the way a researcher's script would."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from annotate.exports.service import build_export
from annotate.models import Campaign


def export_text(campaign: Campaign, level: str, format: str, **options: Any) -> str:
    return "".join(build_export(campaign, level, format, **options).chunks())


def read_csv(text: str) -> tuple[list[str], list[dict[str, str]]]:
    """Header and rows of a CSV export (rows as dicts, cells exactly as written)."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header, body = rows[0], rows[1:]
    return header, [dict(zip(header, row, strict=True)) for row in body]


def read_jsonl(text: str) -> list[dict[str, Any]]:
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]
