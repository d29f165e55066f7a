"""``manage.py import_pairs`` starts light: the analyses' libraries (scikit-learn, SciPy, pandas) and
the models' (torch, transformers) are never loaded by an import (benchmarks/import_memory.py
measures the memory; the system checks' URLconf used to pull them in, about 170 MiB)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("sklearn", "scipy", "pandas", "torch", "transformers", "sentence_transformers", "bert_score")


def test_an_import_loads_none_of_the_heavy_libraries(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PARAEVAL_DATA_DIR": str(tmp_path), "SECRET_KEY": "x"}
    pairs = tmp_path / "one.csv"
    pairs.write_text("id,source,hypothesis\na,The cat sleeps.,The cat is asleep.\n", encoding="utf-8")
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, capture_output=True, timeout=180
    )
    assert migrate.returncode == 0, migrate.stderr
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "manage.py", "import_pairs", str(pairs), "--campaign", "one", "--create"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("Created campaign 'one'.\nImported 1 pair into campaign 'one'.\n")
    loaded = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", result.stderr, flags=re.MULTILINE))
    assert len(loaded) > 100  # the listing was read
    assert sorted({name.split(".")[0] for name in loaded} & set(HEAVY)) == []
