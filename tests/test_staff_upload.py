"""The staff upload page: a file streamed to disk, its preview and mapping, the dry run that
lists every problem, the all-or-nothing import as a task, its progress and its summary."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from annotate import uploads
from annotate.models import Pair, PairUpload, UploadState
from paraeval import broker
from scoring.models import WorkerHeartbeat
from staff.views import uploads as upload_views
from tests.builders import make_campaign, make_pair, make_staff

pytestmark = pytest.mark.django_db

# Real MRPC test pairs (the first three), under column names a researcher's own file might use.
CSV_HEADER = "pair,sentence_a,sentence_b,quality,note\n"
GOOD_ROWS = [
    "1089874-1089925,\"PCCW's chief operating officer, Mike Butcher, and Alex Arena, the chief financial officer, "
    'will report directly to Mr So.","Current Chief Operating Officer Mike Butcher and Group Chief Financial '
    'Officer Alex Arena will report to So.",1,first\n',
    "3019446-3019327,\"The world's two largest automakers said their U.S. sales declined more than predicted last "
    'month as a late summer sales frenzy caused more of an industry backlash than expected.","Domestic sales at '
    "both GM and No. 2 Ford Motor Co. declined more than predicted as a late summer sales frenzy prompted a larger "
    'than expected industry backlash.",1,\n',
    '1945605-1945824,"According to the federal Centers for Disease Control and Prevention (news - web sites), '
    'there were 19 reported cases of measles in the United States in 2002.","The Centers for Disease Control and '
    'Prevention said there were 19 reported cases of measles in the United States in 2002.",1,\n',
]
MAPPING = {
    "column:pair": "external_id",
    "column:sentence_a": "source",
    "column:sentence_b": "hypothesis",
    "column:quality": "gold_label",
    "column:note": "",
}


@pytest.fixture
def staff_client() -> Client:
    user = make_staff("uploader", "x")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[broker.TaskMessage]:
    """The tasks the pages send (run by the test, as a worker would)."""
    messages: list[broker.TaskMessage] = []

    def send(batch: list[broker.TaskMessage]) -> broker.SendResult:
        messages.extend(batch)
        return broker.SendResult(len(batch), 0)

    monkeypatch.setattr(broker, "send", send)
    return messages


@pytest.fixture(autouse=True)
def _uploads_in_tmp(settings, tmp_path: Path) -> None:
    settings.DATA_DIR = tmp_path


def post_file(client: Client, slug: str, content: str, name: str = "pairs.csv", **fields: str):
    upload = SimpleUploadedFile(name, content.encode(), content_type="text/csv")
    return client.post(f"/staff/campaigns/{slug}/upload/", {"file": upload, "format": "auto", **fields})


def run_sent(sent: list[broker.TaskMessage]) -> list[str]:
    states = [uploads.run_upload(*message.args) for message in sent]  # type: ignore[arg-type]
    sent.clear()
    return states


def test_the_file_goes_to_disk_and_the_preview_shows_the_mapping(staff_client: Client) -> None:
    campaign = make_campaign(slug="own")
    response = post_file(staff_client, "own", CSV_HEADER + "".join(GOOD_ROWS))
    job = PairUpload.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/staff/campaigns/own/upload/{job.pk}/"
    assert uploads.file_path(job).read_text() == CSV_HEADER + "".join(GOOD_ROWS)
    assert (job.filename, job.size, job.state) == (
        "pairs.csv",
        len((CSV_HEADER + "".join(GOOD_ROWS)).encode()),
        "uploaded",
    )

    page = staff_client.get(response["Location"]).content.decode()
    # Nothing maps by name: every column is ignored until mapped, and the preview says what is missing.
    assert "Ignored columns: pair, sentence_a, sentence_b, quality, note" in page
    assert "missing required column &#x27;source&#x27; and &#x27;hypothesis&#x27;" in page

    response = staff_client.post(response["Location"], {"format": "auto", "origin": "mrpc-test", **MAPPING})
    assert response.status_code == 302
    preview = uploads.preview(PairUpload.objects.get())
    assert [(c.column, c.field) for c in preview.columns] == [
        ("pair", "external_id"),
        ("sentence_a", "source"),
        ("sentence_b", "hypothesis"),
        ("quality", "gold_label"),
        ("note", ""),
    ]
    assert preview.ignored == ["note"]
    assert [row.line for row in preview.rows] == [2, 3, 4]
    assert preview.rows[2].values["external_id"] == "1945605-1945824"
    assert preview.rows[2].values["hypothesis"].startswith("The Centers for Disease Control")
    assert preview.rows[2].values["gold_label"] == "yes"
    assert preview.rows[2].values["origin"] == "mrpc-test"
    assert preview.rows[0].problems == []
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    assert "Ignored columns: note" in page
    assert Pair.objects.filter(campaign=campaign).count() == 0  # a preview stores nothing


def test_every_file_is_written_to_disk_however_small(rf, staff_client: Client) -> None:
    make_campaign(slug="own")
    seen = []
    original = upload_views._receive

    def spy(request, campaign):  # type: ignore[no-untyped-def]
        seen.append(type(request.FILES["file"]))
        return original(request, campaign)

    upload_views._receive = spy
    try:
        post_file(staff_client, "own", CSV_HEADER + GOOD_ROWS[0])
    finally:
        upload_views._receive = original
    assert seen == [upload_views.DiskFile]


def test_a_file_over_the_limit_is_refused_and_removed(settings, staff_client: Client) -> None:
    make_campaign(slug="own")
    settings.PARAEVAL_UPLOAD_MAX_MB = 1
    response = post_file(staff_client, "own", "source,hypothesis\n" + "a,b\n" * 300_000)
    assert response.status_code == 413
    assert "The file is larger than 1 MB (PARAEVAL_UPLOAD_MAX_MB)." in response.content.decode()
    assert PairUpload.objects.count() == 0
    assert list(uploads.upload_dir().glob("*.upload")) == []


def test_the_dry_run_lists_every_problem_and_stores_nothing(
    staff_client: Client, sent, django_capture_on_commit_callbacks
) -> None:
    campaign = make_campaign(slug="own")
    bad = [
        GOOD_ROWS[0],
        '2-2,"A sentence.","",1,\n',  # line 3: no second sentence
        GOOD_ROWS[1],
        '3-3,"Another.","Yet another.",maybe,\n',  # line 5: not a gold label
        "4-4,too few\n",  # line 6: two fields
    ]
    post_file(staff_client, "own", CSV_HEADER + "".join(bad))
    job = PairUpload.objects.get()
    staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/", {"format": "auto", **MAPPING})
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/check/")
    assert response.status_code == 302
    assert [message.args for message in sent] == [(job.pk, "check")]
    assert PairUpload.objects.get().state == "check_queued"
    assert run_sent(sent) == ["refused"]
    job.refresh_from_db()
    assert job.problem_count == 3
    assert job.problems == [
        [3, "sentence_b", "sentence_b is empty"],
        [
            5,
            "quality",
            "quality 'maybe' is not a gold label (use 1/0, true/false, yes/no or paraphrase/not paraphrase)",
        ],
        [6, "", "2 fields, the header has 5 (a comma inside a cell needs the cell in double quotes)"],
    ]
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    assert "3 problems: nothing was stored" in page
    assert "sentence_b is empty" in page
    assert Pair.objects.filter(campaign=campaign).count() == 0


def test_the_import_stores_every_pair_once_and_sums_it_up(
    staff_client: Client, sent, django_capture_on_commit_callbacks
) -> None:
    campaign = make_campaign(slug="own")
    post_file(staff_client, "own", CSV_HEADER + "".join(GOOD_ROWS))
    job = PairUpload.objects.get()
    staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/", {"format": "auto", "origin": "mrpc", **MAPPING})
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/check/")
    assert run_sent(sent) == ["checked"]
    assert Pair.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/import/")
    message = sent[0]
    assert run_sent(sent) == ["imported"]
    # Delivered twice (a worker lost after its commit): nothing more is stored.
    assert uploads.run_upload(*message.args) == "imported"  # type: ignore[arg-type]
    rows = list(Pair.objects.filter(campaign=campaign).values_list("external_id", "origin", "gold_label"))
    assert rows == [
        ("1089874-1089925", "mrpc", True),
        ("3019446-3019327", "mrpc", True),
        ("1945605-1945824", "mrpc", True),
    ]
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    for line in [
        "Imported 3 pairs (csv).",
        "Training pairs: 0",
        "Check pairs: 0",
        "Systems: none named",
        "Gold labels: paraphrase 3, not paraphrase 0, none 0",
        "Ignored columns: note",
    ]:
        assert f"<li>{line}</li>" in page
    assert not uploads.file_path(job).exists()
    assert staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/import/").status_code == 400
    # The row keeps the summary as JSON, in the shape the API has always shown; typed when read.
    job.refresh_from_db()
    assert job.state == UploadState.IMPORTED == "imported"
    assert job.report == {
        "mode": "import",
        "pairs": 3,
        "format": "csv",
        "training": 0,
        "checks": 0,
        "systems": {},
        "gold_labels": {"paraphrase": 3, "not paraphrase": 0, "none": 0},
        "gold_scores": 0,
        "warnings": [],
        "ignored_columns": ["note"],
        "notes": [],
    }
    assert uploads.UploadReport.from_json(job.report).pairs == 3


def test_a_summary_stored_by_an_older_version_still_reads() -> None:
    """A row written before a key existed reads with that key's default, not a KeyError."""
    older = {"mode": "check", "pairs": 1, "format": "jsonl", "gold_labels": {"paraphrase": 1}}
    assert uploads.UploadReport.from_json(older).lines() == [
        "Would import 1 pair (jsonl).",
        "Training pairs: 0",
        "Check pairs: 0",
        "Systems: none named",
        "Gold labels: paraphrase 1, not paraphrase 0, none 0",
        "Ignored columns: none",
    ]


def test_an_import_that_clashes_with_the_campaign_stores_nothing(
    staff_client: Client, sent, django_capture_on_commit_callbacks
) -> None:
    campaign = make_campaign(slug="own")
    make_pair(campaign, external_id="1945605-1945824")
    post_file(staff_client, "own", CSV_HEADER + "".join(GOOD_ROWS))
    job = PairUpload.objects.get()
    staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/", {"format": "auto", **MAPPING})
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/import/")
    assert run_sent(sent) == ["refused"]
    job.refresh_from_db()
    assert [problem[:2] for problem in job.problems] == [[4, "external_id"]]
    assert Pair.objects.filter(campaign=campaign).count() == 1


def test_the_progress_survives_a_reload(staff_client: Client) -> None:
    make_campaign(slug="own")
    post_file(staff_client, "own", CSV_HEADER + "".join(GOOD_ROWS))
    job = PairUpload.objects.get()
    job.state = "import_queued"
    job.save()
    uploads.write_progress(job, uploads.Progress("import", job.size // 2, job.size))
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    assert 'Importing: <span id="progress-percent">50</span>% of the file read' in page
    assert '<progress id="upload-progress" max="100" value="50">' in page
    status = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/status.json").json()
    assert status == {
        "state": "import_queued",
        "running": True,
        "phase": "import",
        "read": job.size // 2,
        "total": job.size,
        "percent": 50,
        "waiting": "",  # it runs: it waits behind nothing
    }
    assert staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/import/").status_code == 400


def test_abuse_gets_a_4xx(staff_client: Client) -> None:
    make_campaign(slug="own")
    assert staff_client.post("/staff/campaigns/own/upload/", {"format": "auto"}).status_code == 400
    assert post_file(staff_client, "own", "a", format="xml").status_code == 400
    assert staff_client.get("/staff/campaigns/nope/upload/").status_code == 404
    post_file(staff_client, "own", CSV_HEADER + GOOD_ROWS[0])
    job = PairUpload.objects.get()
    assert staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/delete/").status_code == 400
    response = staff_client.post(
        f"/staff/campaigns/own/upload/{job.pk}/", {"format": "auto", "column:pair": "password"}
    )
    assert response.status_code == 400
    assert "column &#x27;pair&#x27;: &#x27;password&#x27; is not a pair field" in response.content.decode()
    anonymous = Client()
    assert anonymous.get("/staff/campaigns/own/upload/").status_code == 302
    assert anonymous.post(f"/staff/campaigns/own/upload/{job.pk}/import/").status_code == 302


def test_the_gold_options_of_the_importer_apply_to_the_preview_and_the_import(
    staff_client: Client, sent, django_capture_on_commit_callbacks
) -> None:
    campaign = make_campaign(slug="own")
    content = "pair,sentence_a,sentence_b,consensus\n1,A cat.,A feline.,1\n2,A dog.,A car.,0\n3,Rain.,Snow.,-100\n"
    post_file(staff_client, "own", content)
    job = PairUpload.objects.get()
    mapping = {"column:pair": "external_id", "column:sentence_a": "source", "column:sentence_b": "hypothesis"}
    response = staff_client.post(
        f"/staff/campaigns/own/upload/{job.pk}/",
        {"format": "auto", **mapping, "column:consensus": "gold_label", "gold_map": "1=paraphrase,0=non-paraphrase"},
    )
    assert response.status_code == 302
    preview = uploads.preview(PairUpload.objects.get())
    assert [row.values.get("gold_label") for row in preview.rows] == ["yes", "no", None]
    assert preview.rows[2].problems == [
        "consensus: consensus '-100' is not in the gold mapping (1 -> paraphrase, 0 -> non-paraphrase)"
    ]
    response = staff_client.post(
        f"/staff/campaigns/own/upload/{job.pk}/",
        {
            "format": "auto",
            **mapping,
            "column:consensus": "gold_label",
            "gold_map": "1=paraphrase,0=non-paraphrase,-100=unlabelled",
        },
    )
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/import/")
    assert run_sent(sent) == ["imported"]
    assert list(Pair.objects.filter(campaign=campaign).values_list("external_id", "gold_label")) == [
        ("1", True),
        ("2", False),
        ("3", None),
    ]
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    assert "<li>Gold labels: paraphrase 1, not paraphrase 1, none 1</li>" in page

    # A bad mapping is refused with the importer's own words, nothing saved.
    post_file(staff_client, "own", content)
    other = PairUpload.objects.exclude(pk=job.pk).get()
    response = staff_client.post(f"/staff/campaigns/own/upload/{other.pk}/", {"format": "auto", "gold_map": "1"})
    assert response.status_code == 400
    assert "&#x27;1&#x27; is not VALUE=TARGET" in response.content.decode()


def test_the_upload_checks_the_csrf_token(staff_client: Client) -> None:
    """The view sets its upload handler before the body is read, then checks the token itself."""
    make_campaign(slug="own")
    guarded = Client(enforce_csrf_checks=True)
    guarded.force_login(get_user_model().objects.get(username="uploader"))
    upload = SimpleUploadedFile("pairs.csv", (CSV_HEADER + GOOD_ROWS[0]).encode())
    assert guarded.post("/staff/campaigns/own/upload/", {"file": upload, "format": "auto"}).status_code == 403
    assert PairUpload.objects.count() == 0
    assert list(uploads.upload_dir().glob("*.upload")) == []  # nothing left on disk either


def test_a_task_nobody_starts_gets_a_hint(staff_client: Client) -> None:
    import os
    import time

    make_campaign(slug="own")
    post_file(staff_client, "own", CSV_HEADER + GOOD_ROWS[0])
    job = PairUpload.objects.get()
    job.state = "check_queued"
    job.save()
    uploads.write_progress(job, uploads.Progress("check", 0, job.size))
    assert 'id="no-worker"' not in staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    old = time.time() - 60
    os.utime(uploads.progress_path(job), (old, old))
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    assert (
        '<p class="form-error" id="no-worker" role="status">No worker consumes the interactive queue: start one with '
        "scripts/worker.sh --interactive (scripts/run.sh starts one; with Docker, the interactive-worker service).</p>"
    ) in page


def test_a_queued_task_says_what_it_waits_behind(
    staff_client: Client, queue_dir: Path, django_capture_on_commit_callbacks
) -> None:
    """Queued on the interactive queue (a real filesystem broker), with a live interactive worker
    busy elsewhere and a scoring worker beside it: the page names the queue's length and what the
    interactive worker does, never "no worker"."""
    make_campaign(slug="own")
    post_file(staff_client, "own", CSV_HEADER + GOOD_ROWS[0])
    job = PairUpload.objects.get()
    now = timezone.now()
    busy_since = now.replace(hour=9, minute=30, second=5, microsecond=0)
    WorkerHeartbeat.objects.create(
        hostname="interactive-41@box",
        queues="interactive",
        pid=41,
        last_seen=now,
        doing="scoring.reports.tasks.compute_report_intervals",
        doing_since=busy_since,
    )
    WorkerHeartbeat.objects.create(hostname="scoring-42@box", queues="cpu,llm", pid=42, last_seen=now)
    WorkerHeartbeat.objects.create(  # silent for an hour: not counted
        hostname="interactive-7@gone", queues="interactive", pid=7, last_seen=now - timedelta(hours=1)
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/check/").status_code == 302
    assert [path.name.split(".")[1] for path in queue_dir.iterdir()] == ["interactive"]
    expected = (
        "Queued: 1 task waiting on the interactive queue (this one included); interactive-41@box is running "
        "scoring.reports.tasks.compute_report_intervals since 09:30:05 UTC."
    )
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    assert f'<p class="muted small" id="upload-waiting" role="status">{expected}</p>' in page
    assert 'id="no-worker"' not in page
    assert staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/status.json").json()["waiting"] == expected
    WorkerHeartbeat.objects.filter(hostname="interactive-41@box").update(doing="", doing_since=None)
    idle = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/status.json").json()["waiting"]
    assert idle == "Queued: 1 task waiting on the interactive queue (this one included); interactive-41@box is idle."


def test_an_upload_can_be_discarded(staff_client: Client) -> None:
    make_campaign(slug="own")
    post_file(staff_client, "own", CSV_HEADER + GOOD_ROWS[0])
    job = PairUpload.objects.get()
    response = staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/discard/")
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.state == "discarded"
    assert not uploads.file_path(job).exists()
    assert staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/import/").status_code == 400
    assert (
        "Discarded: the file was deleted" in staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    )


def test_an_sts_b_file_is_read_once_its_format_is_chosen(staff_client: Client) -> None:
    """STS-B has no header: the page does not claim to have recognised it above a preview that
    refuses it (the importer asks for the format, as ``import_pairs`` asks for ``--format stsb``);
    once stsb is chosen, its fixed columns and first rows are shown."""
    from tests.corpora import MISSING_REASON, SHARED_DATA

    path = SHARED_DATA / "stsb" / "sts-dev.csv"
    if not path.exists():
        pytest.skip(MISSING_REASON)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)[:20]
    make_campaign(slug="sts")
    post_file(staff_client, "sts", "".join(lines), name="sts-dev.csv")
    job = PairUpload.objects.get()
    page = staff_client.get(f"/staff/campaigns/sts/upload/{job.pk}/").content.decode()
    assert "recognised: stsb" not in page
    assert '<option value="auto" selected>not recognised</option>' in page
    assert "this looks like an STS-B file" in page and "choose the format stsb" in page
    staff_client.post(f"/staff/campaigns/sts/upload/{job.pk}/", {"format": "stsb", "origin": ""})
    page = staff_client.get(f"/staff/campaigns/sts/upload/{job.pk}/").content.decode()
    assert '<option value="stsb" selected>stsb</option>' in page
    for column, stored in [("score", "Gold score"), ("sentence1", "Sentence 1 (source)"), ("genre", "Id")]:
        assert f'<tr data-column="{column}"><th scope="row"><code>{column}</code></th><td>\n        {stored}' in page
    first = lines[0].rstrip("\n").split("\t")
    assert first[5] in page and "this looks like an STS-B file" not in page


def test_one_importer_behind_three_doors(
    staff_client: Client, sent, tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    """The upload page, ``import_pairs`` and ``POST /api/pairs/`` run the same importer:
    the same problems (line, field, message) for the same bad records, the same pairs stored."""
    import io
    import json

    from django.core.management import call_command
    from django.core.management.base import CommandError

    records = [
        {"id": "k1", "source": "One cat.", "hypothesis": "A cat.", "label": 1},
        {"id": "k2", "source": "Two dogs.", "hypothesis": "", "label": 0},
        {"id": "k3", "source": "Three birds.", "hypothesis": "3 birds.", "label": "maybe"},
    ]
    content = "".join(json.dumps(record) + "\n" for record in records)
    for slug in ("page", "command", "api"):
        make_campaign(slug=slug)

    # The page: upload, dry run (as the worker runs it).
    post_file(staff_client, "page", content, name="pairs.jsonl")
    job = PairUpload.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/campaigns/page/upload/{job.pk}/check/")
    assert run_sent(sent) == ["refused"]
    job.refresh_from_db()
    from_page = [tuple(problem) for problem in job.problems]
    # The command.
    path = tmp_path / "pairs.jsonl"
    path.write_text(content)
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_pairs", str(path), campaign="command", stderr=err)
    # The API.
    answer = staff_client.post(
        "/api/pairs/", {"campaign": "api", "pairs": records}, content_type="application/json"
    ).json()
    from_api = [(problem["line"], problem["field"] or None, problem["message"]) for problem in answer["problems"]]

    assert len(from_page) == 2 and from_page == from_api
    for line, field, message in from_page:
        assert f"line {line}: {field}: {message}" in err.getvalue() or f"line {line}: {message}" in err.getvalue()
    assert not Pair.objects.exists()

    # Corrected, the same pairs through each door.
    records[1]["hypothesis"], records[2]["label"] = "Dogs, two.", 1
    content = "".join(json.dumps(record) + "\n" for record in records)
    post_file(staff_client, "page", content, name="fixed.jsonl")
    job = PairUpload.objects.latest("pk")
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/campaigns/page/upload/{job.pk}/import/")
    assert run_sent(sent) == ["imported"]
    path.write_text(content)
    call_command("import_pairs", str(path), campaign="command", stdout=io.StringIO())
    created = staff_client.post("/api/pairs/", {"campaign": "api", "pairs": records}, content_type="application/json")
    assert created.status_code == 201
    stored = {
        slug: list(
            Pair.objects.filter(campaign__slug=slug)
            .order_by("external_id")
            .values_list("external_id", "source", "hypothesis", "gold_label")
        )
        for slug in ("page", "command", "api")
    }
    assert stored["page"] == stored["command"] == stored["api"] and len(stored["page"]) == 3
