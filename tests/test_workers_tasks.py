"""A worker knows every task the project sends: each ``tasks`` module is found by the Celery app's
autodiscovery (``paraeval/celery.py``), not by a chance import elsewhere."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TASK_NAME = re.compile(r"@shared_task\([^)]*name=\"([^\"]+)\"", re.S)


def declared_tasks() -> set[str]:
    names: set[str] = set()
    for package in ("paraeval", "annotate", "scoring", "staff", "api"):
        for path in (ROOT / package).rglob("*.py"):
            names.update(TASK_NAME.findall(path.read_text()))
    return names


def test_a_fresh_worker_process_registers_every_declared_task(tmp_path: Path) -> None:
    declared = declared_tasks()
    assert {
        "scoring.tasks.score_pairs",
        "scoring.tasks.generate_candidates",
        "scoring.tuning.tasks.tune_judge",
        "scoring.probes.tasks.build_probe_set",
    } <= declared
    # What a worker does at start: set Django up, then import the default modules (autodiscovery).
    code = (
        "import django; django.setup()\n"
        "from paraeval.celery import app\n"
        "app.loader.import_default_modules()\n"
        "print('\\n'.join(sorted(name for name in app.tasks if not name.startswith('celery.'))))\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "PARAEVAL_DATA_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    registered = set(result.stdout.split())
    assert declared <= registered, f"declared but not registered by a worker: {sorted(declared - registered)}"
