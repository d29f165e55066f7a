"""An upload's import runs on the interactive worker of ``scripts/run.sh``: SQLite, kombu's
filesystem broker, real ``celery worker`` subprocesses, no server at all.

The page's POST queues the task after its commit (a file in the broker folder) on the
interactive queue. The scoring worker, started on the queues ``scripts/run.sh`` gives it, never
takes it; the interactive worker imports the file and records the summary; the page then shows it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workers_support import ROOT, WorkerProcess, wait_for

pytestmark = pytest.mark.worker

UPLOAD = """
import json
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from annotate.models import Campaign, PairUpload
Campaign.objects.create(slug="embedded", name="Embedded")
staff = get_user_model().objects.create_user("staff", password="x", is_staff=True, is_superuser=True)
client = Client()
client.force_login(staff)
content = "id,source,hypothesis,system\\n" + "".join(f"p{i},A cat {i}.,A feline {i}.,sys{i % 2}\\n" for i in range(50))
upload_file = SimpleUploadedFile("cats.csv", content.encode())
client.post("/staff/campaigns/embedded/upload/", {"file": upload_file, "format": "auto"})
upload = PairUpload.objects.get()
response = client.post(f"/staff/campaigns/embedded/upload/{upload.pk}/import/")
print(json.dumps({"id": upload.pk, "status": response.status_code, "state": PairUpload.objects.get().state}))
"""

SUMMARY = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from annotate.models import Pair, PairUpload
client = Client()
client.force_login(get_user_model().objects.get(username="staff"))
upload = PairUpload.objects.get()
page = client.get(f"/staff/campaigns/embedded/upload/{upload.pk}/").content.decode()
summary = "<li>Imported 50 pairs (csv).</li>" in page and "<li>Systems: sys0 (25), sys1 (25)</li>" in page
pairs = Pair.objects.filter(campaign=upload.campaign).count()
print(json.dumps({"state": upload.state, "pairs": pairs, "summary": summary}))
"""


# Pairs of another campaign, queued for scoring after their commit (as an import does).
SCORE_ONE = """
import json
from django.db import transaction
from annotate.models import Campaign, Pair
from annotate.signals import announce_pairs_created
campaign = Campaign.objects.create(slug="scored", name="Scored")
with transaction.atomic():
    pairs = [Pair.objects.create(campaign=campaign, source=f"A dog {i}.", hypothesis=f"A hound {i}.") for i in range(3)]
    announce_pairs_created([pair.pk for pair in pairs])
print(json.dumps({"pairs": len(pairs)}))
"""

SCORES = """
import json
from scoring.models import Score
print(json.dumps({"done": Score.objects.filter(status="done", pair__campaign__slug="scored").count()}))
"""


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def last_json(output: str) -> dict:
    return json.loads(output.strip().splitlines()[-1])


def test_the_embedded_worker_imports_an_upload(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="paraeval.settings",
        SECRET_KEY="embedded-upload-test-key",
        DEBUG="1",
        ALLOWED_HOSTS="testserver",
        PARAEVAL_DATA_DIR=str(data),
        PARAEVAL_METRICS="lev",
        PYTHONUNBUFFERED="1",
    )
    manage(env, "migrate", "--noinput", "-v", "0")
    queued = last_json(manage(env, "shell", "-c", UPLOAD))
    assert queued["status"] == 302 and queued["state"] == "import_queued"
    queue_folder = data / "broker" / "queue"
    assert [path.name.split(".")[1] for path in queue_folder.iterdir()] == ["interactive"]

    # The scoring worker, on the queues run.sh gives it, is up and scoring, yet leaves the upload.
    scoring_queues = manage(env, "worker_queues").strip()
    assert "interactive" not in scoring_queues.split(",")
    scoring = WorkerProcess(env, tmp_path, name="scoring", queues=scoring_queues).start()
    try:
        wait_for(
            lambda: "ready." in scoring.log(), timeout=120, interval=1, what=f"the scoring worker\n{scoring.log()}"
        )
        scored = last_json(manage(env, "shell", "-c", SCORE_ONE))
        wait_for(
            lambda: last_json(manage(env, "shell", "-c", SCORES))["done"] == scored["pairs"],
            timeout=120,
            interval=2,
            what=f"the scoring worker to score\n{scoring.log()[-3000:]}",
        )
        assert [path.name.split(".")[1] for path in queue_folder.iterdir()] == ["interactive"]
        assert last_json(manage(env, "shell", "-c", SUMMARY))["state"] == "import_queued"
        assert "annotate.tasks.run_upload[" not in scoring.log()  # the banner lists it; a run has an id
    finally:
        scoring.stop()

    worker = WorkerProcess(env, tmp_path, name="uploads", queues=manage(env, "worker_queues", "--interactive").strip())
    worker.start()
    try:
        result = wait_for(
            lambda: (lambda r: r if r["state"] == "imported" else None)(last_json(manage(env, "shell", "-c", SUMMARY))),
            timeout=120,
            interval=2,
            what=f"the upload imported by the embedded worker\n{worker.log()[-3000:]}",
        )
    finally:
        worker.stop()
    assert result == {"state": "imported", "pairs": 50, "summary": True}
    assert "annotate.tasks.run_upload[" in worker.log()
