"""Turn export rows into text, chunk by chunk: CSV (RFC 4180) and JSON Lines.

Both writers are generators that hold at most one buffer of about ``BUFFER_SIZE`` characters,
so a response or a file of any length is written in bounded memory. They yield ``str``; the
caller encodes (UTF-8 everywhere).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from annotate.exports.spreadsheet import DANGEROUS_FIRST_CHARACTERS, PREFIX, neutralise

# Characters gathered before a chunk is yielded: big enough to keep per-chunk overhead low,
# small enough that memory does not grow with the export.
BUFFER_SIZE = 64 * 1024
LIST_SEPARATOR = "; "
_RISKY_FIRST_CHARACTERS = DANGEROUS_FIRST_CHARACTERS | {PREFIX}


def csv_cell(value: Any) -> str | int | float:
    """One value as a CSV cell: text neutralised against spreadsheet formulas, booleans as 1/0,
    missing values empty, lists joined with ``"; "``. Numbers stay numbers (a negative score
    is a number to a spreadsheet, not a formula)."""
    kind = type(value)
    if kind is str:
        # Most cells are harmless text: look at the first character before calling neutralise.
        return neutralise(value) if value and value[0] in _RISKY_FIRST_CHARACTERS else value
    if value is None:
        return ""
    if kind is bool:
        return 1 if value else 0
    if kind is int or kind is float:
        number: int | float = value
        return number
    if isinstance(value, list | tuple):
        return neutralise(LIST_SEPARATOR.join(str(item) for item in value))
    return neutralise(str(value))


def write_csv(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """CSV with a header row, ``\\r\\n`` line ends and minimal RFC 4180 quoting (``csv`` module).

    Every text cell, header included, goes through :func:`neutralise`, so a cell that starts
    with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is prefixed with an apostrophe;
    :func:`annotate.exports.spreadsheet.restore` undoes it exactly.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow([neutralise(column) for column in columns])
    for row in rows:
        writer.writerow([csv_cell(row[column]) for column in columns])
        if buffer.tell() >= BUFFER_SIZE:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def write_jsonl(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """JSON Lines: one object per row with the keys in ``columns`` order, values typed
    (numbers, booleans, null, lists) and texts exactly as stored (no spreadsheet prefix)."""
    parts: list[str] = []
    size = 0
    for row in rows:
        line = json.dumps({column: row[column] for column in columns}, ensure_ascii=False, allow_nan=False) + "\n"
        parts.append(line)
        size += len(line)
        if size >= BUFFER_SIZE:
            yield "".join(parts)
            parts.clear()
            size = 0
    if parts:
        yield "".join(parts)
