"""Every reason to refuse a file: named with its line, and nothing from the file is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotate.importers import ImportProblem, ImportRefused, import_file, import_records
from annotate.importers import pipeline as import_pipeline
from annotate.models import Pair
from tests.builders import make_campaign, make_pair, make_training_pairs

pytestmark = pytest.mark.django_db


def refused(tmp_path: Path, content: bytes | str, *, name: str = "pairs.csv", campaign=None, **options) -> str:
    """Import ``content`` and return the refusal text; fail if it was accepted or stored rows."""
    campaign = campaign or make_campaign()
    before = Pair.objects.count()
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    with pytest.raises(ImportRefused) as caught:
        import_file(campaign, path, **options)
    assert Pair.objects.count() == before, "a refused file stored rows"
    assert all(isinstance(problem, ImportProblem) for problem in caught.value.problems)
    return str(caught.value)


VALID_LINE = "The cat sleeps.,The cat is asleep.\n"


def test_missing_required_column_is_named(tmp_path):
    message = refused(tmp_path, "source,label\nThe cat sleeps.,1\n")
    assert message.startswith("line 1: missing required column 'hypothesis'")
    assert "'source', 'label'" in message  # the header it found


def test_both_required_columns_missing_name_the_columns_and_how_to_map_them(tmp_path):
    message = refused(tmp_path, "text_a,text_b\nx,y\n")
    assert message == (
        "line 1: missing required column 'source' and 'hypothesis' (the header has 'text_a', 'text_b'); "
        "map the columns holding them: on the upload page, set Stored as to 'Sentence 1 (source)' and "
        '\'Sentence 2 (hypothesis)\'; through the API, column_map {"text_a": "source", "text_b": "hypothesis"}; '
        "or rename them 'source' and 'hypothesis' in the header"
    )
    assert "MRPC" not in message  # the corpora's headers are beside the point here


def test_bad_encoding_names_line_and_byte_offset(tmp_path):
    content = b"source,hypothesis\n" + VALID_LINE.encode() + b"Caf\xe9 au lait.,Coffee with milk.\n"
    message = refused(tmp_path, content)
    offset = len(b"source,hypothesis\n" + VALID_LINE.encode()) + 3
    assert message == f"line 3: not valid UTF-8: byte 0xE9 at byte offset {offset} (save the file as UTF-8)"


def test_bad_encoding_lists_every_bad_line(tmp_path):
    content = "source,hypothesis\nd\u00e9j\u00e0,vu\n".encode("latin-1") * 2
    message = refused(tmp_path, content)
    assert "line 2: not valid UTF-8" in message and "line 4: not valid UTF-8" in message


def test_utf16_is_refused_with_advice(tmp_path):
    message = refused(tmp_path, ("source,hypothesis\n" + VALID_LINE).encode("utf-16"))
    assert "UTF-16" in message and "save it as UTF-8" in message


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (",The cat is asleep.", "line 3: source is empty"),
        ("   ,The cat is asleep.", "line 3: source is empty"),
        ('The cat sleeps.,"  \t "', "line 3: hypothesis is empty"),
    ],
)
def test_empty_sentence_is_refused(tmp_path, row, expected):
    assert refused(tmp_path, f"source,hypothesis\n{VALID_LINE}{row}\n") == expected


def test_sentence_over_the_given_length_is_refused(tmp_path):
    content = f"source,hypothesis\n{'x' * 10},{'y' * 10}\n{'x' * 10},{'y' * 11}\n"
    assert refused(tmp_path, content, max_length=10) == "line 3: hypothesis is 11 characters long; the limit is 10"


def test_sentence_over_the_configured_length_is_refused(tmp_path, settings):
    settings.PARAEVAL_MAX_SENTENCE_LENGTH = 20
    message = refused(tmp_path, f"source,hypothesis\n{'a' * 21},short\n")
    assert message == "line 2: source is 21 characters long; the limit is 20"


def test_duplicate_id_within_file(tmp_path):
    content = f"id,source,hypothesis\na1,{VALID_LINE}a2,{VALID_LINE}a1,{VALID_LINE}"
    assert refused(tmp_path, content) == "line 4: id 'a1' is used twice (first on line 2)"


def test_id_already_in_campaign(tmp_path):
    campaign = make_campaign(slug="news")
    make_pair(campaign, external_id="a1")
    message = refused(tmp_path, f"id,source,hypothesis\na0,{VALID_LINE}a1,{VALID_LINE}", campaign=campaign)
    assert message == "line 3: id 'a1' is already in campaign 'news'"
    assert campaign.pairs.count() == 1


def test_same_id_in_another_campaign_is_fine(tmp_path):
    make_pair(make_campaign(), external_id="a1")
    campaign = make_campaign()
    path = tmp_path / "pairs.csv"
    path.write_text(f"id,source,hypothesis\na1,{VALID_LINE}")
    assert import_file(campaign, path).created == 1


@pytest.mark.parametrize("label", ["maybe", "2", "-1", "0.5", "paraphrased?"])
def test_invalid_label(tmp_path, label):
    message = refused(tmp_path, f"source,hypothesis,label\nThe cat sleeps.,The cat is asleep.,{label}\n")
    assert message.startswith(f"line 2: label '{label}' is not a gold label (use 1/0")


def test_invalid_gold_score(tmp_path):
    message = refused(tmp_path, "source,hypothesis,gold_score\nA b.,C d.,high\nA b.,C d.,nan\n")
    assert message == "line 2: gold_score 'high' is not a number\nline 3: gold_score 'nan' is not a finite number"


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("first,same_meaning,Because.", "line 2: training_position 'first' is not a whole number from 1"),
        ("0,same_meaning,Because.", "line 2: training_position 0 is not a position from 1 to 32767"),
        ("1,identical,Because.", "line 2: expected_label 'identical' is not one of very_different, slightly_similar"),
        ("1,,Because.", "line 2: a training pair needs expected_label (the answer shown after it)"),
        ("1,same_meaning,", "line 2: a training pair needs explanation (shown after the answer)"),
        (",same_meaning,Because.", "line 2: expected_label is only for training pairs, and training_position is empty"),
    ],
)
def test_invalid_training_fields(tmp_path, row, expected):
    content = (
        f"source,hypothesis,training_position,expected_label,explanation\nThe cat sleeps.,The cat is asleep.,{row}\n"
    )
    assert refused(tmp_path, content).startswith(expected)


def test_training_position_used_twice_in_file(tmp_path):
    header = "source,hypothesis,training_position,expected_label,explanation\n"
    content = header + "A b.,C d.,1,same_meaning,Why.\nE f.,G h.,1,dont_know,Why.\n"
    assert refused(tmp_path, content) == "line 3: training_position 1 is used twice (first on line 2)"


def test_training_position_already_taken_in_campaign(tmp_path):
    campaign = make_campaign(slug="trained")
    make_training_pairs(campaign, count=2)
    content = "source,hypothesis,training_position,expected_label,explanation\nA b.,C d.,2,same_meaning,Why.\n"
    message = refused(tmp_path, content, campaign=campaign)
    assert message == "line 2: training_position 2 is already taken in campaign 'trained'"


def test_malformed_json_line(tmp_path):
    content = '{"source": "A b.", "hypothesis": "C d."}\n{"source": "A b.", "hypothesis": }\n[1, 2]\n'
    message = refused(tmp_path, content, name="pairs.jsonl")
    assert message == (
        "line 2: not valid JSON: Expecting value (column 34)\nline 3: expected a JSON object {...}, found an array"
    )


def test_json_values_of_the_wrong_type(tmp_path):
    content = '{"source": 12, "hypothesis": "C d.", "id": [1]}\n{"hypothesis": "C d."}\n'
    message = refused(tmp_path, content, name="pairs.jsonl")
    assert message.splitlines() == [
        "line 1: source must be text",
        "line 1: id [1] is not an id (use text or a whole number)",
        "line 2: source is missing",
    ]


def test_wrong_field_count_in_tsv(tmp_path):
    content = "source\thypothesis\nThe cat sleeps.\tThe cat is asleep.\nA\tB\tC\nonly one\n"
    message = refused(tmp_path, content, name="pairs.tsv")
    assert message == (
        "line 3: 3 fields, the header has 2 (tab-separated)\nline 4: 1 fields, the header has 2 (tab-separated)"
    )


def test_wrong_field_count_in_mrpc(tmp_path):
    header = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    content = header + "1\t1\t2\tA b.\tC d.\n0\t3\t4\tA sentence without its pair.\n"
    assert refused(tmp_path, content, name="mrpc.txt") == "line 3: 4 fields, expected 5 (MRPC rows are tab-separated)"


def test_unquoted_comma_in_csv_is_a_field_count_problem(tmp_path):
    message = refused(tmp_path, f"source,hypothesis\n{VALID_LINE}Paris, France,Paris\n")
    assert message == "line 3: 3 fields, the header has 2 (a comma inside a cell needs the cell in double quotes)"


def test_unclosed_quote_names_the_line_where_the_record_starts(tmp_path):
    message = refused(tmp_path, f'source,hypothesis\n{VALID_LINE}"He said hi,to me\nA b.,C d.\n')
    assert message.startswith("line 3: a quoted cell that starts in this record is never closed")


def test_text_after_closing_quote(tmp_path):
    message = refused(tmp_path, f'source,hypothesis\n{VALID_LINE}"He" said,hi\n')
    assert message.startswith("line 3: a closing quote must be followed by the separator")


def test_line_numbers_count_newlines_inside_quoted_cells(tmp_path):
    content = 'source,hypothesis\n"two\nlines",fine\n"three\nphysical\nlines",ok\n,empty source\n'
    assert refused(tmp_path, content) == "line 7: source is empty"


def test_nul_character_is_refused(tmp_path):
    assert refused(tmp_path, "source,hypothesis\nA\x00b,c\n") == "line 2: source contains a NUL character"


def test_empty_file_and_header_only(tmp_path):
    assert refused(tmp_path, "") == "the file is empty"
    assert refused(tmp_path, "\ufeff\n\n") == "the file is empty"
    assert refused(tmp_path, "source,hypothesis\n\n") == "nothing to import: no pairs (only a header or blank lines)"


def test_stsb_file_without_format_gets_a_hint(tmp_path):
    content = "main-news\tMSRpar\t2012\t0001\t4.2\tA b.\tC d.\n"
    assert "looks like an STS-B file" in refused(tmp_path, content, name="sts.csv")


def test_every_problem_is_collected_in_line_order(tmp_path):
    campaign = make_campaign(slug="all")
    make_pair(campaign, external_id="old")
    content = (
        "id,source,hypothesis,label\n"
        "old,A b.,C d.,1\n"  # already in the campaign
        "new,,C d.,1\n"  # empty source
        "new2,A b.,C d.,perhaps\n"  # invalid label
        "new2,A b.,C d.,0\n"  # duplicate id
        "x,too,many,cells,here\n"
    )
    message = refused(tmp_path, content, campaign=campaign)
    assert message.splitlines() == [
        "line 2: id 'old' is already in campaign 'all'",
        "line 3: source is empty",
        "line 4: label 'perhaps' is not a gold label (use 1/0, true/false, yes/no or paraphrase/not paraphrase)",
        "line 5: id 'new2' is used twice (first on line 4)",
        "line 6: 5 fields, the header has 4 (a comma inside a cell needs the cell in double quotes)",
    ]


def test_long_problem_lists_are_capped(tmp_path):
    content = "source,hypothesis\n" + ",missing source\n" * 120
    message = refused(tmp_path, content)
    lines = message.splitlines()
    assert len(lines) == 51
    assert lines[0] == "line 2: source is empty"
    assert lines[-1] == "... and 70 more"


def test_refused_records_name_their_position_and_field():
    campaign = make_campaign()
    with pytest.raises(ImportRefused) as caught:
        import_records(
            campaign,
            [
                {"source": "A b.", "hypothesis": "C d."},
                {"source": "A b.", "hypothesis": "", "label": "yes"},
                {"source": "A b.", "hypothesis": "C d.", "label": "1", "gold_label": "0"},
                "not an object",
            ],
        )
    problems = caught.value.problems
    assert [(problem.line, problem.field) for problem in problems] == [(2, "hypothesis"), (3, None), (4, None)]
    assert str(problems[1]) == "line 3: label and gold_label disagree ('1' and '0'); keep one"
    assert Pair.objects.count() == 0


def test_a_clash_at_insert_time_rolls_everything_back(tmp_path, monkeypatch):
    """If a pair appears between the check and the insert (the admin does not lock the campaign),
    the unique constraint stops the import and nothing of it remains."""
    campaign = make_campaign()
    make_pair(campaign, external_id="b")
    monkeypatch.setattr(import_pipeline, "campaign_problems", lambda *args, **kwargs: [])
    path = tmp_path / "pairs.csv"
    path.write_text(f"id,source,hypothesis\na,{VALID_LINE}b,{VALID_LINE}")
    with pytest.raises(ImportRefused, match="the campaign changed during the import"):
        import_file(campaign, path)
    assert list(campaign.pairs.values_list("external_id", flat=True)) == ["b"]


def test_semicolon_separated_file_gets_a_hint(tmp_path):
    message = refused(tmp_path, "source;hypothesis\nA b.;C d.\n")
    assert message.startswith("line 1: missing required column 'source' and 'hypothesis'")
    assert "the file seems to use ';' between cells" in message
