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

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePath

from annotate.exports.spreadsheet import restore
from annotate.importers import fields as f
from annotate.importers.problems import ImportProblem, ImportRefused
from annotate.importers.readers import JsonObject, Row, decode, read_jsonl, read_table
from annotate.importers.validation import SourceRecord, canonical_record

MRPC_HEADER = ("Quality", "#1 ID", "#2 ID", "#1 String", "#2 String")
PAWS_HEADER = ("id", "sentence1", "sentence2", "label")
STSB_FIELDS = ("genre", "filename", "year", "sentence id", "score", "sentence1", "sentence2")
STSB_SCORE_RANGE = (0.0, 5.0)
EXPORT_MARKER = "pair_id"

FORMAT_CHOICES: tuple[str, ...] = ("auto", "mrpc", "paws", "stsb", "csv", "tsv", "jsonl")
DEFAULT_ORIGINS = {"mrpc": "mrpc", "paws": "paws", "stsb": "stsb"}

_RECOGNISED = (
    "a header was expected: MRPC (Quality, #1 ID, #2 ID, #1 String, #2 String), "
    "PAWS (id, sentence1, sentence2, label), or a CSV/TSV header with source and hypothesis columns; "
    "STS-B files have no header: choose the format stsb"
)


@dataclass
class ParsedFile:
    """Records read from a file, with the problems met while reading it."""

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
    """Name the format of ``text`` from its first line (and a ``.jsonl`` file name)."""
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


def _table_rows(text: str, *, delimiter: str, quoted: bool, parsed: ParsedFile) -> list[Row]:
    rows = []
    for item in read_table(text, delimiter=delimiter, quoted=quoted):
        if isinstance(item, ImportProblem):
            parsed.problems.append(item)
        else:
            rows.append(item)
    return rows


def _field_count_problem(row: Row, expected: int, what: str) -> ImportProblem | None:
    if len(row.cells) == expected:
        return None
    return ImportProblem(row.line, None, f"{len(row.cells)} fields, expected {expected} ({what})")


def _corpus_header(rows: list[Row], expected: tuple[str, ...], name: str, parsed: ParsedFile) -> list[Row]:
    """Check the header of a corpus file; return the data rows."""
    if not rows:
        return rows
    header = rows[0]
    if not _same_header(header.cells, expected):
        parsed.problems.append(
            ImportProblem(
                header.line,
                None,
                f"the {name} header should be {', '.join(expected)} (tab-separated), found {', '.join(header.cells)}",
            )
        )
    return rows[1:]


def parse_mrpc(text: str) -> ParsedFile:
    """Microsoft Research Paraphrase Corpus: ``Quality  #1 ID  #2 ID  #1 String  #2 String``."""
    parsed = ParsedFile("mrpc", default_origin=DEFAULT_ORIGINS["mrpc"])
    rows = _table_rows(text, delimiter="\t", quoted=False, parsed=parsed)
    names = {f.GOLD_LABEL: "Quality", f.EXTERNAL_ID: "#1 ID", f.SOURCE: "#1 String", f.HYPOTHESIS: "#2 String"}
    for row in _corpus_header(rows, MRPC_HEADER, "MRPC", parsed):
        if (problem := _field_count_problem(row, 5, "MRPC rows are tab-separated")) is not None:
            parsed.problems.append(problem)
            continue
        quality, first_id, second_id, first, second = row.cells
        values: dict[str, object] = {f.GOLD_LABEL: quality, f.SOURCE: first, f.HYPOTHESIS: second}
        if first_id.strip() or second_id.strip():
            values[f.EXTERNAL_ID] = f"{first_id.strip()}-{second_id.strip()}"
        if quality.strip() not in {"0", "1"}:
            parsed.problems.append(ImportProblem(row.line, "Quality", f"Quality {quality!r} should be 0 or 1"))
            values.pop(f.GOLD_LABEL)
        parsed.records.append(SourceRecord(row.line, values, names))
    return parsed


def parse_paws(text: str) -> ParsedFile:
    """PAWS / PAWS-X: ``id  sentence1  sentence2  label``, tab-separated."""
    parsed = ParsedFile("paws", default_origin=DEFAULT_ORIGINS["paws"])
    rows = _table_rows(text, delimiter="\t", quoted=False, parsed=parsed)
    names = {f.EXTERNAL_ID: "id", f.SOURCE: "sentence1", f.HYPOTHESIS: "sentence2", f.GOLD_LABEL: "label"}
    for row in _corpus_header(rows, PAWS_HEADER, "PAWS", parsed):
        if (problem := _field_count_problem(row, 4, "PAWS rows are tab-separated")) is not None:
            parsed.problems.append(problem)
            continue
        pair_id, first, second, label = row.cells
        values = {f.EXTERNAL_ID: pair_id, f.SOURCE: first, f.HYPOTHESIS: second, f.GOLD_LABEL: label}
        parsed.records.append(SourceRecord(row.line, values, names))
    return parsed


def parse_stsb(text: str) -> ParsedFile:
    """STS Benchmark: no header; ``genre file year id score sentence1 sentence2 [attribution x2]``.

    The score (0-5) becomes the gold score; no binary gold label is derived from it.
    """
    parsed = ParsedFile("stsb", default_origin=DEFAULT_ORIGINS["stsb"])
    rows = _table_rows(text, delimiter="\t", quoted=False, parsed=parsed)
    names = {f.GOLD_SCORE: "score", f.SOURCE: "sentence1", f.HYPOTHESIS: "sentence2"}
    attributed = 0
    for row in rows:
        if len(row.cells) not in (7, 9):
            parsed.problems.append(
                ImportProblem(
                    row.line,
                    None,
                    f"{len(row.cells)} fields, expected 7 ({', '.join(STSB_FIELDS)}) or 9 (with attribution)",
                )
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
            parsed.problems.append(ImportProblem(row.line, "score", f"score {score!r} is outside 0-5"))
        parsed.records.append(SourceRecord(row.line, values, names))
    if attributed:
        parsed.ignored_columns.append("attribution")
        parsed.notes.append(
            f"{attributed:,} rows carry attribution fields (licence credits), which are not stored: "
            "keep the original file if the sentences are shown publicly"
        )
    return parsed


def parse_table(text: str, *, delimiter: str, name: str, detected: bool) -> ParsedFile:
    """A CSV or TSV file with a header naming the canonical fields (or their aliases)."""
    parsed = ParsedFile(name)
    quoted = delimiter == ","
    rows = _table_rows(text, delimiter=delimiter, quoted=quoted, parsed=parsed)
    if not rows:
        return parsed
    header, data = rows[0], rows[1:]
    parsed.paraeval_export = EXPORT_MARKER in {cell.strip().lower() for cell in header.cells}
    if parsed.paraeval_export:
        header = Row(header.line, [restore(cell) for cell in header.cells])
    columns: dict[str, int] = {}
    names: dict[str, str] = {}
    for index, cell in enumerate(header.cells):
        canonical = f.canonical_name(cell)
        if canonical is None:
            parsed.ignored_columns.append(cell)
        elif canonical in columns:
            parsed.problems.append(
                ImportProblem(
                    header.line, cell, f"columns {names[canonical]!r} and {cell!r} both give {canonical}; keep one"
                )
            )
        else:
            columns[canonical] = index
            names[canonical] = cell.strip()
    missing = [name for name in f.REQUIRED_FIELDS if name not in columns]
    if missing:
        message = f"missing required column {' and '.join(repr(name) for name in missing)}"
        message += f" (the header has {', '.join(repr(cell) for cell in header.cells)})"
        if delimiter == "," and any(";" in cell for cell in header.cells):
            message += "; the file seems to use ';' between cells: save it with commas (or as TSV)"
        elif detected:
            message += f"; {_RECOGNISED}"
        parsed.problems.append(ImportProblem(header.line, missing[0], message))
        return parsed
    what = "a comma inside a cell needs the cell in double quotes" if quoted else "tab-separated"
    for row in data:
        if len(row.cells) != len(header.cells):
            parsed.problems.append(
                ImportProblem(row.line, None, f"{len(row.cells)} fields, the header has {len(header.cells)} ({what})")
            )
            continue
        cells = [restore(cell) for cell in row.cells] if parsed.paraeval_export else row.cells
        values = {canonical: cells[index] for canonical, index in columns.items()}
        parsed.records.append(SourceRecord(row.line, values, names))
    return parsed


def parse_mappings(items: Iterable[tuple[int | None, object]], name: str) -> ParsedFile:
    """JSON objects (or dicts given in Python), each with the canonical fields as keys."""
    parsed = ParsedFile(name)
    seen_unknown: dict[str, None] = {}
    for line, item in items:
        if not isinstance(item, Mapping):
            parsed.problems.append(ImportProblem(line, None, "expected an object with source and hypothesis"))
            continue
        record, unknown, conflicts = canonical_record(line, item)
        seen_unknown.update(dict.fromkeys(unknown))
        parsed.problems.extend(ImportProblem(line, None, conflict) for conflict in conflicts)
        parsed.records.append(record)
    parsed.ignored_columns = list(seen_unknown)
    return parsed


def parse_jsonl(text: str) -> ParsedFile:
    """JSON Lines: one object a line."""
    problems: list[ImportProblem] = []
    objects: list[tuple[int | None, object]] = []
    for item in read_jsonl(text):
        if isinstance(item, JsonObject):
            objects.append((item.line, item.value))
        else:
            problems.append(item)
    parsed = parse_mappings(objects, "jsonl")
    parsed.problems = problems + parsed.problems
    return parsed


_PARSERS: dict[str, Callable[[str, bool], ParsedFile]] = {
    "mrpc": lambda text, detected: parse_mrpc(text),
    "paws": lambda text, detected: parse_paws(text),
    "stsb": lambda text, detected: parse_stsb(text),
    "csv": lambda text, detected: parse_table(text, delimiter=",", name="csv", detected=detected),
    "tsv": lambda text, detected: parse_table(text, delimiter="\t", name="tsv", detected=detected),
    "jsonl": lambda text, detected: parse_jsonl(text),
}


def parse_file(data: bytes | str, *, format: str = "auto", filename: str = "") -> ParsedFile:
    """Decode, recognise and read a file. Problems of single records are collected in the
    result; a file that cannot be read at all (encoding, empty, unknown format) is refused."""
    if format not in FORMAT_CHOICES:
        raise ValueError(f"unknown import format {format!r}; choose one of {', '.join(FORMAT_CHOICES)}")
    text = decode(data) if isinstance(data, bytes) else data.removeprefix("\ufeff")
    if not text.strip():
        raise ImportRefused([ImportProblem(None, None, "the file is empty")])
    detected = format == "auto"
    name = detect_format(text, filename) if detected else format
    return _PARSERS[name](text, detected)
