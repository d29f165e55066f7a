"""The staff upload page says the same thing in its preview, its dry run and its import: one
checker behind all three, every problem listed, each message naming what to change and where."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils.html import escape

from annotate import uploads
from annotate.models import Pair, PairUpload
from paraeval import broker
from tests.builders import make_campaign, make_staff

pytestmark = pytest.mark.django_db

# Line 2: Latin-1 bytes (é as 0xE9); line 3: an empty first sentence; line 4: fine.
LATIN1_AND_EMPTY = (
    b"source,hypothesis\nCaf\xe9 au lait.,Coffee with milk.\n,The cat is asleep.\nThe cat sleeps.,The cat is asleep.\n"
)
LATIN1_MESSAGE = "not valid UTF-8: byte 0xE9 at byte offset 21 (save the file as UTF-8)"


@pytest.fixture
def staff_client() -> Client:
    client = Client()
    client.force_login(make_staff("uploader", "x"))
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


def upload_bytes(client: Client, slug: str, content: bytes, name: str = "pairs.csv") -> PairUpload:
    response = client.post(
        f"/staff/campaigns/{slug}/upload/",
        {"file": SimpleUploadedFile(name, content, content_type="text/csv"), "format": "auto"},
    )
    assert response.status_code == 302
    return PairUpload.objects.get()


def run_sent(sent: list[broker.TaskMessage]) -> list[str]:
    states = [uploads.run_upload(*message.args) for message in sent]  # type: ignore[arg-type]
    sent.clear()
    return states


def problem_rows(page: str) -> str:
    start = page.index('id="upload-problems"')
    return page[start : page.index("</table>", start)]


def test_preview_and_dry_run_list_the_same_problems_of_a_latin1_file_with_an_empty_sentence(
    staff_client: Client, sent, django_capture_on_commit_callbacks
) -> None:
    campaign = make_campaign(slug="own")
    job = upload_bytes(staff_client, "own", LATIN1_AND_EMPTY)

    preview = uploads.preview(job)
    assert [(row.line, row.problems) for row in preview.rows] == [
        (2, [LATIN1_MESSAGE]),
        (3, ["source: source is empty"]),
        (4, []),
    ]
    assert preview.rows[0].values == {}  # not shown as "Caf\ufffd au lait", as if it would be stored
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    assert "Caf\ufffd" not in page
    assert f'<td data-label="Problems:">{LATIN1_MESSAGE}</td>' in page
    assert '<td data-label="Problems:">source: source is empty</td>' in page

    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/check/")
    assert run_sent(sent) == ["refused"]
    job.refresh_from_db()
    assert job.problem_count == 2
    assert job.problems == [[2, "", LATIN1_MESSAGE], [3, "source", "source is empty"]]
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    assert "2 problems: nothing was stored" in page
    rows = problem_rows(page)
    assert LATIN1_MESSAGE in rows and "source is empty" in rows
    assert Pair.objects.filter(campaign=campaign).count() == 0


def test_the_preview_names_an_id_the_campaign_already_has_as_the_dry_run_does(
    staff_client: Client, sent, django_capture_on_commit_callbacks
) -> None:
    campaign = make_campaign(slug="own")
    Pair.objects.create(campaign=campaign, external_id="a1", source="s", hypothesis="h")
    job = upload_bytes(staff_client, "own", b"id,source,hypothesis\na1,The cat sleeps.,The cat is asleep.\n")
    clash = "external_id: id 'a1' is already in campaign 'own'"
    assert [(row.line, row.problems) for row in uploads.preview(job).rows] == [(2, [clash])]
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/check/")
    assert run_sent(sent) == ["refused"]
    job.refresh_from_db()
    assert job.problems == [[2, "external_id", "id 'a1' is already in campaign 'own'"]]


GOLD_LINK = (
    '<a class="fix-link" href="#id_gold_map">Say what this value means: Value mapping of the gold column, {where}</a>'
)


def test_a_gold_value_the_importer_cannot_read_points_to_the_value_mapping_on_the_page(
    staff_client: Client, sent, django_capture_on_commit_callbacks
) -> None:
    make_campaign(slug="own")
    content = b"source,hypothesis,label\nThe cat sleeps.,The cat is asleep.,1\nA dog.,A cat.,-100\n"
    job = upload_bytes(staff_client, "own", content)
    unreadable = "label '-100' is not a gold label (use 1/0, true/false, yes/no or paraphrase/not paraphrase)"
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    assert f'<td data-label="Problems:">label: {escape(unreadable)} {GOLD_LINK.format(where="above")}</td>' in page
    assert 'id="id_gold_map"' in page  # the link's target is on the same page

    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/check/")
    assert run_sent(sent) == ["refused"]
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    assert f"<td>{escape(unreadable)} {GOLD_LINK.format(where='below')}</td>" in problem_rows(page)

    # Following the link: the mapping reads the value, and the preview has no problem left.
    response = staff_client.post(
        f"/staff/campaigns/own/upload/{job.pk}/",
        {"format": "auto", "gold_map": "1=paraphrase,0=non-paraphrase,-100=unlabelled"},
    )
    assert response.status_code == 302
    assert [row.problems for row in uploads.preview(PairUpload.objects.get()).rows] == [[], []]


def test_a_problem_that_is_not_a_gold_value_gets_no_link(staff_client: Client) -> None:
    make_campaign(slug="own")
    job = upload_bytes(staff_client, "own", b"source,hypothesis\n,The cat is asleep.\n")
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    assert "source: source is empty" in page
    assert "fix-link" not in page


def test_an_import_shows_its_own_progress_not_the_dry_runs(
    staff_client: Client, sent, django_capture_on_commit_callbacks
) -> None:
    make_campaign(slug="own")
    job = upload_bytes(staff_client, "own", b"source,hypothesis\nThe cat sleeps.,The cat is asleep.\n")
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/check/")
    assert run_sent(sent) == ["checked"]
    # The dry run's last progress is on disk once its result shows: it cannot land after the import's start.
    assert uploads.read_progress(PairUpload.objects.get()).finished
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(f"/staff/campaigns/own/upload/{job.pk}/import/")
    # Even a dry run's figures written late (another worker, a slow disk) are not the import's.
    uploads.write_progress(job, uploads.Progress("check", job.size, job.size, finished=True))
    page = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/").content.decode()
    assert 'Importing: <span id="progress-percent">0</span>% of the file read' in page
    assert '<progress id="upload-progress" max="100" value="0">' in page
    status = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/status.json").json()
    assert (status["state"], status["phase"], status["read"], status["percent"]) == ("import_queued", "import", 0, 0)
    # The import's own progress shows as it comes.
    uploads.write_progress(job, uploads.Progress("import", job.size // 2, job.size))
    status = staff_client.get(f"/staff/campaigns/own/upload/{job.pk}/status.json").json()
    assert (status["phase"], status["read"]) == ("import", job.size // 2)
    assert run_sent(sent) == ["imported"]
