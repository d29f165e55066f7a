"""Gold labels at import: a named gold column, a value mapping, a constant label, and label-like
columns that are never dropped in silence (a warning; a refusal with ``--strict``)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.importers import ImportOptionError, ImportOptions, ImportRefused, import_file
from annotate.importers.options import looks_like_label, parse_gold_map, value_key
from annotate.models import Campaign, Pair
from tests.api_support import *  # noqa: F403
from tests.builders import make_campaign
from tests.corpora import MISSING_REASON, SHARED_DATA

SHARED = SHARED_DATA / "paraphrasus"

# A small file shaped like PARAPHRASUS' STS-H (same header names, codes 1 / 0 / -100).
STSH_HEADER = [
    "Unnamed: 0",
    "id",
    "data set",
    "lang",
    "sentence1",
    "sentence2",
    "score",
    "Human Annotation - P1",
    "LLama3 zero-shot (Paraph)",
    "Human Annotation - P2",
    "Human Annotation - Consensus",
]
STSH_ROWS = [
    ["0", "sts-1", "mteb", "en", "A train is moving.", "A man is doing yoga.", "0.0", "0.0", "0", "-100.0", "-100.0"],
    ["1", "sts-2", "mteb", "en", "A cat sleeps.", "A cat is asleep.", "4.8", "1.0", "1", "1.0", "1.0"],
    ["2", "sts-3", "mteb", "en", "A dog runs.", "A dog is running fast.", "4.2", "1.0", "1", "0.0", "0.0"],
]
STSH_WARNINGS = [
    f"column {name!r} looks like a gold label and is ignored: name it as the gold column "
    "(with a value mapping if its values are codes) to use it, or list it among the columns "
    "to ignore to silence this warning"
    for name in ("score", "Human Annotation - P1", "Human Annotation - P2", "Human Annotation - Consensus")
]
CONSENSUS_MAP = "1=paraphrase,0=non-paraphrase,-100=unlabelled"


def write_tsv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    path.write_text("\n".join("\t".join(row) for row in [header, *rows]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def stsh(tmp_path: Path) -> Path:
    return write_tsv(tmp_path / "stsh.tsv", STSH_HEADER, STSH_ROWS)


@pytest.fixture
def true_file(tmp_path: Path) -> Path:
    return write_tsv(
        tmp_path / "true.tsv",
        ["sentence1", "sentence2", "XLM-R-EN"],
        [["The boy desires the girl.", "The boy has a desire for the girl.", "1"], ["He left.", "He went away.", "0"]],
    )


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_pairs", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def gold(slug: str) -> list[tuple[str, bool | None, float | None]]:
    return list(
        Pair.objects.filter(campaign__slug=slug).order_by("pk").values_list("external_id", "gold_label", "gold_score")
    )


# --- pure rules ---------------------------------------------------------------------------------


def test_label_like_names():
    assert [looks_like_label(name) for name in STSH_HEADER] == [
        False,
        False,
        False,
        False,
        False,
        False,
        True,
        True,
        False,
        True,
        True,
    ]
    assert looks_like_label("Quality") and looks_like_label("is_paraphrase") and looks_like_label("gold")
    assert not looks_like_label("score[lev]") and not looks_like_label("XLM-R-EN")


def test_values_match_as_numbers_and_words():
    assert value_key("1") == value_key("1.0") == value_key(1) == value_key(" 1.00 ")
    assert value_key("-100") == value_key("-100.0")
    assert value_key("Yes ") == value_key("yes") != value_key("1")
    assert parse_gold_map("1=paraphrase, 0=Non-paraphrase,-100=unlabelled,x=3.5") == {
        "1": "paraphrase",
        "0": "non-paraphrase",
        "-100": "unlabelled",
        "x": 3.5,
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gold_map": {"1": "maybe"}}, "'maybe' is not a gold target"),
        ({"gold_map": {"1": float("nan")}}, "nan is not a finite score"),
        ({"gold_constant": "paraphrase", "gold_column": "x"}, "exclude each other"),
        ({"gold_constant": "yes"}, "must be paraphrase or non-paraphrase, not 'yes'"),
        ({"gold_as": "score", "gold_map": {"1": "paraphrase"}}, "leave gold_as at label"),
    ],
)
def test_options_that_do_not_fit_together(kwargs, message):
    with pytest.raises(ImportOptionError, match=message):
        ImportOptions(**kwargs)


def test_a_gold_map_needs_value_equals_target():
    with pytest.raises(ImportOptionError, match="'1:paraphrase' is not VALUE=TARGET"):
        parse_gold_map("1:paraphrase")


# --- the importer -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_without_options_the_labels_are_named_not_dropped_in_silence(stsh):
    campaign = make_campaign(slug="stsh")
    report = import_file(campaign, stsh)
    assert report.warnings == STSH_WARNINGS
    assert (report.gold_paraphrases, report.gold_non_paraphrases, report.gold_scores) == (0, 0, 0)
    assert report.notes[-1].startswith("no pair has a gold label or a graded score")
    assert gold("stsh") == [("sts-1", None, None), ("sts-2", None, None), ("sts-3", None, None)]


@pytest.mark.django_db
def test_gold_column_with_a_mapping_stores_each_row_as_mapped(stsh):
    out, err = run(
        str(stsh),
        "--campaign",
        "stsh",
        "--create",
        "--gold-column",
        "human annotation - consensus",  # matched whatever its case
        "--gold-map",
        CONSENSUS_MAP,
        "--ignore-columns",
        "score,Human Annotation - P1",
    )
    assert err == ""
    assert out.splitlines() == [
        "Created campaign 'stsh'.",
        "Imported 3 pairs into campaign 'stsh'.",
        "  format: tsv",
        "  training pairs: 0",
        "  check pairs: 0",
        "  ignored columns: Unnamed: 0, data set, lang, score, Human Annotation - P1, LLama3 zero-shot (Paraph), "
        "Human Annotation - P2",
        "  gold: 2 labelled (1 paraphrase, 1 non-paraphrase), 0 with a graded score",
        "  warning: " + STSH_WARNINGS[2],
    ]
    assert gold("stsh") == [("sts-1", None, None), ("sts-2", True, None), ("sts-3", False, None)]


@pytest.mark.django_db
def test_strict_refuses_and_stores_nothing_not_even_the_campaign(stsh):
    with pytest.raises(CommandError, match="refused \\(4 problems\\); nothing was stored"):
        run(str(stsh), "--campaign", "stsh", "--create", "--strict")
    assert not Campaign.objects.filter(slug="stsh").exists()
    assert Pair.objects.count() == 0
    # The importer itself: rows already inserted in the transaction are rolled back.
    campaign = make_campaign(slug="kept")
    with pytest.raises(ImportRefused) as refused:
        import_file(campaign, stsh, options=ImportOptions(gold_column="Human Annotation - Consensus", strict=True))
    assert [str(problem) for problem in refused.value.problems] == [
        *(f"{warning} (strict import)" for warning in STSH_WARNINGS[:3]),
        "line 2: Human Annotation - Consensus '-100.0' is not a gold label "
        "(use 1/0, true/false, yes/no or paraphrase/not paraphrase)",
    ]
    assert Pair.objects.filter(campaign=campaign).count() == 0


@pytest.mark.django_db
def test_strict_passes_once_every_label_like_column_is_used_or_ignored(stsh):
    campaign = make_campaign(slug="stsh")
    options = ImportOptions(
        gold_column="Human Annotation - Consensus",
        gold_map=parse_gold_map(CONSENSUS_MAP),
        ignore_columns=("score", "Human Annotation - P1", "Human Annotation - P2"),
        strict=True,
    )
    report = import_file(campaign, stsh, options=options)
    assert report.warnings == []
    assert (report.created, report.gold_paraphrases, report.gold_non_paraphrases) == (3, 1, 1)


@pytest.mark.django_db
def test_strict_refusal_lists_the_label_like_columns(stsh):
    campaign = make_campaign(slug="stsh")
    options = ImportOptions(
        gold_column="Human Annotation - Consensus", gold_map=parse_gold_map(CONSENSUS_MAP), strict=True
    )
    with pytest.raises(ImportRefused) as refused:
        import_file(campaign, stsh, options=options)
    assert [str(problem) for problem in refused.value.problems] == [
        f"{warning} (strict import)" for warning in STSH_WARNINGS[:3]
    ]
    assert Pair.objects.count() == 0


@pytest.mark.django_db
def test_a_value_the_mapping_does_not_name_refuses_the_file(tmp_path):
    rows = [row[:] for row in STSH_ROWS]
    rows[2][-1] = "0.5"
    path = write_tsv(tmp_path / "odd.tsv", STSH_HEADER, rows)
    campaign = make_campaign(slug="odd")
    options = ImportOptions(gold_column="Human Annotation - Consensus", gold_map=parse_gold_map(CONSENSUS_MAP))
    with pytest.raises(ImportRefused) as refused:
        import_file(campaign, path, options=options)
    assert [str(problem) for problem in refused.value.problems] == [
        "line 4: Human Annotation - Consensus '0.5' is not in the gold mapping "
        "(1 -> paraphrase, 0 -> non-paraphrase, -100 -> unlabelled)"
    ]
    assert Pair.objects.count() == 0


@pytest.mark.django_db
def test_a_gold_column_that_is_not_there_refuses_the_file(stsh):
    campaign = make_campaign(slug="stsh")
    with pytest.raises(ImportRefused) as refused:
        import_file(campaign, stsh, options=ImportOptions(gold_column="Consensus"))
    assert str(refused.value.problems[0]).startswith(
        "line 1: the gold column 'Consensus' is not in the header (the header has 'Unnamed: 0', 'id',"
    )
    assert Pair.objects.count() == 0


@pytest.mark.django_db
def test_a_mapping_to_numbers_gives_graded_scores_and_gold_as_score_reads_numbers(stsh):
    campaign = make_campaign(slug="graded")
    mapping = {"1": 5, "0": 0, "-100": "unlabelled"}
    report = import_file(
        campaign,
        stsh,
        options=ImportOptions(gold_column="Human Annotation - P2", gold_map=mapping, ignore_columns=STSH_HEADER),
    )
    assert (report.gold_scores, report.gold_paraphrases, report.warnings) == (2, 0, [])
    assert gold("graded") == [("sts-1", None, None), ("sts-2", None, 5.0), ("sts-3", None, 0.0)]

    other = make_campaign(slug="scored")
    import_file(other, stsh, options=ImportOptions(gold_column="score", gold_as="score"))
    assert gold("scored") == [("sts-1", None, 0.0), ("sts-2", None, 4.8), ("sts-3", None, 4.2)]


@pytest.mark.django_db
def test_a_constant_label_for_a_file_of_paraphrases_by_construction(true_file):
    out, _ = run(str(true_file), "--campaign", "true", "--create", "--gold-constant", "paraphrase")
    assert "  gold: 2 labelled (2 paraphrase, 0 non-paraphrase), 0 with a graded score" in out.splitlines()
    assert [label for _, label, _ in gold("true")] == [True, True]


@pytest.mark.django_db
def test_a_constant_label_and_a_row_label_refuse_the_file(tmp_path):
    path = tmp_path / "labelled.csv"
    path.write_text("source,hypothesis,label\nA b.,C d.,0\nE f.,G h.,\n", encoding="utf-8")
    campaign = make_campaign(slug="both")
    with pytest.raises(ImportRefused) as refused:
        import_file(campaign, path, options=ImportOptions(gold_constant="non-paraphrase"))
    assert [str(problem) for problem in refused.value.problems] == [
        "line 2: label gives this pair its own gold, and the whole file was given the constant gold label "
        "non-paraphrase: choose one"
    ]
    assert Pair.objects.count() == 0


@pytest.mark.django_db
def test_jsonl_gold_key_and_mapping(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        '{"source": "A b.", "hypothesis": "C d.", "verdict": "same"}\n'
        '{"source": "E f.", "hypothesis": "G h.", "verdict": "different"}\n',
        encoding="utf-8",
    )
    campaign = make_campaign(slug="jsonl")
    report = import_file(
        campaign,
        path,
        options=ImportOptions(gold_column="verdict", gold_map={"same": "paraphrase", "different": "non-paraphrase"}),
    )
    assert report.ignored_columns == []
    assert [label for _, label, _ in gold("jsonl")] == [True, False]


@pytest.mark.django_db
def test_command_refuses_a_bad_mapping_before_reading(stsh):
    with pytest.raises(CommandError, match="'probably' is not a gold target"):
        run(str(stsh), "--campaign", "x", "--create", "--gold-map", "1=probably")
    with pytest.raises(CommandError, match="a mrpc file has its own gold column"):
        path = stsh.parent / "m.tsv"
        path.write_text("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tA b.\tC d.\n", encoding="utf-8")
        run(str(path), "--campaign", "x", "--create", "--gold-column", "Quality")
    assert not Campaign.objects.filter(slug="x").exists()


# --- the API ------------------------------------------------------------------------------------


def _records() -> list[dict[str, str]]:
    return [dict(zip(STSH_HEADER, row, strict=True)) for row in STSH_ROWS]


@pytest.mark.django_db
def test_api_gold_column_and_mapping(staff_api):
    make_campaign(slug="api-gold")
    body = {
        "campaign": "api-gold",
        "pairs": _records(),
        "gold_column": "Human Annotation - Consensus",
        "gold_map": {"1": "paraphrase", "0": "non-paraphrase", "-100": "unlabelled"},
        "ignore_columns": ["score", "Human Annotation - P1", "Human Annotation - P2"],
    }
    response = staff_api.post("/api/pairs/", body, format="json")
    assert response.status_code == 201, response.json()
    answer = response.json()
    assert (answer["gold_paraphrases"], answer["gold_non_paraphrases"], answer["gold_scores"]) == (1, 1, 0)
    assert answer["warnings"] == []
    assert gold("api-gold") == [("sts-1", None, None), ("sts-2", True, None), ("sts-3", False, None)]


@pytest.mark.django_db
def test_api_strict_refuses_with_nothing_stored_and_bad_options_are_400(staff_api):
    make_campaign(slug="api-gold")
    response = staff_api.post(
        "/api/pairs/", {"campaign": "api-gold", "pairs": _records(), "strict": True}, format="json"
    )
    assert response.status_code == 400
    assert [problem["message"] for problem in response.json()["problems"]] == [
        f"{warning} (strict import)" for warning in STSH_WARNINGS
    ]
    assert Pair.objects.count() == 0

    plain = staff_api.post("/api/pairs/", {"campaign": "api-gold", "pairs": _records()}, format="json")
    assert plain.status_code == 201 and plain.json()["warnings"] == STSH_WARNINGS
    Pair.objects.all().delete()

    bad = staff_api.post(
        "/api/pairs/",
        {"campaign": "api-gold", "pairs": _records(), "gold_column": "x", "gold_map": {"1": "sure"}},
        format="json",
    )
    assert bad.status_code == 400
    assert bad.json() == {
        "gold_map": {"1": ["'sure' is not a gold target: a number, paraphrase, non-paraphrase or unlabelled"]}
    }
    both = staff_api.post(
        "/api/pairs/",
        {"campaign": "api-gold", "pairs": _records(), "gold_column": "x", "gold_constant": "paraphrase"},
        format="json",
    )
    assert both.status_code == 400
    assert both.json() == {
        "gold": ["a constant gold label and a gold column (or mapping) exclude each other: choose one"]
    }
    absent = staff_api.post(
        "/api/pairs/",
        {"campaign": "api-gold", "pairs": _records(), "gold_column": "verdict", "ignore_columns": STSH_HEADER},
        format="json",
    )
    assert absent.status_code == 201
    assert absent.json()["warnings"] == ["no record has the gold key 'verdict': no gold was read from it"]
    Pair.objects.all().delete()
    assert Pair.objects.count() == 0


# --- the shared PARAPHRASUS files -----------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.skipif(not SHARED.is_dir(), reason=MISSING_REASON)
def test_shared_paraphrasus_files_import_with_their_labels():
    stsh = make_campaign(slug="stsh")
    report = import_file(
        stsh,
        SHARED / "stsbenchmark-test-sts.tsv",
        origin="sts-h",
        options=ImportOptions(gold_column="Human Annotation - Consensus", gold_map=parse_gold_map(CONSENSUS_MAP)),
    )
    assert (report.created, report.gold_paraphrases, report.gold_non_paraphrases) == (1379, 109, 229)
    true = make_campaign(slug="true")
    report = import_file(
        true, SHARED / "amr_true_paraphrases.tsv", origin="true", options=ImportOptions(gold_constant="paraphrase")
    )
    assert (report.created, report.gold_paraphrases, report.warnings) == (167, 167, [])


@pytest.mark.django_db
def test_a_mapping_applies_to_a_corpus_format_own_label_column(tmp_path):
    path = tmp_path / "paws.tsv"
    path.write_text("id\tsentence1\tsentence2\tlabel\n1\tA b.\tC d.\tyes\n2\tE f.\tG h.\tno\n", encoding="utf-8")
    campaign = make_campaign(slug="paws")
    report = import_file(campaign, path, options=ImportOptions(gold_map={"yes": "non-paraphrase", "no": 2.5}))
    assert (report.format, report.gold_non_paraphrases, report.gold_scores) == ("paws", 1, 1)
    assert gold("paws") == [("1", False, None), ("2", None, 2.5)]
    stsb = tmp_path / "sts.tsv"
    stsb.write_text("main-captions\tMSRvid\t2012test\t0001\t5.000\tA b.\tC d.\n", encoding="utf-8")
    with pytest.raises(ImportOptionError, match="an STS-B file gives graded scores"):
        import_file(campaign, stsb, format="stsb", options=ImportOptions(gold_map={"1": "paraphrase"}))
    assert Pair.objects.filter(campaign=campaign).count() == 2
