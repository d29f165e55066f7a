"""Formats: recognise a file by its header and turn its rows into canonical records.

| format | how it is recognised | what it gives |
| --- | --- | --- |
| ``mrpc`` | tab-separated header ``Quality  #1 ID  #2 ID  #1 String  #2 String`` | id ``<#1 ID>-<#2 ID>``, gold label |
| ``paws`` | tab-separated header ``id  sentence1  sentence2  label`` | id, gold label |
| ``stsb`` | no header: only with ``format="stsb"`` | id ``genre-file-year-number``, gold score 0-5 |
| ``csv`` / ``tsv`` | a header with ``source`` and ``hypothesis`` (or aliases) | the canonical fields |
| ``jsonl`` | one JSON object a line | the canonical fields |

Corpus TSV files (MRPC, PAWS, STS-B and plain ``tsv``) are read with quotes as plain
characters; ``csv`` follows RFC 4180. A CSV or TSV whose header has ``pair_id`` beside
``source`` and ``hypothesis`` is a ParaEval pair-level export: its cells were neutralised
against spreadsheet formulas and are restored here, so texts round-trip exactly.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import IO

from annotate.exports.spreadsheet import restore
from annotate.importers import fields as f
from annotate.importers.options import NO_OPTIONS, ImportOptionError, ImportOptions
from annotate.importers.problems import ImportProblem, ImportRefused
from annotate.importers.readers import JsonObject, Row, TextLines, read_jsonl, read_table
from annotate.importers.validation import SourceRecord, canonical_record

MRPC_HEADER = ("Quality", "#1 ID", "#2 ID", "#1 String", "#2 String")
PAWS_HEADER = ("id", "sentence1", "sentence2", "label")
STSB_FIELDS = ("genre", "filename", "year", "sentence id", "score", "sentence1", "sentence2")
STSB_SCORE_RANGE = (0.0, 5.0)
EXPORT_MARKER = "pair_id"

FORMAT_CHOICES: tuple[str, ...] = ("auto", "mrpc", "paws", "stsb", "csv", "tsv", "jsonl")
DEFAULT_ORIGINS = {"mrpc": "mrpc", "paws": "paws", "stsb": "stsb"}

# The two sentences as the upload page's mapping names them.
_SENTENCE_LABELS = {f.SOURCE: "Sentence 1 (source)", f.HYPOTHESIS: "Sentence 2 (hypothesis)"}


def _how_to_map(missing: Sequence[str], unread: Sequence[str]) -> str:
    """How to say which column holds each missing sentence: the upload page's mapping, the API's
    ``column_map``, or a header name the importer reads; the example uses the file's own columns."""
    chosen = " and ".join(f"{_SENTENCE_LABELS.get(name, name)!r}" for name in missing)
    example = ", ".join(f'"{column}": "{name}"' for column, name in zip(unread, missing, strict=False))
    api = f"column_map {{{example}}}" if example else "column_map"
    plural = len(missing) > 1
    return (
        f"map the column{'s' if plural else ''} holding {'them' if plural else 'it'}: on the upload page, "
        f"set Stored as to {chosen}; through the API, {api}; or rename "
        f"{'them' if plural else 'it'} {' and '.join(repr(name) for name in missing)} in the header"
    )


@dataclass
class RecordStream:
    """The records of a file as they are read, with what is known about the file.

    ``items`` yields each record, or a problem met while reading, in file order, one at a
    time. ``ignored_columns``, ``paraeval_export`` and ``notes`` are filled while ``items`` is
    read: they are complete once it is exhausted.
    """

    format: str
    items: Iterator[SourceRecord | ImportProblem] = field(default_factory=lambda: iter(()))
    ignored_columns: list[str] = field(default_factory=list)
    default_origin: str = ""
    paraeval_export: bool = False
    notes: list[str] = field(default_factory=list)
    # Things that may lose gold labels (a strict import refuses them): e.g. no record has the gold key.
    warnings: list[str] = field(default_factory=list)
    lines: TextLines | None = None  # the decoded lines, when the records come from a file

    def finish(self) -> None:
        """Refuse the file for the lines that were not UTF-8 and not yet given out by ``items``
        (none once it is exhausted: ``items`` lists them beside the records' own problems)."""
        if self.lines is not None:
            self.lines.raise_for_encoding()


def _with_encoding_problems(
    items: Iterator[SourceRecord | ImportProblem], lines: TextLines
) -> Iterator[SourceRecord | ImportProblem]:
    """``items`` with each line that is not UTF-8 named just before the first item read after it.

    The record of such a line is still checked (with the bad bytes replaced), so one refusal, a
    dry run and the upload's preview all list its encoding and whatever else is wrong with it.
    """
    for item in items:
        yield from lines.take_new_problems()
        yield item
    yield from lines.take_new_problems()


@dataclass
class ParsedFile:
    """Records read from a file, with the problems met while reading it (all in memory: for
    tests and small inputs; imports use :class:`RecordStream`)."""

    format: str
    records: list[SourceRecord] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)
    ignored_columns: list[str] = field(default_factory=list)
    default_origin: str = ""
    paraeval_export: bool = False
    notes: list[str] = field(default_factory=list)


def _same_header(cells: Iterable[str], expected: Iterable[str]) -> bool:
    return [cell.strip().lower() for cell in cells] == [name.lower() for name in expected]


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0].rstrip("\r")


def _looks_like_stsb(cells: list[str]) -> bool:
    if len(cells) not in (7, 9):
        return False
    try:
        score = float(cells[4])
    except ValueError:
        return False
    return STSB_SCORE_RANGE[0] <= score <= STSB_SCORE_RANGE[1]


def detect_format(text: str, filename: str = "") -> str:
    """Name the format of ``text`` (the file's start: its first non-blank line is enough)
    from its first line (and a ``.jsonl`` file name)."""
    text = text.removeprefix("\ufeff")
    if PurePath(filename).suffix.lower() in {".jsonl", ".ndjson"} or text.lstrip().startswith("{"):
        return "jsonl"
    first = _first_line(text)
    cells = first.split("\t")
    if _same_header(cells, MRPC_HEADER):
        return "mrpc"
    if _same_header(cells, PAWS_HEADER):
        return "paws"
    if _looks_like_stsb(cells):
        raise ImportRefused(
            [
                ImportProblem(
                    1,
                    None,
                    "this looks like an STS-B file (genre, file, year, id, score, sentence1, sentence2; "
                    "no header): choose the format stsb",
                )
            ]
        )
    return "tsv" if "\t" in first else "csv"


def _field_count_problem(row: Row, expected: int, what: str) -> ImportProblem | None:
    if len(row.cells) == expected:
        return None
    return ImportProblem(row.line, None, f"{len(row.cells)} fields, expected {expected} ({what})")


def _corpus_rows(
    lines: Iterable[str], expected: tuple[str, ...], name: str, *, header: bool
) -> Iterator[Row | ImportProblem]:
    """The rows of a tab-separated corpus file, its header checked (and left out) when it has one."""
    waiting_for_header = header
    for item in read_table(lines, delimiter="\t", quoted=False):
        if isinstance(item, Row) and waiting_for_header:
            waiting_for_header = False
            if not _same_header(item.cells, expected):
                yield ImportProblem(
                    item.line,
                    None,
                    f"the {name} header should be {', '.join(expected)} (tab-separated), found {', '.join(item.cells)}",
                )
            continue
        yield item


def stream_mrpc(lines: Iterable[str], *, header: bool = True) -> RecordStream:
    """Microsoft Research Paraphrase Corpus: ``Quality  #1 ID  #2 ID  #1 String  #2 String``."""
    names = {f.GOLD_LABEL: "Quality", f.EXTERNAL_ID: "#1 ID", f.SOURCE: "#1 String", f.HYPOTHESIS: "#2 String"}

    def items() -> Iterator[SourceRecord | ImportProblem]:
        for row in _corpus_rows(lines, MRPC_HEADER, "MRPC", header=header):
            if isinstance(row, ImportProblem):
                yield row
                continue
            if (problem := _field_count_problem(row, 5, "MRPC rows are tab-separated")) is not None:
                yield problem
                continue
            quality, first_id, second_id, first, second = row.cells
            values: dict[str, object] = {f.GOLD_LABEL: quality, f.SOURCE: first, f.HYPOTHESIS: second}
            if first_id.strip() or second_id.strip():
                values[f.EXTERNAL_ID] = f"{first_id.strip()}-{second_id.strip()}"
            if quality.strip() not in {"0", "1"}:
                yield ImportProblem(row.line, "Quality", f"Quality {quality!r} should be 0 or 1")
                values.pop(f.GOLD_LABEL)
            yield SourceRecord(row.line, values, names)

    return RecordStream("mrpc", items(), default_origin=DEFAULT_ORIGINS["mrpc"])


def stream_paws(lines: Iterable[str], *, header: bool = True) -> RecordStream:
    """PAWS / PAWS-X: ``id  sentence1  sentence2  label``, tab-separated (the header line may
    be missing: ``header=False``)."""
    names = {f.EXTERNAL_ID: "id", f.SOURCE: "sentence1", f.HYPOTHESIS: "sentence2", f.GOLD_LABEL: "label"}

    def items() -> Iterator[SourceRecord | ImportProblem]:
        for row in _corpus_rows(lines, PAWS_HEADER, "PAWS", header=header):
            if isinstance(row, ImportProblem):
                yield row
                continue
            if (problem := _field_count_problem(row, 4, "PAWS rows are tab-separated")) is not None:
                yield problem
                continue
            pair_id, first, second, label = row.cells
            values = {f.EXTERNAL_ID: pair_id, f.SOURCE: first, f.HYPOTHESIS: second, f.GOLD_LABEL: label}
            yield SourceRecord(row.line, values, names)

    return RecordStream("paws", items(), default_origin=DEFAULT_ORIGINS["paws"])


def stream_stsb(lines: Iterable[str]) -> RecordStream:
    """STS Benchmark: no header; ``genre file year id score sentence1 sentence2 [attribution x2]``.

    The score (0-5) becomes the gold score; no binary gold label is derived from it.
    """
    names = {f.GOLD_SCORE: "score", f.SOURCE: "sentence1", f.HYPOTHESIS: "sentence2"}
    stream = RecordStream("stsb", default_origin=DEFAULT_ORIGINS["stsb"])

    def items() -> Iterator[SourceRecord | ImportProblem]:
        attributed = 0
        for row in read_table(lines, delimiter="\t", quoted=False):
            if isinstance(row, ImportProblem):
                yield row
                continue
            if len(row.cells) not in (7, 9):
                yield ImportProblem(
                    row.line,
                    None,
                    f"{len(row.cells)} fields, expected 7 ({', '.join(STSB_FIELDS)}) or 9 (with attribution)",
                )
                continue
            genre, filename, year, number, score, first, second = row.cells[:7]
            attributed += len(row.cells) == 9
            values: dict[str, object] = {
                f.EXTERNAL_ID: "-".join(cell.strip() for cell in (genre, filename, year, number)),
                f.GOLD_SCORE: score,
                f.SOURCE: first,
                f.HYPOTHESIS: second,
            }
            try:
                value = f.parse_gold_score(score)
            except f.InvalidValue:
                value = None  # reported by validation
            if value is not None and not STSB_SCORE_RANGE[0] <= value <= STSB_SCORE_RANGE[1]:
                yield ImportProblem(row.line, "score", f"score {score!r} is outside 0-5")
            yield SourceRecord(row.line, values, names)
        if attributed:
            stream.ignored_columns.append("attribution")
            stream.notes.append(
                f"{attributed:,} rows carry attribution fields (licence credits), which are not stored: "
                "keep the original file if the sentences are shown publicly"
            )

    stream.items = items()
    return stream


def _header_columns(
    header: Row,
    stream: RecordStream,
    *,
    delimiter: str,
    options: ImportOptions,
    column_map: Mapping[str, str] | None,
) -> tuple[dict[str, int], dict[str, str], list[ImportProblem]]:
    """Each canonical field's column index, the header cell naming it, and the header's problems.

    Cells that give no field are added to ``stream.ignored_columns``. Problems: two columns
    giving one field, a ``gold_column`` option the header lacks, missing required columns (with
    the likely cause: ';' between cells, or how to map the unread columns).
    """
    found: dict[str, int] = {}
    names: dict[str, str] = {}
    problems = []
    unread: set[str] = set()
    for index, cell in enumerate(header.cells):
        canonical = options.gold_field() if options.is_gold_column(cell) else mapped_name(cell, column_map)
        if canonical is None:
            stream.ignored_columns.append(cell)
            unread.add(cell.strip())
        elif canonical in found:
            problems.append(
                ImportProblem(
                    header.line, cell, f"columns {names[canonical]!r} and {cell!r} both give {canonical}; keep one"
                )
            )
        else:
            found[canonical] = index
            names[canonical] = cell.strip()
    if options.gold_column and not any(options.is_gold_column(cell) for cell in header.cells):
        problems.append(
            ImportProblem(
                header.line,
                options.gold_column,
                f"the gold column {options.gold_column!r} is not in the header "
                f"(the header has {', '.join(repr(cell) for cell in header.cells)})",
            )
        )
    missing = [name for name in f.REQUIRED_FIELDS if name not in found]
    if missing:
        message = f"missing required column {' and '.join(repr(name) for name in missing)}"
        message += f" (the header has {', '.join(repr(cell) for cell in header.cells)})"
        if delimiter == "," and any(";" in cell for cell in header.cells):
            message += "; the file seems to use ';' between cells: save it with commas (or as TSV)"
        else:
            message += "; " + _how_to_map(missing, [cell for cell in header.cells if cell.strip() in unread])
        problems.append(ImportProblem(header.line, missing[0], message))
    return found, names, problems


def stream_table(
    lines: Iterable[str],
    *,
    delimiter: str,
    name: str,
    columns: Sequence[str] | None = None,
    options: ImportOptions = NO_OPTIONS,
    column_map: Mapping[str, str] | None = None,
) -> RecordStream:
    """A CSV or TSV file with a header naming the canonical fields (or their aliases).

    ``columns`` names the columns of a file without a header line: then every line is data.
    ``column_map`` gives the canonical field of a header cell (``""``: ignore the column),
    in place of the names and aliases the header is otherwise read by.
    ``options.gold_column`` names the column read as the gold label (or score), whatever its name.
    """
    stream = RecordStream(name)
    quoted = delimiter == ","

    def items() -> Iterator[SourceRecord | ImportProblem]:
        header: Row | None = None
        found: dict[str, int] = {}
        names: dict[str, str] = {}
        readable = True  # False when the header lacks a required column: rows are not read then
        if columns is not None:
            header = Row(None, list(columns))
            found, names, problems = _header_columns(
                header, stream, delimiter=delimiter, options=options, column_map=column_map
            )
            yield from problems
            readable = all(name in found for name in f.REQUIRED_FIELDS)
        what = "a comma inside a cell needs the cell in double quotes" if quoted else "tab-separated"
        for row in read_table(lines, delimiter=delimiter, quoted=quoted):
            if isinstance(row, ImportProblem):
                yield row  # malformed lines are named even when no row can be read
                continue
            if header is None:
                stream.paraeval_export = EXPORT_MARKER in {cell.strip().lower() for cell in row.cells}
                header = Row(row.line, [restore(cell) for cell in row.cells]) if stream.paraeval_export else row
                found, names, problems = _header_columns(
                    header, stream, delimiter=delimiter, options=options, column_map=column_map
                )
                yield from problems
                readable = all(name in found for name in f.REQUIRED_FIELDS)
                continue
            if not readable:
                continue
            if len(row.cells) != len(header.cells):
                yield ImportProblem(
                    row.line, None, f"{len(row.cells)} fields, the header has {len(header.cells)} ({what})"
                )
                continue
            cells = [restore(cell) for cell in row.cells] if stream.paraeval_export else row.cells
            values = {canonical: cells[index] for canonical, index in found.items()}
            yield SourceRecord(row.line, values, names)

    stream.items = items()
    return stream


def mapped_name(column: str, column_map: Mapping[str, str] | None) -> str | None:
    """The canonical field a column gives: the one ``column_map`` names (``""``: none), else
    the one its name or alias stands for."""
    if column_map is not None and column.strip() in column_map:
        chosen = column_map[column.strip()]
        if chosen and chosen not in f.CANONICAL_FIELDS:
            raise ImportOptionError(f"column {column!r} is mapped to {chosen!r}, which is not a pair field")
        return chosen or None
    return f.canonical_name(column)


def stream_mappings(
    items: Iterable[tuple[int | None, object]], name: str, *, options: ImportOptions = NO_OPTIONS
) -> RecordStream:
    """JSON objects (or dicts given in Python), each with the canonical fields as keys
    (``options.gold_column`` names a key read as the gold label or score)."""
    stream = RecordStream(name)
    seen_unknown: dict[str, None] = {}

    def records() -> Iterator[SourceRecord | ImportProblem]:
        gold_seen = False
        for line, item in items:
            if isinstance(item, ImportProblem):
                yield item
                continue
            if not isinstance(item, Mapping):
                yield ImportProblem(line, None, "expected an object with source and hypothesis")
                continue
            if options.gold_column:
                gold_key = next((key for key in item if isinstance(key, str) and options.is_gold_column(key)), None)
                if gold_key is not None:
                    gold_seen = True
                    rest = {key: value for key, value in item.items() if key != gold_key}
                    record, unknown, conflicts = canonical_record(line, rest)
                    if not f.is_blank(record.values.get(options.gold_field())):
                        conflicts.append(
                            f"{record.name(options.gold_field())} and {gold_key} both give the gold; keep one"
                        )
                    values = dict(record.values)
                    values[options.gold_field()] = item[gold_key]
                    names = dict(record.names)
                    names[options.gold_field()] = gold_key
                    record = SourceRecord(line, values, names)
                else:
                    record, unknown, conflicts = canonical_record(line, item)
            else:
                record, unknown, conflicts = canonical_record(line, item)
            for key in unknown:
                if key not in seen_unknown:
                    seen_unknown[key] = None
                    stream.ignored_columns.append(key)
            yield from (ImportProblem(line, None, conflict) for conflict in conflicts)
            yield record
        if options.gold_column and not gold_seen:
            # Records may carry gold or not, one by one: a key no record has is a warning, not a refusal.
            stream.warnings.append(f"no record has the gold key {options.gold_column!r}: no gold was read from it")

    stream.items = records()
    return stream


def stream_jsonl(
    lines: Iterable[str], *, options: ImportOptions = NO_OPTIONS, column_map: Mapping[str, str] | None = None
) -> RecordStream:
    """JSON Lines: one object a line (keys renamed by ``column_map``, as for a table's columns)."""
    objects = (
        (item.line, item.value) if isinstance(item, JsonObject) else (item.line, item) for item in read_jsonl(lines)
    )
    dropped: dict[str, None] = {}

    def renamed(value: object) -> object:
        if not column_map or not isinstance(value, Mapping):
            return value
        kept: dict[object, object] = {}
        for key, cell in value.items():
            if isinstance(key, str) and key.strip() in column_map:
                target = mapped_name(key, column_map)
                if target is None:
                    if key not in dropped:
                        dropped[key] = None
                        stream.ignored_columns.append(key)
                    continue
                kept[target] = cell
            else:
                kept[key] = cell
        return kept

    stream = stream_mappings(((line, renamed(value)) for line, value in objects), "jsonl", options=options)
    return stream


NO_HEADER_FORMATS: tuple[str, ...] = ("paws", "mrpc", "csv", "tsv")


def _opening(lines: Iterator[str]) -> tuple[list[str], bool]:
    """The lines up to the first one that is not blank (read ahead to recognise the format),
    and whether there was one."""
    ahead = []
    for line in lines:
        ahead.append(line)
        if line.strip():
            return ahead, True
    return ahead, False


def _check_format_options(format: str, header: bool, columns: Sequence[str] | None) -> None:
    """Refuse an unknown format, or a file without a header whose columns cannot be known."""
    if format not in FORMAT_CHOICES:
        raise ImportOptionError(f"unknown import format {format!r}; choose one of {', '.join(FORMAT_CHOICES)}")
    if not header:
        if format not in NO_HEADER_FORMATS and not (format == "auto" and columns):
            raise ImportOptionError(
                "a file without a header needs its format: paws or mrpc (their usual columns), "
                "or csv / tsv with the column names"
            )
        if format in {"csv", "tsv"} and not columns:
            raise ImportOptionError(f"a {format} file without a header needs the names of its columns")


def _detected_format(start: str, filename: str, header: bool) -> str:
    """The format of a file beginning with ``start``: without a header, TSV when its first line has a tab, else CSV.

    Raises ``ImportRefused`` when a file with a header is of no known format.
    """
    if not header:
        return "tsv" if "\t" in start.strip().split("\n", 1)[0] else "csv"
    return detect_format(start, filename)


def _check_gold_options(name: str, options: ImportOptions) -> None:
    """Refuse a gold column for a corpus format with its own, and a value mapping for STS-B's graded scores."""
    if options.gold_column and name in DEFAULT_ORIGINS:
        raise ImportOptionError(
            f"a {name} file has its own gold column: leave the gold column out (a value mapping still applies to it)"
        )
    if options.gold_map and name == "stsb":
        raise ImportOptionError("an STS-B file gives graded scores (0-5): a value mapping does not apply to it")


def _stream_of(
    name: str,
    every_line: Iterable[str],
    *,
    header: bool,
    columns: Sequence[str] | None,
    options: ImportOptions,
    column_map: Mapping[str, str] | None,
) -> RecordStream:
    """The record stream of the format ``name`` over the file's lines."""
    if name == "mrpc":
        return stream_mrpc(every_line, header=header)
    if name == "paws":
        return stream_paws(every_line, header=header)
    if name == "stsb":
        return stream_stsb(every_line)
    if name == "jsonl":
        return stream_jsonl(every_line, options=options, column_map=column_map)
    delimiter = "," if name == "csv" else "\t"
    return stream_table(
        every_line,
        delimiter=delimiter,
        name=name,
        columns=None if header else columns,
        options=options,
        column_map=column_map,
    )


def open_records(
    source: bytes | str | IO[bytes] | IO[str],
    *,
    format: str = "auto",
    filename: str = "",
    header: bool = True,
    columns: Sequence[str] | None = None,
    options: ImportOptions = NO_OPTIONS,
    column_map: Mapping[str, str] | None = None,
) -> RecordStream:
    """Recognise a file and stream its records, one line read at a time.

    ``source`` is the file's content or an open file. A file that cannot be read at all (UTF-16,
    empty, unknown format) is refused here; problems of single records come through ``items``.
    ``header=False`` reads a file without a header line: PAWS or MRPC columns in their usual
    order, or for CSV / TSV the ``columns`` given. ``options.gold_column`` names the gold column
    of a CSV, TSV or JSONL file; MRPC, PAWS and STS-B have their own. ``column_map`` (CSV, TSV
    and JSONL) names the pair field each column (or key) gives, ``""`` to ignore it; columns it
    leaves out are read by their names as usual.
    """
    _check_format_options(format, header, columns)
    if isinstance(source, bytes):
        source = io.BytesIO(source)
    elif isinstance(source, str):
        source = io.StringIO(source, newline="\n")
    lines = TextLines(source)
    reading = iter(lines)
    ahead, found = _opening(reading)
    if not found:
        lines.raise_for_encoding()
        raise ImportRefused([ImportProblem(None, None, "the file is empty")])
    name = format
    if format == "auto":
        try:
            name = _detected_format("".join(ahead), filename, header)
        except ImportRefused:
            lines.raise_for_encoding()
            raise
    _check_gold_options(name, options)
    every_line = itertools.chain(ahead, reading)
    stream = _stream_of(name, every_line, header=header, columns=columns, options=options, column_map=column_map)
    stream.items = _with_encoding_problems(stream.items, lines)
    stream.lines = lines
    return stream


def collect(stream: RecordStream) -> ParsedFile:
    """Read a whole stream into memory (tests and small inputs)."""
    parsed = ParsedFile(stream.format, default_origin=stream.default_origin)
    for item in stream.items:
        if isinstance(item, ImportProblem):
            parsed.problems.append(item)
        else:
            parsed.records.append(item)
    stream.finish()
    parsed.ignored_columns = list(stream.ignored_columns)
    parsed.paraeval_export = stream.paraeval_export
    parsed.notes = list(stream.notes)
    return parsed


def parse_mappings(items: Iterable[tuple[int | None, object]], name: str) -> ParsedFile:
    """JSON objects (or dicts given in Python), read into memory."""
    return collect(stream_mappings(items, name))


def parse_file(data: bytes | str, *, format: str = "auto", filename: str = "") -> ParsedFile:
    """Decode, recognise and read a whole file into memory. Problems of single records are
    collected in the result; a file that cannot be read at all (encoding, empty, unknown
    format) is refused."""
    return collect(open_records(data, format=format, filename=filename))
