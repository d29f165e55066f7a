"""Tables as Markdown, CSV or LaTeX text (``manage.py evaluate_metrics --format``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from scoring.reports.tables import Table

FORMATS = ("markdown", "csv", "latex")


def _column_labels(table: Table) -> list[str]:
    """Flat column names: "MRPC yes" when the columns are grouped."""
    if not table.groups:
        return list(table.columns)
    labels: list[str] = []
    position = 0
    for group, span in table.groups:
        labels.extend(f"{group} {name}" for name in table.columns[position : position + span])
        position += span
    return labels


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(tables: Iterable[Table], preamble: str = "") -> str:
    """GitHub-flavoured Markdown; the best value of each column in bold."""
    out: list[str] = [preamble.rstrip() + "\n"] if preamble else []
    for table in tables:
        out.append(f"### {table.title}\n")
        out.append(f"{table.caption}\n")
        if table.note:
            out.append(f"_{table.note}_\n")
        if not table.rows:
            continue
        header = [*table.row_header, *_column_labels(table)]
        out.append("| " + " | ".join(_md_escape(h) for h in header) + " |")
        out.append(
            "|" + "|".join([":--"] * len(table.row_header) + ["--:"] * (len(header) - len(table.row_header))) + "|"
        )
        for row in table.rows:
            leading = [row.label if row.first else ""]
            if len(table.row_header) > 1:
                leading.append(row.stat)
            cells = [f"**{c.text}**" if c.best else c.text for c in row.cells]
            out.append("| " + " | ".join(_md_escape(x) for x in [*leading, *cells]) + " |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def csv_text(tables: Iterable[Table]) -> str:
    """One row per cell (tidy form): table, metric, statistic, column, text, value, best."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["table", "row", "statistic", "column", "text", "value", "best"])
    for table in tables:
        columns = _column_labels(table)
        for row in table.rows:
            for column, cell in zip(columns, row.cells, strict=True):
                value = "" if cell.value is None else repr(float(cell.value))
                writer.writerow([table.key, row.label, row.stat, column, cell.text, value, int(cell.best)])
    return buffer.getvalue()


_LATEX_REPLACEMENTS = [
    ("\\", r"\textbackslash{}"),
    ("&", r"\&"),
    ("%", r"\%"),
    ("$", r"\$"),
    ("#", r"\#"),
    ("_", r"\_"),
    ("{", r"\{"),
    ("}", r"\}"),
    ("~", r"\textasciitilde{}"),
    ("^", r"\textasciicircum{}"),
]
_LATEX_SYMBOLS = {
    "±": r"$\pm$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "↑": r"$\uparrow$",
    "↓": r"$\downarrow$",
    "—": "---",
    "\u2013": "--",  # en dash
    "\u2212": "-",  # minus sign
    "\u03b1": r"$\alpha$",
    "\u03ba": r"$\kappa$",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX specials and spell the symbols our tables use."""
    for plain, escaped in _LATEX_REPLACEMENTS:
        text = text.replace(plain, escaped)
    for symbol, command in _LATEX_SYMBOLS.items():
        text = text.replace(symbol, command)
    return text


def latex(tables: Iterable[Table], preamble: str = "") -> str:
    """One ``table`` environment per table (booktabs rules); best values in \\textbf."""
    out: list[str] = [f"% {line}" for line in preamble.strip().splitlines()] if preamble else []
    out.append("% Requires \\usepackage{booktabs}")
    for table in tables:
        if not table.rows:
            out.append(f"% {latex_escape(table.title)}: {latex_escape(table.note)}")
            continue
        lead = len(table.row_header)
        spec = "l" * lead + "r" * len(table.rows[0].cells)
        out += ["\\begin{table}[ht]", "\\centering", "\\small", f"\\begin{{tabular}}{{{spec}}}", "\\toprule"]
        if table.groups:
            groups = " & ".join(
                f"\\multicolumn{{{span}}}{{c}}{{{latex_escape(label)}}}" for label, span in table.groups
            )
            out.append("& " * lead + groups + " \\\\")
            rules = []
            position = lead + 1
            for _, span in table.groups:
                rules.append(f"\\cmidrule(lr){{{position}-{position + span - 1}}}")
                position += span
            out.append(" ".join(rules))
        out.append(" & ".join(latex_escape(h) for h in [*table.row_header, *table.columns]) + " \\\\")
        out.append("\\midrule")
        for index, row in enumerate(table.rows):
            if row.first and index and lead > 1:
                out.append("\\midrule")
            leading = [latex_escape(row.label) if row.first else ""]
            if lead > 1:
                leading.append(latex_escape(row.stat))
            cells = [f"\\textbf{{{latex_escape(c.text)}}}" if c.best else latex_escape(c.text) for c in row.cells]
            out.append(" & ".join([*leading, *cells]) + " \\\\")
        out += [
            "\\bottomrule",
            "\\end{tabular}",
            f"\\caption{{{latex_escape(table.title)}. {latex_escape(table.caption)}}}",
            f"\\label{{tab:{table.key}}}",
            "\\end{table}",
            "",
        ]
    return "\n".join(out).rstrip() + "\n"


def render(tables: list[Table], fmt: str, preamble: str = "") -> str:
    """Render ``tables`` in one of :data:`FORMATS`."""
    if fmt == "markdown":
        return markdown(tables, preamble)
    if fmt == "csv":
        return csv_text(tables)
    if fmt == "latex":
        return latex(tables, preamble)
    raise ValueError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
