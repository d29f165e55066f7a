"""One-way layers, checked on the source: annotate below scoring, web code beside the worker.

* ``annotate`` never imports ``scoring`` (scoring reads pairs and judgements; the pair-level
  export gets its score columns through ``annotate.exports.scores``, which scoring provides);
* the web side of scoring (dispatch, status, the shared queries) never imports the worker's
  runner, its tasks, a metric module or a model library;
* importing the settings creates no folder.

Imports under ``if TYPE_CHECKING:`` are for the type checker only and are not counted.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WEB_SIDE = ("scoring/dispatch.py", "scoring/status.py", "scoring/pending.py", "scoring/broker.py")
WORKER_SIDE = ("scoring.runner", "scoring.tasks", "scoring.worker", "scoring.metrics", "torch", "transformers")


def imported_modules(path: Path) -> list[str]:
    """Every module ``path`` imports at run time (``from a import b`` counts ``a`` and ``a.b``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _under(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == package or name.startswith(package + ".") for package in packages)


def test_the_walker_sees_plain_nested_and_from_imports(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from scoring.metrics import base\n"
        "def f():\n    from scoring import runner\n    import torch.nn\n"
    )
    assert imported_modules(sample) == ["os", "typing", "typing.TYPE_CHECKING", "scoring", "scoring.runner", "torch.nn"]


def test_annotate_never_imports_scoring() -> None:
    offenders = {
        str(path.relative_to(ROOT)): names
        for path in sorted((ROOT / "annotate").rglob("*.py"))
        if (names := [name for name in imported_modules(path) if _under(name, ("scoring",))])
    }
    assert offenders == {}


@pytest.mark.parametrize("module", WEB_SIDE)
def test_web_code_never_imports_the_worker_side(module: str) -> None:
    names = [name for name in imported_modules(ROOT / module) if _under(name, WORKER_SIDE)]
    assert names == []


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
