"""CSV-injection neutralisation is safe and exactly reversible."""

import pytest

from annotate.exports.spreadsheet import neutralise, restore


@pytest.mark.parametrize("cell", ["=SUM(A1:A2)", "+1", "-2", "@cmd", "\tx", "\rx", "'=x", "''+x"])
def test_dangerous_cells_are_prefixed(cell):
    assert neutralise(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["", "plain", "'quoted'", "a=b", " =x", "'", "'x", "日本語"])
def test_harmless_cells_are_unchanged(cell):
    assert neutralise(cell) == cell


@pytest.mark.parametrize("cell", ["", "=x", "'=x", "''=x", "'", "''", "'x", "-", "'-", "text", "@", "\t", "'\r", "x=1"])
def test_round_trip(cell):
    assert restore(neutralise(cell)) == cell
    assert neutralise(restore(neutralise(cell))) == neutralise(cell)
