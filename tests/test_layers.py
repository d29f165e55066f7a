"""One-way layers: the import-linter contracts of ``pyproject.toml`` (annotate below scoring,
the web side never loading the worker side or a model library, the statistics free of Django,
the metric library free of campaigns), and importing the settings creates no folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_layer_contracts_hold() -> None:
    """The contracts of pyproject.toml ([tool.importlinter]), direct imports and chains alike."""
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-4000:]
    assert "0 broken" in result.stdout


def test_importing_the_settings_creates_no_folder(tmp_path: Path) -> None:
    data = tmp_path / "fresh-data"
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(PARAEVAL_DATA_DIR=str(data), SECRET_KEY="layers-test-key", DJANGO_SETTINGS_MODULE="paraeval.settings")
    code = (
        "import django; django.setup(); from django.conf import settings; print(settings.DATABASES['default']['NAME'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert not data.exists(), sorted(str(path.relative_to(tmp_path)) for path in data.rglob("*"))

    # The SQLite backend creates the folder when it first opens the database.
    code = "import django; django.setup(); from django.db import connection; connection.ensure_connection()"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert (data / "paraeval.sqlite3").is_file()


def test_a_crossed_layer_breaks_its_contract(tmp_path: Path) -> None:
    """The contracts can fail: a copy of the packages with four planted crossings breaks the
    contracts they cross, and only those."""
    import shutil

    for package in ("paraeval", "annotate", "scoring", "staff", "api"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "annotate" / "planted.py").write_text("import scoring.models  # annotate reaching up\n")
    (tmp_path / "scoring" / "metrics" / "planted.py").write_text("import scoring.pipeline.dispatch\n")
    (tmp_path / "staff" / "planted.py").write_text("import scoring.pipeline.runner  # the worker side in a page\n")
    # A plumbing module the contract does not name one by one: all of paraeval is covered.
    (tmp_path / "paraeval" / "planted.py").write_text("import annotate.models  # plumbing reaching an app\n")
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    said = " ".join(result.stdout.split())
    broken = {
        contract["name"].split(":")[0].split(" (")[0] for contract in contracts if f"{contract['name']} BROKEN" in said
    }
    assert broken == {
        "the layers",  # annotate -> scoring
        "the project's plumbing",  # paraeval -> annotate
        "the web side never loads the worker side or a model library",  # staff -> runner
        "the metric library",  # metrics -> pipeline
        "no import cycle inside a package, at any depth",  # metrics -> pipeline -> metrics
    }, result.stdout[-3000:]
