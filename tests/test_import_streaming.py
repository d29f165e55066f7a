"""A file is streamed: bounded memory, batches inside one transaction, all or nothing; the
``system`` column; files without a header (``--no-header``)."""

from __future__ import annotations

import gc
import io
import tracemalloc
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.importers import ImportRefused, import_file, import_records
from annotate.importers import pipeline as import_pipeline
from annotate.importers.formats import ImportOptionError
from annotate.importers.problems import MAX_PROBLEMS_KEPT
from annotate.models import Pair
from benchmarks.import_memory import write_csv
from tests.builders import make_campaign

pytestmark = pytest.mark.django_db

PAWS_ROWS = "1\tThe cat sleeps.\tThe cat is asleep.\t1\n2\tIt rains in Paris.\tParis is dry.\t0\n"


def command(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_pairs", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


# --- batches inside the one transaction, all or nothing ------------------------------------------


def test_a_file_of_many_batches_is_stored_in_file_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(import_pipeline, "BATCH_SIZE", 7)
    path = tmp_path / "pairs.csv"
    path.write_text("id,source,hypothesis\n" + "".join(f"p{n},Source {n}.,Hypothesis {n}.\n" for n in range(50)))
    campaign = make_campaign()
    report = import_file(campaign, path)
    stored = list(campaign.pairs.order_by("id").values_list("id", "external_id"))
    assert report.created == 50
    assert [external_id for _, external_id in stored] == [f"p{n}" for n in range(50)]
    assert report.pair_ids == [pk for pk, _ in stored]


def test_a_bad_line_after_stored_batches_leaves_nothing_and_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches of 7 were inserted before line 46 is read: the refusal rolls them all back."""
    monkeypatch.setattr(import_pipeline, "BATCH_SIZE", 7)
    inserted: list[int] = []
    real_insert = import_pipeline._insert
    monkeypatch.setattr(import_pipeline, "_insert", lambda batch: inserted.append(len(batch)) or real_insert(batch))
    rows = [f"p{n},Source {n}.,Hypothesis {n}.\n" for n in range(60)]
    rows[44] = "p44,,Hypothesis 44.\n"  # line 46 (the header is line 1)
    rows[57] = "p3,Source 57.,Hypothesis 57.\n"  # line 59: an id of line 5
    path = tmp_path / "pairs.csv"
    path.write_text("id,source,hypothesis\n" + "".join(rows))
    campaign = make_campaign()
    with pytest.raises(ImportRefused) as caught:
        import_file(campaign, path)
    assert inserted == [7, 7, 7, 7, 7, 7]  # 42 pairs were in the database before the bad line
    assert str(caught.value) == "line 46: source is empty\nline 59: id 'p3' is used twice (first on line 5)"
    assert Pair.objects.count() == 0


def test_a_refusal_counts_every_problem_and_keeps_the_first(tmp_path: Path) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text("source,hypothesis\n" + ",Empty source.\n" * (MAX_PROBLEMS_KEPT + 5))
    with pytest.raises(ImportRefused) as caught:
        import_file(make_campaign(), path)
    assert caught.value.count == MAX_PROBLEMS_KEPT + 5
    assert len(caught.value.problems) == MAX_PROBLEMS_KEPT
    assert str(caught.value.problems[-1]) == f"line {MAX_PROBLEMS_KEPT + 1}: source is empty"
    assert str(caught.value).splitlines()[-1] == f"... and {MAX_PROBLEMS_KEPT + 5 - 50:,} more"


def test_the_command_reports_the_count_of_all_problems(tmp_path: Path) -> None:
    make_campaign(slug="many")
    path = tmp_path / "pairs.csv"
    path.write_text("source,hypothesis\n" + ",Empty source.\n" * (MAX_PROBLEMS_KEPT + 5))
    with pytest.raises(CommandError, match=f"refused \\({MAX_PROBLEMS_KEPT + 5:,} problems\\); nothing was stored"):
        command(str(path), "--campaign", "many")


@pytest.mark.slow
def test_importing_a_large_file_needs_memory_for_a_batch_not_for_the_file(tmp_path: Path) -> None:
    """A ~20 MB CSV: the Python memory the import allocates at its peak (tracemalloc, which
    counts what the importer holds, not what the allocator keeps) stays a fraction of the file.
    Reading the file whole, as before, needed about ten times its size."""
    path = tmp_path / "large.csv"
    rows = write_csv(path, 20)
    size = path.stat().st_size
    # A small import first: what is loaded once per process (modules, query caches) is not counted.
    small = tmp_path / "small.csv"
    write_csv(small, 0.001)
    import_file(make_campaign(), small)
    campaign = make_campaign()
    gc.collect()
    tracemalloc.start()
    try:
        report = import_file(campaign, path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.created == rows == campaign.pairs.count()
    # What must stay per pair (its id with its line, a hash of its texts, its new id) comes to
    # ~0.75x a generated row's size (measured: 14.8 MiB for 20 MiB); holding the file, its text
    # or its rows at once is 1x to 10x more on top.
    assert peak < 1.0 * size, f"peak {peak / 2**20:.1f} MiB for a {size / 2**20:.1f} MiB file"


# --- the system column -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("pairs.csv", "id,source,hypothesis,system\na,A b.,C d., gpt-4o \nb,E f.,G h.,\n"),
        ("pairs.tsv", "id\tsource\thypothesis\tsystem\na\tA b.\tC d.\t gpt-4o \nb\tE f.\tG h.\t\n"),
        (
            "pairs.jsonl",
            '{"id": "a", "source": "A b.", "hypothesis": "C d.", "system": " gpt-4o "}\n'
            '{"id": "b", "source": "E f.", "hypothesis": "G h."}\n',
        ),
    ],
)
def test_the_system_column_is_stored(tmp_path: Path, name: str, content: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    campaign = make_campaign()
    report = import_file(campaign, path)
    assert report.ignored_columns == []
    assert list(campaign.pairs.order_by("id").values_list("external_id", "system")) == [("a", "gpt-4o"), ("b", "")]


def test_a_system_name_over_100_characters_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ImportRefused) as caught:
        import_records(make_campaign(), [{"source": "A b.", "hypothesis": "C d.", "system": "s" * 101}])
    assert str(caught.value) == "line 1: system is 101 characters long; the limit is 100"


# --- files without a header line ------------------------------------------------------------------


def test_paws_rows_without_a_header_import_with_no_header(tmp_path: Path) -> None:
    path = tmp_path / "paws_dev.tsv"
    path.write_text(PAWS_ROWS, encoding="utf-8")
    make_campaign(slug="paws")
    out, _ = command(str(path), "--campaign", "paws", "--format", "paws", "--no-header")
    assert out.splitlines()[:2] == ["Imported 2 pairs into campaign 'paws'.", "  format: paws"]
    stored = Pair.objects.filter(campaign__slug="paws").order_by("id")
    assert list(stored.values_list("external_id", "source", "hypothesis", "gold_label", "origin")) == [
        ("1", "The cat sleeps.", "The cat is asleep.", True, "paws"),
        ("2", "It rains in Paris.", "Paris is dry.", False, "paws"),
    ]


def test_without_no_header_the_first_paws_row_is_named_as_a_bad_header(tmp_path: Path) -> None:
    path = tmp_path / "paws_dev.tsv"
    path.write_text(PAWS_ROWS, encoding="utf-8")
    with pytest.raises(ImportRefused) as caught:
        import_file(make_campaign(), path, format="paws")
    assert str(caught.value) == (
        "line 1: the PAWS header should be id, sentence1, sentence2, label (tab-separated), "
        "found 1, The cat sleeps., The cat is asleep., 1"
    )


def test_a_tsv_without_a_header_takes_the_columns_given(tmp_path: Path) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text("x1\tA b.\tC d.\tmodel-a\nx2\tE f.\tG h.\tmodel-b\n", encoding="utf-8")
    make_campaign(slug="plain")
    command(
        str(path), "--campaign", "plain", "--format", "tsv", "--no-header", "--columns", "id,source,hypothesis,system"
    )
    stored = Pair.objects.filter(campaign__slug="plain").order_by("id")
    assert list(stored.values_list("external_id", "source", "system")) == [
        ("x1", "A b.", "model-a"),
        ("x2", "E f.", "model-b"),
    ]


def test_no_header_options_that_do_not_fit_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text(PAWS_ROWS, encoding="utf-8")
    make_campaign(slug="opts")
    with pytest.raises(CommandError, match="a file without a header needs its format: paws or mrpc"):
        command(str(path), "--campaign", "opts", "--no-header")
    with pytest.raises(CommandError, match="a tsv file without a header needs the names of its columns"):
        command(str(path), "--campaign", "opts", "--no-header", "--format", "tsv")
    with pytest.raises(CommandError, match="--columns is only used with --no-header"):
        command(str(path), "--campaign", "opts", "--columns", "id,source,hypothesis")
    with pytest.raises(ImportOptionError, match="unknown import format 'xls'"):
        import_file(make_campaign(), path, format="xls")
    assert Pair.objects.count() == 0
