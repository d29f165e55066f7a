"""Readers: bytes to text (strict UTF-8), text to rows (CSV / TSV) or objects (JSONL), streamed.

A file is read one line at a time (:class:`TextLines`), never whole, so importing a large file
needs memory for a line and a batch of pairs, not for the file.

Every row or object carries the physical line where it starts, so later problems can name
it. Readers never stop at the first bad line: they yield an :class:`ImportProblem` in its
place and go on, so one refusal lists everything that is wrong.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO

from annotate.importers.problems import ImportProblem, ImportRefused
from paraeval.textcheck import loads_bounded

UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _not_utf8(line: int, raw: bytes, offset: int, error: UnicodeDecodeError) -> ImportProblem:
    return ImportProblem(
        line,
        None,
        f"not valid UTF-8: byte 0x{raw[error.start]:02X} at byte offset {offset + error.start:,} "
        "(save the file as UTF-8)",
    )


def decode(data: bytes) -> str:
    """Decode ``data`` as strict UTF-8 (a leading byte-order mark is accepted and dropped).

    Raises :class:`ImportRefused` naming every line that is not valid UTF-8, with the byte
    offset of the first bad byte in it.
    """
    lines = TextLines(io.BytesIO(data))
    text = "".join(lines)
    lines.raise_for_encoding()
    return text


class TextLines:
    """The lines of a file, decoded as strict UTF-8 one at a time: memory stays bounded by the
    longest line, whatever the size of the file.

    Iterating yields each physical line (split on ``\n`` only, the newline kept). A line that
    is not valid UTF-8 is yielded with the bad bytes replaced, so that line numbers stay true,
    and recorded in ``encoding_problems``. The record stream hands each one on beside the
    problems of the records (:meth:`take_new_problems`), so a refusal, a dry run and a preview
    list the encoding and everything else wrong with the same lines; a file that cannot be read
    at all is refused with them (:meth:`raise_for_encoding`). A leading UTF-8 byte-order mark is
    dropped; a UTF-16 one refuses the file at once.
    """

    def __init__(self, source: IO[bytes] | IO[str] | Iterable[str]) -> None:
        self._source = source
        self.encoding_problems: list[ImportProblem] = []
        self.lines_read = 0
        self._handed_on = 0  # encoding problems already given out by take_new_problems

    def __iter__(self) -> Iterator[str]:
        first = True
        offset = 0
        for raw in self._source:
            self.lines_read += 1
            if isinstance(raw, str):
                yield raw.removeprefix("\ufeff") if first else raw
                first = False
                continue
            if first:
                first = False
                if raw.startswith(UTF16_BOMS):
                    raise ImportRefused(
                        [
                            ImportProblem(
                                1,
                                None,
                                "the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8",
                            )
                        ]
                    )
                if raw.startswith(UTF8_BOM):
                    raw = raw[len(UTF8_BOM) :]
                    offset = len(UTF8_BOM)
            # A newline byte is never part of a multi-byte UTF-8 sequence, so decoding line by
            # line finds exactly the errors of decoding the whole file.
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                self.encoding_problems.append(_not_utf8(self.lines_read, raw, offset, error))
                text = raw.decode("utf-8", errors="replace")
            offset += len(raw)
            yield text

    def take_new_problems(self) -> list[ImportProblem]:
        """The encoding problems found since the last call (each one is given out once)."""
        new = self.encoding_problems[self._handed_on :]
        self._handed_on = len(self.encoding_problems)
        return new

    def raise_for_encoding(self) -> None:
        """Refuse the file, naming every line that is not valid UTF-8 and not handed on yet, if there was one."""
        if new := self.take_new_problems():
            raise ImportRefused(new)


@dataclass(frozen=True)
class Row:
    """One record of a CSV / TSV file: its cells and the line where it starts (None for the
    column names given for a file without a header line)."""

    line: int | None
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


# A lone carriage return ends a line too, as in a file opened with newline="" (old Mac files).
_LONE_CR = re.compile(r"(?<=\r)(?!\n)")


def _universal_lines(lines: Iterable[str]) -> Iterator[str]:
    for line in lines:
        if "\r" in line:
            yield from (part for part in _LONE_CR.split(line) if part)
        else:
            yield line


def read_table(text: str | Iterable[str], *, delimiter: str, quoted: bool) -> Iterator[Row | ImportProblem]:
    """Yield the rows of a delimited text (a string or its lines), skipping blank lines (and
    rows of empty cells), one at a time.

    ``quoted=True`` reads RFC 4180 quoting (cells may hold separators, quotes and newlines);
    ``quoted=False`` reads quotes as plain characters, one record per line (MRPC, PAWS, STS-B
    and other tab-separated corpora contain unbalanced quotes).
    """
    # newline="" lets the csv module see the line endings, so a newline or carriage return
    # inside a quoted cell is kept exactly.
    lines = io.StringIO(text, newline="") if isinstance(text, str) else _universal_lines(text)
    reader = csv.reader(
        lines,
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


def read_jsonl(text: str | Iterable[str]) -> Iterator[JsonObject | ImportProblem]:
    """Yield the objects of a JSON Lines text (a string or its lines), one a line, one at a
    time; blank lines are skipped."""
    # Split on "\n" only: U+2028 and friends are legal inside JSON strings.
    lines = text.split("\n") if isinstance(text, str) else text
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = loads_bounded(line)
        except json.JSONDecodeError as error:
            yield ImportProblem(number, None, f"not valid JSON: {error.msg} (column {error.colno})")
            continue
        except ValueError as error:  # nested too deeply (a RecursionError otherwise)
            yield ImportProblem(number, None, f"not valid JSON: {error}")
            continue
        if not isinstance(value, dict):
            yield ImportProblem(number, None, f"expected a JSON object {{...}}, found {json_type(value)}")
            continue
        yield JsonObject(number, value)
