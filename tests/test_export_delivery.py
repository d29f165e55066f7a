"""How exports reach people: the staff download page and ``manage.py export_corpus``."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotate.exports import service
from annotate.exports.formatters import JUDGEMENT_COLUMNS
from annotate.labels import Label
from annotate.models import Pair
from tests.builders import make_campaign, make_judgement, make_pair, make_staff, make_training_pairs, make_volunteer
from tests.export_support import export_text, read_csv, read_jsonl

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    campaign = make_campaign(slug="deliver")
    make_training_pairs(campaign, 2)
    for number in range(3):
        make_judgement(make_pair(campaign, external_id=f"d{number}"), label=Label.SAME_MEANING)
    return campaign


@pytest.fixture
def staff(client, django_user_model):
    user = make_staff("staff", "pw")
    client.force_login(user)
    return client


def _url(slug="deliver", **params):
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return reverse("staff:campaign-export", kwargs={"slug": slug}) + (f"?{query}" if query else "")


# --- Staff page ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "content_type", "extension"),
    [
        ({}, "text/csv; charset=utf-8", "csv"),
        ({"level": "judgements", "format": "csv"}, "text/csv; charset=utf-8", "csv"),
        ({"level": "pairs", "format": "jsonl"}, "application/x-ndjson; charset=utf-8", "jsonl"),
    ],
)
def test_staff_download_streams_an_attachment(staff, campaign, params, content_type, extension):
    response = staff.get(_url(**params))
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == content_type
    level = params.get("level", "pairs")
    disposition = response["Content-Disposition"]
    assert disposition.startswith(f'attachment; filename="deliver-{level}-')
    assert disposition.endswith(f'.{extension}"')
    assert "no-store" in response["Cache-Control"]
    body = b"".join(response.streaming_content).decode("utf-8")
    assert body == export_text(campaign, level, extension)


def test_staff_download_refuses_unknown_options_naming_them(staff, campaign):
    response = staff.get(_url(level="volunteers"))
    assert response.status_code == 400
    assert response.content.decode().startswith("level: 'volunteers' is not one of judgements, pairs")
    response = staff.get(_url(format="xlsx"))
    assert response.status_code == 400
    assert "format: 'xlsx' is not one of csv, jsonl" in response.content.decode()


def test_staff_download_of_unknown_campaign_is_404(staff):
    assert staff.get(_url(slug="nope")).status_code == 404


def test_staff_download_is_get_only(staff, campaign):
    assert staff.post(_url()).status_code == 405


def test_anonymous_and_non_staff_are_sent_to_the_login(client, django_user_model, campaign):
    response = client.get(_url())
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))
    client.force_login(django_user_model.objects.create_user("someone", password="pw"))
    response = client.get(_url())
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_a_volunteer_cookie_does_not_open_the_download(client, campaign):
    from annotate.views import cookie_name

    volunteer = make_volunteer(campaign)
    client.cookies[cookie_name(campaign)] = volunteer.token
    assert client.get(_url()).status_code == 302
    assert client.get(_url() + f"?token={volunteer.token}").status_code == 302


# --- Command ------------------------------------------------------------------------------


def test_command_writes_to_stdout(campaign):
    out = io.StringIO()
    call_command("export_corpus", "--campaign", "deliver", "--level", "judgements", stdout=out)
    header, rows = read_csv(out.getvalue())
    assert header == list(JUDGEMENT_COLUMNS)
    assert len(rows) == 3  # training answers left out
    assert out.getvalue() == export_text(campaign, "judgements", "csv")


def test_command_writes_a_file(campaign, tmp_path):
    target = tmp_path / "corpus.jsonl"
    err = io.StringIO()
    call_command("export_corpus", "--campaign", "deliver", "--format", "jsonl", "--output", str(target), stderr=err)
    rows = read_jsonl(target.read_text(encoding="utf-8"))
    assert [row["external_id"] for row in rows] == ["d0", "d1", "d2"]
    assert "Wrote pairs of 'deliver'" in err.getvalue()
    assert [path.name for path in tmp_path.iterdir()] == ["corpus.jsonl"]  # no temporary left


def test_command_refuses_unknown_campaign_and_folder(campaign, tmp_path):
    with pytest.raises(CommandError, match=r"No campaign with slug 'nope' \(known: deliver\)"):
        call_command("export_corpus", "--campaign", "nope")
    with pytest.raises(CommandError, match=r"--output: folder .* does not exist"):
        call_command("export_corpus", "--campaign", "deliver", "--output", str(tmp_path / "missing" / "x.csv"))


def test_command_keeps_the_old_file_when_an_export_fails(campaign, tmp_path, monkeypatch):
    target = tmp_path / "corpus.csv"
    target.write_text("previous export\n", encoding="utf-8")

    def broken(*args, **kwargs):
        yield "campaign,pair_id\r\n"
        raise RuntimeError("database went away")

    monkeypatch.setitem(service._WRITERS, service.Format.CSV, broken)
    with pytest.raises(RuntimeError):
        call_command("export_corpus", "--campaign", "deliver", "--output", str(target))
    assert target.read_text(encoding="utf-8") == "previous export\n"
    assert [path.name for path in tmp_path.iterdir()] == ["corpus.csv"]


# --- Round trip through the importer ------------------------------------------------------

ROUND_TRIP_TEXTS = [
    ('She said "yes", he said "no".', 'He said "no"; she said "yes".'),
    ("one, two, three", "three,two,one"),
    ("first line\nsecond line", "first line\r\nsecond line"),
    ("tab\tseparated\tcells", "\tleading tab"),
    ("=1+1", "-starts with a minus"),
    ("'apostrophe first", "'=looks prefixed already"),
    ("+plus", "@at"),
    ("東京は日本の首都です。", "日本の首都は東京です。"),
    ("Москва — столица России.", "Столица России — Москва."),
    ("مرحبا بالعالم", "שלום עולם"),
    ("emoji 🐈‍⬛ and combining é", "e\u0301 and ZWJ 🐈‍⬛"),
    ("trailing space ", " leading space"),
]


def test_pair_export_round_trips_through_import_pairs(campaign, tmp_path):
    source = make_campaign(slug="original")
    originals = [
        make_pair(source, external_id=f"rt-{n}", origin="crafted", source=s, hypothesis=h, gold_label=n % 2 == 0)
        for n, (s, h) in enumerate(ROUND_TRIP_TEXTS)
    ]
    target = tmp_path / "pairs.csv"
    call_command("export_corpus", "--campaign", "original", "--output", str(target))

    out = io.StringIO()
    call_command("import_pairs", str(target), "--campaign", "copy", "--create", stdout=out)

    copies = list(Pair.objects.filter(campaign__slug="copy").order_by("id"))
    assert [(p.source, p.hypothesis) for p in copies] == [(p.source, p.hypothesis) for p in originals]
    assert [(p.external_id, p.origin, p.gold_label) for p in copies] == [
        (p.external_id, p.origin, p.gold_label) for p in originals
    ]
    assert "ParaEval pair-level export" in out.getvalue()


def test_pair_export_is_valid_utf8_without_bom(campaign, tmp_path):
    target = tmp_path / "pairs.csv"
    make_pair(campaign, source="ça va", hypothesis="très bien")
    call_command("export_corpus", "--campaign", "deliver", "--output", str(target))
    data = Path(target).read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf")
    assert "ça va".encode() in data
