"""The importer's ``column_map``: the pair field of each column (CSV, TSV) or key (JSONL),
as the upload page's mapping gives it; the command and the API read files the same way."""

from __future__ import annotations

import pytest

from annotate.importers import ImportRefused, import_file
from annotate.importers.formats import ImportOptionError
from annotate.models import Pair
from tests.builders import make_campaign

pytestmark = pytest.mark.django_db

MAPPING = {"a": "source", "b": "hypothesis", "key": "external_id", "note": "", "label": ""}


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("pairs.csv", "key,a,b,note,label\nk1,One.,Uno.,x,1\nk2,Two.,Dos.,y,0\n"),
        ("pairs.tsv", "key\ta\tb\tnote\tlabel\nk1\tOne.\tUno.\tx\t1\nk2\tTwo.\tDos.\ty\t0\n"),
        (
            "pairs.jsonl",
            '{"key": "k1", "a": "One.", "b": "Uno.", "note": "x", "label": 1}\n'
            '{"key": "k2", "a": "Two.", "b": "Dos.", "note": "y", "label": 0}\n',
        ),
    ],
)
def test_columns_are_stored_as_the_map_says(tmp_path, name: str, content: str) -> None:
    campaign = make_campaign()
    path = tmp_path / name
    path.write_text(content)
    report = import_file(campaign, path, column_map=MAPPING)
    assert report.created == 2
    # "label" would be read as the gold label by its name; the map ignores it.
    assert sorted(report.ignored_columns) == ["label", "note"]
    rows = list(Pair.objects.filter(campaign=campaign).values_list("external_id", "source", "hypothesis", "gold_label"))
    assert rows == [("k1", "One.", "Uno.", None), ("k2", "Two.", "Dos.", None)]


def test_columns_the_map_leaves_out_keep_their_names(tmp_path) -> None:
    campaign = make_campaign()
    path = tmp_path / "pairs.csv"
    path.write_text("a,hypothesis,label\nOne.,Uno.,1\n")
    import_file(campaign, path, column_map={"a": "source"})
    assert list(Pair.objects.values_list("source", "hypothesis", "gold_label")) == [("One.", "Uno.", True)]


def test_a_map_that_leaves_a_sentence_out_is_refused_naming_the_header(tmp_path) -> None:
    campaign = make_campaign()
    path = tmp_path / "pairs.csv"
    path.write_text("a,b\nOne.,Uno.\n")
    with pytest.raises(ImportRefused) as refused:
        import_file(campaign, path, column_map={"a": "source", "b": ""})
    assert [(p.line, p.field) for p in refused.value.problems] == [(1, "hypothesis")]
    assert Pair.objects.count() == 0
    with pytest.raises(ImportOptionError, match="column 'a' is mapped to 'password', which is not a pair field"):
        import_file(campaign, path, column_map={"a": "password"})
