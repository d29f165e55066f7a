"""The web process never imports torch (nor any model library), whatever page it serves.

A fresh interpreter loads every URL module and every view module the routes point to, renders
the staff status page and dispatches scoring for real pairs (the path a volunteer's answer
takes), then reports which heavy modules it imported: none may appear.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workers_support import ROOT

pytestmark = pytest.mark.worker

HEAVY = ("torch", "transformers", "bert_score", "sentence_transformers", "accelerate", "gguf", "spacy")

SCRIPT = """
import importlib, json, sys
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)

from django.urls import URLPattern, URLResolver, get_resolver
views = set()
def walk(patterns):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            walk(pattern.url_patterns)
        else:
            views.add(pattern.callback.__module__)
            importlib.import_module(pattern.callback.__module__)
walk(get_resolver().url_patterns)

from django.contrib.auth import get_user_model
from django.test import Client
from annotate.models import Campaign, Pair
from scoring.pipeline import configs
from scoring.pipeline import dispatch

campaign = Campaign.objects.create(slug="web", name="Web")
pairs = Pair.objects.bulk_create([Pair(campaign=campaign, source=f"A {i}.", hypothesis=f"B {i}.") for i in range(3)])
metrics, unavailable = configs.build_enabled()
hashes = [metric.config_hash for metric in metrics]
result = dispatch.queue_missing([pair.pk for pair in pairs])

staff = get_user_model().objects.create_user("staff", password="x", is_staff=True, is_superuser=True)
client = Client()
client.force_login(staff)
status = client.get("/staff/status.json").status_code
page = client.get("/staff/status/").status_code

heavy = sorted({name.split(".")[0] for name in sys.modules} & set(HEAVY))
worker_side = sorted(name for name in sys.modules if name in ("scoring.pipeline.runner", "scoring.pipeline.tasks"))
print(json.dumps({"views": sorted(views), "metrics": len(hashes), "sent": result.sent, "status": [status, page],
                  "heavy": heavy, "worker_side": worker_side}))
"""


def test_the_web_process_never_imports_torch(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="paraeval.settings",
        SECRET_KEY="web-imports-test-key",
        DEBUG="1",  # plain static files: this checks imports, not collectstatic
        ALLOWED_HOSTS="testserver",
        PARAEVAL_DATA_DIR=str(tmp_path / "data"),
    )
    env.pop("PARAEVAL_METRICS", None)  # every default metric, ParaPLUIE included
    code = f"HEAVY = {HEAVY!r}\n" + SCRIPT
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])

    assert report["heavy"] == [], f"the web process imported {report['heavy']}"
    assert report["worker_side"] == [], f"the web process imported the worker's {report['worker_side']}"
    assert "staff.views.status" in report["views"] and "annotate.views" in report["views"]
    assert report["metrics"] >= 2 and report["sent"] >= 2  # the dispatch path really ran
    assert report["status"] == [200, 200]
