"""Readers: bytes to text (strict UTF-8), text to rows (CSV / TSV) or objects (JSONL).

Every row or object carries the physical line where it starts, so later problems can name
it. Readers never stop at the first bad line: they yield an :class:`ImportProblem` in its
place and go on, so one refusal lists everything that is wrong.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass

from annotate.importers.problems import ImportProblem, ImportRefused

UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def decode(data: bytes) -> str:
    """Decode ``data`` as strict UTF-8 (a leading byte-order mark is accepted and dropped).

    Raises :class:`ImportRefused` naming every line that is not valid UTF-8, with the byte
    offset of the first bad byte in it.
    """
    if data.startswith(UTF16_BOMS):
        raise ImportRefused(
            [ImportProblem(1, None, "the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8")]
        )
    skipped = len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0
    body = data[skipped:]
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    # Slow path, only for a refused file: find every bad line. A newline byte is never part of
    # a multi-byte UTF-8 sequence, so decoding line by line finds exactly the same errors.
    problems = []
    offset = skipped
    for number, line in enumerate(body.split(b"\n"), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.append(
                ImportProblem(
                    number,
                    None,
                    f"not valid UTF-8: byte 0x{line[error.start]:02X} at byte offset {offset + error.start:,} "
                    "(save the file as UTF-8)",
                )
            )
        offset += len(line) + 1
    raise ImportRefused(problems)


@dataclass(frozen=True)
class Row:
    """One record of a CSV / TSV file: its cells and the line where it starts."""

    line: int
    cells: list[str]


_CSV_ERRORS = {
    "unexpected end of data": "a quoted cell that starts in this record is never closed (look for a stray '\"')",
}


def _csv_message(error: csv.Error) -> str:
    text = str(error)
    if text in _CSV_ERRORS:
        return _CSV_ERRORS[text]
    if "expected after '\"'" in text:
        return 'a closing quote must be followed by the separator (write a quote inside a quoted cell as "")'
    if text.startswith("field larger than field limit"):
        return f"a cell is too long for the CSV reader ({text})"
    return f"malformed {text}"


def read_table(text: str, *, delimiter: str, quoted: bool) -> Iterator[Row | ImportProblem]:
    """Yield the rows of a delimited text, skipping blank lines (and rows of empty cells).

    ``quoted=True`` reads RFC 4180 quoting (cells may hold separators, quotes and newlines);
    ``quoted=False`` reads quotes as plain characters, one record per line (MRPC, PAWS, STS-B
    and other tab-separated corpora contain unbalanced quotes).
    """
    reader = csv.reader(
        # newline="" lets the csv module see the line endings, so a newline or carriage return
        # inside a quoted cell is kept exactly.
        io.StringIO(text, newline=""),
        delimiter=delimiter,
        quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE,
        strict=quoted,
    )
    end = 0
    while True:
        start = end + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            end = reader.line_num
            yield ImportProblem(start, None, _csv_message(error))
            continue
        end = reader.line_num
        if not any(cells):
            continue
        yield Row(start, cells)


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


@dataclass(frozen=True)
class JsonObject:
    """One object of a JSONL file and its line."""

    line: int
    value: dict[str, object]


def read_jsonl(text: str) -> Iterator[JsonObject | ImportProblem]:
    """Yield the objects of a JSON Lines text, one a line; blank lines are skipped."""
    # Split on "\n" only: U+2028 and friends are legal inside JSON strings.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            yield ImportProblem(number, None, f"not valid JSON: {error.msg} (column {error.colno})")
            continue
        if not isinstance(value, dict):
            yield ImportProblem(number, None, f"expected a JSON object {{...}}, found {json_type(value)}")
            continue
        yield JsonObject(number, value)
