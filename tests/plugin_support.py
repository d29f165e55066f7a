"""Install the example plug-in (examples/paraeval-example-metric) for the tests, as pip does.

``pip install --target`` into a temporary folder (no network, no build isolation: the
environment's setuptools builds it from its ``pyproject.toml``), put on ``sys.path`` here and on
``PYTHONPATH`` for the worker subprocesses. A second folder holds a hand-written ``.dist-info``
declaring the badly behaved metrics of ``tests/plugin_metrics.py``. Works on a fresh machine
once the project's requirements are installed; the shared environment is left untouched.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "paraeval-example-metric"
BAD_ENTRY_POINTS = """[paraeval.metrics]
test_raising = tests.plugin_metrics:Raising
test_miscounting = tests.plugin_metrics:Miscounting
test_misnamed = tests.plugin_metrics:Misnamed
test_nonfinite = tests.plugin_metrics:NonFinite
test_not_a_number = tests.plugin_metrics:NotANumber
test_exiting = tests.plugin_metrics:Exiting
test_sleeping = tests.plugin_metrics:Sleeping
"""


def install_example(folder: Path) -> Path:
    """pip-install the example package into ``folder/site`` (from a copy: pip builds in place)."""
    source = folder / "source"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    site = folder / "site"
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run([*command, "--no-index", "--target", str(site), str(source)], check=True, timeout=120)
    return site


def write_bad_plugins(folder: Path, version: str = "0.0.1") -> Path:
    """A folder whose ``.dist-info`` declares the metrics of ``tests/plugin_metrics.py``."""
    info = folder / f"paraeval_test_plugins-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: paraeval-test-plugins\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(BAD_ENTRY_POINTS)
    return folder


@contextmanager
def on_path(*folders: Path) -> Iterator[None]:
    """Put ``folders`` first on ``sys.path`` for the duration (entry points are read from it)."""
    added = [str(folder) for folder in folders]
    sys.path[:0] = added
    try:
        yield
    finally:
        for folder in added:
            sys.path.remove(folder)
        for name in [name for name in sys.modules if name.startswith("paraeval_example_metric")]:
            del sys.modules[name]
