"""Make text cells safe to open in a spreadsheet, reversibly.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return would be read
as a formula by Excel or LibreOffice (CSV injection). :func:`neutralise` prefixes such a cell
with an apostrophe; :func:`restore` undoes it exactly, so a re-imported export round-trips.
A cell that already starts with an apostrophe followed by a dangerous cell is prefixed too,
which keeps the mapping one-to-one.
"""

from __future__ import annotations

DANGEROUS_FIRST_CHARACTERS = frozenset("=+-@\t\r")
PREFIX = "'"


def needs_prefix(cell: str) -> bool:
    """Whether a spreadsheet could read ``cell`` as a formula (or it looks like a prefixed one)."""
    if not cell:
        return False
    if cell[0] in DANGEROUS_FIRST_CHARACTERS:
        return True
    return cell[0] == PREFIX and needs_prefix(cell[1:])


def neutralise(cell: str) -> str:
    """Return ``cell`` with an apostrophe in front when a spreadsheet would run it."""
    return PREFIX + cell if needs_prefix(cell) else cell


def restore(cell: str) -> str:
    """Inverse of :func:`neutralise`: ``restore(neutralise(x)) == x`` for every string."""
    if cell.startswith(PREFIX) and needs_prefix(cell[1:]):
        return cell[1:]
    return cell
