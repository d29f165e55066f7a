"""Formats recognised by their header, real corpora, canonical fields and training pairs."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pytest

from annotate.importers import ImportRefused, import_file, import_records
from annotate.importers.formats import detect_format, parse_file
from annotate.labels import Label
from annotate.models import Pair
from tests.builders import make_campaign, make_pair
from tests.corpora import MISSING_REASON, SHARED_DATA

DATA = SHARED_DATA
MRPC_TEST = DATA / "mrpc" / "msr_paraphrase_test.txt"
STSB_TEST = DATA / "stsb" / "sts-test.csv"
TRUE_PARAPHRASES = DATA / "paraphrasus" / "amr_true_paraphrases.tsv"

needs_corpora = pytest.mark.skipif(not MRPC_TEST.exists(), reason=MISSING_REASON)

MRPC_HEADER = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"


@pytest.mark.parametrize(
    ("text", "filename", "expected"),
    [
        (MRPC_HEADER + "\n1\t1\t2\ta\tb\n", "", "mrpc"),
        ("\ufeff" + MRPC_HEADER + "\r\n", "x.txt", "mrpc"),
        ("id\tsentence1\tsentence2\tlabel\n", "train.tsv", "paws"),
        ("ID\tSentence1\tSentence2\tLabel\r\n", "", "paws"),
        ("source\thypothesis\n", "x.txt", "tsv"),
        ("id\tsentence1\tsentence2\n", "", "tsv"),
        ("source,hypothesis,label\n", "x.tsv", "csv"),
        ('"source","hypothesis"\n', "", "csv"),
        ('{"source": "a", "hypothesis": "b"}\n', "x.csv", "jsonl"),
        ("\n  {}\n", "", "jsonl"),
        ("anything\n", "pairs.jsonl", "jsonl"),
    ],
)
def test_format_is_recognised_by_header(text, filename, expected):
    assert detect_format(text, filename) == expected


@pytest.mark.django_db
@needs_corpora
def test_real_mrpc_test_file():
    campaign = make_campaign()
    report = import_file(campaign, MRPC_TEST)
    assert (report.format, report.created, report.training, report.ignored_columns) == ("mrpc", 1725, 0, [])
    pairs = campaign.pairs.all()
    assert pairs.count() == 1725
    assert Counter(pairs.values_list("gold_label", flat=True)) == {True: 1147, False: 578}
    assert set(pairs.values_list("origin", flat=True)) == {"mrpc"}
    assert list(campaign.pairs.order_by("id").values_list("id", flat=True)) == report.pair_ids

    first = pairs.get(external_id="1089874-1089925")
    assert first.source.startswith("PCCW's chief operating officer, Mike Butcher, and Alex Arena")
    assert first.hypothesis == (
        "Current Chief Operating Officer Mike Butcher and Group Chief Financial Officer Alex Arena will report to So."
    )
    # A sentence with an unbalanced quote comes through exactly as the file has it.
    raw_rows = [line.split("\t") for line in MRPC_TEST.read_text(encoding="utf-8-sig").splitlines()[1:]]
    unbalanced = next(row for row in raw_rows if row[3].count('"') % 2 == 1)
    stored = pairs.get(external_id=f"{unbalanced[1]}-{unbalanced[2]}")
    assert stored.source == unbalanced[3]
    assert stored.hypothesis == unbalanced[4]
    assert stored.gold_label is (unbalanced[0] == "1")


@pytest.mark.django_db
@needs_corpora
def test_real_stsb_file_needs_its_format_and_keeps_the_score():
    campaign = make_campaign()
    with pytest.raises(ImportRefused, match="choose the format stsb"):
        import_file(campaign, STSB_TEST)
    report = import_file(campaign, STSB_TEST, format="stsb")
    assert (report.format, report.created) == ("stsb", 1379)
    assert report.ignored_columns == ["attribution"]
    assert any("284 rows carry attribution" in note for note in report.notes)
    pairs = campaign.pairs.all()
    assert set(pairs.values_list("gold_label", flat=True)) == {None}
    scores = list(pairs.values_list("gold_score", flat=True))
    assert min(scores) == 0.0 and max(scores) == 5.0
    first = pairs.get(external_id="main-captions-MSRvid-2012test-0024")
    assert (first.source, first.hypothesis, first.gold_score, first.origin) == (
        "A girl is styling her hair.",
        "A girl is brushing her hair.",
        2.5,
        "stsb",
    )


@pytest.mark.django_db
@needs_corpora
def test_tsv_with_sentence1_sentence2_columns_lists_the_other_columns_as_ignored():
    campaign = make_campaign()
    report = import_file(campaign, TRUE_PARAPHRASES, origin="amr-true")
    assert (report.format, report.created) == ("tsv", 167)
    assert len(report.ignored_columns) == 78
    assert set(campaign.pairs.values_list("origin", flat=True)) == {"amr-true"}


@pytest.mark.django_db
def test_paws_file(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_text(
        "id\tsentence1\tsentence2\tlabel\n"
        '1\tThe film "Cold Feet was released in 1989 .\tIn 1989 , the film "Cold Feet was released .\t1\n'
        "2\tFlights from Paris to Rome .\tFlights from Rome to Paris .\t0\n",
        encoding="utf-8",
    )
    campaign = make_campaign()
    report = import_file(campaign, path)
    assert (report.format, report.created) == ("paws", 2)
    first, second = campaign.pairs.order_by("id")
    assert (first.external_id, first.gold_label, first.origin) == ("1", True, "paws")
    assert first.source == 'The film "Cold Feet was released in 1989 .'
    assert (second.external_id, second.gold_label) == ("2", False)


@pytest.mark.django_db
def test_plain_csv_with_labels_in_many_spellings(tmp_path):
    rows = [
        ("1", True),
        ("0", False),
        ("yes", True),
        ("No", False),
        ("TRUE", True),
        ("false", False),
        ("paraphrase", True),
        ("not paraphrase", False),
        ("not_paraphrase", False),
        ("non-paraphrase", False),
        ("1.0", True),
        ("", None),
    ]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["source", "hypothesis", "label"])
    for number, (label, _) in enumerate(rows):
        writer.writerow([f"Sentence {number}, with a comma.", f'Sentence "{number}".', label])
    path = tmp_path / "pairs.csv"
    path.write_text(buffer.getvalue(), encoding="utf-8")
    campaign = make_campaign()
    report = import_file(campaign, path, origin="mine")
    assert (report.format, report.created, report.ignored_columns) == ("csv", len(rows), [])
    stored = list(campaign.pairs.order_by("id").values_list("source", "hypothesis", "gold_label", "origin"))
    assert stored == [
        (f"Sentence {number}, with a comma.", f'Sentence "{number}".', gold, "mine")
        for number, (_, gold) in enumerate(rows)
    ]


@pytest.mark.django_db
def test_csv_with_bom_crlf_and_unknown_columns(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_bytes(b"\xef\xbb\xbfSource,Hypothesis,notes,ID\r\nA b.,C d.,whatever,x1\r\n")
    campaign = make_campaign()
    report = import_file(campaign, path)
    assert report.ignored_columns == ["notes"]
    pair = campaign.pairs.get()
    assert (pair.source, pair.hypothesis, pair.external_id, pair.origin) == ("A b.", "C d.", "x1", "")


@pytest.mark.django_db
def test_texts_are_stored_exactly_but_ids_and_origins_are_trimmed(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("id\torigin\tsource\thypothesis\n x7 \t web \t  Spaces around.  \tTabs\u00a0and nbsp.\n")
    campaign = make_campaign()
    import_file(campaign, path)
    pair = campaign.pairs.get()
    assert (pair.external_id, pair.origin) == ("x7", "web")
    assert (pair.source, pair.hypothesis) == ("  Spaces around.  ", "Tabs\u00a0and nbsp.")


@pytest.mark.django_db
def test_jsonl_objects(tmp_path):
    lines = [
        {"id": 17, "source": "A b.", "hypothesis": "C d.", "label": True, "gold_score": 4.5, "origin": "llm"},
        {"external_id": "x", "source": "E f.", "hypothesis": "G h.", "gold_label": "no", "model": "gpt"},
        {"source": "I j.", "hypothesis": "K l.", "label": None, "extra": [1]},
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n", encoding="utf-8")
    campaign = make_campaign()
    report = import_file(campaign, path, origin="default")
    assert (report.format, report.created, report.ignored_columns) == ("jsonl", 3, ["model", "extra"])
    stored = list(campaign.pairs.order_by("id").values_list("external_id", "gold_label", "gold_score", "origin"))
    assert stored == [("17", True, 4.5, "llm"), ("x", False, None, "default"), ("", None, None, "default")]


@pytest.mark.django_db
def test_training_pairs_from_csv(tmp_path):
    path = tmp_path / "training.csv"
    path.write_text(
        "id,source,hypothesis,training_position,expected_label,explanation\n"
        "t1,The dog runs.,The dog is running.,1,Same meaning,Only the tense form changes.\n"
        "t2,The dog runs.,The dog sleeps.,2,very_different,Running is not sleeping.\n"
        "c1,The bus is late.,The bus is delayed.,,,\n",
        encoding="utf-8",
    )
    campaign = make_campaign()
    report = import_file(campaign, path)
    assert (report.created, report.training) == (3, 2)
    training = list(
        campaign.pairs.filter(is_training=True)
        .order_by("training_position")
        .values_list("external_id", "training_position", "expected_label", "explanation")
    )
    assert training == [
        ("t1", 1, Label.SAME_MEANING.value, "Only the tense form changes."),
        ("t2", 2, Label.VERY_DIFFERENT.value, "Running is not sleeping."),
    ]
    plain = campaign.pairs.get(external_id="c1")
    assert (plain.is_training, plain.training_position, plain.expected_label) == (False, None, "")


@pytest.mark.django_db
def test_import_records_uses_the_same_rules_and_reports_ignored_keys():
    campaign = make_campaign()
    make_pair(campaign, external_id="taken")
    records = [
        {"source": "A b.", "hypothesis": "C d.", "id": "r1", "label": "yes", "comment": "ok"},
        {"source": "E f.", "hypothesis": "G h.", "training_position": 1, "expected_label": "dont_know",
         "explanation": "Why not."},
    ]  # fmt: skip
    report = import_records(campaign, records, format_name="api", origin="api")
    assert (report.format, report.created, report.training, report.ignored_columns) == ("api", 2, 1, ["comment"])
    assert list(Pair.objects.filter(pk__in=report.pair_ids).values_list("origin", flat=True)) == ["api", "api"]
    with pytest.raises(ImportRefused, match="line 1: id 'taken' is already in campaign"):
        import_records(campaign, [{"source": "x", "hypothesis": "y", "id": "taken"}])


@pytest.mark.django_db
def test_origin_from_row_then_option_then_format(tmp_path):
    path = tmp_path / "mrpc.txt"
    path.write_text(f"{MRPC_HEADER}\n1\t1\t2\tA b.\tC d.\n", encoding="utf-8")
    first, second = make_campaign(), make_campaign()
    import_file(first, path)
    import_file(second, path, origin="mrpc-sample")
    assert first.pairs.get().origin == "mrpc"
    assert second.pairs.get().origin == "mrpc-sample"


@pytest.mark.django_db
def test_explicit_format_overrides_detection(tmp_path):
    path = tmp_path / "pairs.txt"
    path.write_text("source\thypothesis\nA, b.\tC d.\n", encoding="utf-8")
    campaign = make_campaign()
    assert import_file(campaign, path, format="tsv").created == 1
    with pytest.raises(ImportRefused, match="missing required column 'source' and 'hypothesis'"):
        import_file(make_campaign(), path, format="csv")
    with pytest.raises(ValueError, match="unknown import format 'xls'"):
        import_file(campaign, path, format="xls")


@pytest.mark.django_db
def test_open_file_objects_are_accepted(tmp_path):
    campaign = make_campaign()
    report = import_file(campaign, io.BytesIO(b"source,hypothesis\nA b.,C d.\n"))
    assert report.created == 1
    report = import_file(campaign, io.StringIO("source,hypothesis\nE f.,G h.\n"))
    assert report.created == 1


@pytest.mark.django_db
def test_dry_run_checks_everything_and_stores_nothing(tmp_path):
    campaign = make_campaign()
    make_pair(campaign, external_id="a")
    path = tmp_path / "pairs.csv"
    path.write_text("id,source,hypothesis\nb,A b.,C d.\n", encoding="utf-8")
    report = import_file(campaign, path, dry_run=True)
    assert (report.created, report.dry_run, report.pair_ids) == (1, True, [])
    assert campaign.pairs.count() == 1
    path.write_text("id,source,hypothesis\na,A b.,C d.\n", encoding="utf-8")
    with pytest.raises(ImportRefused, match="already in campaign"):
        import_file(campaign, path, dry_run=True)


def test_parse_file_keeps_quotes_of_corpus_files_as_text():
    parsed = parse_file(f'{MRPC_HEADER}\n0\t1\t2\tHe said "yes\tShe said no"\n'.encode(), filename="m.txt")
    (record,) = parsed.records
    assert (record.values["source"], record.values["hypothesis"]) == ('He said "yes', 'She said no"')


def test_unpaired_surrogate_from_json_is_refused():
    parsed = parse_file('{"source": "A \\ud800 b", "hypothesis": "C d."}\n', format="jsonl")
    from annotate.importers.validation import clean_record

    draft, problems = clean_record(parsed.records[0], default_origin="", max_length=100)
    assert draft is None
    assert str(problems[0]) == "line 1: source contains an unpaired surrogate (not valid Unicode text)"
