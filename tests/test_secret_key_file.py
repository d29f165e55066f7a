"""manage.py finds the installation's key (``PARAEVAL_DATA_DIR/secret_key``, as scripts/run.sh writes it)
in a fresh shell, refuses a key file others can read, and a server with no key still refuses to start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEY = "k3y-from-the-installation-" + "x" * 30


def fresh_shell(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python manage.py ARGS`` with nothing exported but PATH, HOME and the data folder."""
    env = {"PATH": os.environ["PATH"], "HOME": str(data_dir), "PARAEVAL_DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )


def write_key(data_dir: Path, mode: int) -> None:
    path = data_dir / "secret_key"
    path.write_text(KEY + "\n", encoding="utf-8")
    path.chmod(mode)


def test_readme_commands_run_in_a_fresh_shell_with_the_installations_key(tmp_path):
    write_key(tmp_path, 0o600)
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("id,source,hypothesis\na,The cat sleeps.,The cat is asleep.\n", encoding="utf-8")

    assert fresh_shell(tmp_path, "migrate", "--noinput").returncode == 0
    imported = fresh_shell(tmp_path, "import_pairs", str(pairs), "--campaign", "fresh", "--create")
    assert imported.returncode == 0, imported.stderr
    assert "SECRET_KEY" not in imported.stderr
    shown = fresh_shell(tmp_path, "shell", "-c", "from django.conf import settings; print(settings.SECRET_KEY)")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip().splitlines()[-1] == KEY


def test_a_key_file_others_can_read_is_refused_with_the_fix(tmp_path):
    write_key(tmp_path, 0o644)
    result = fresh_shell(tmp_path, "check")
    assert result.returncode != 0
    path = tmp_path / "secret_key"
    assert f"{path} can be read by other users (mode 644); make it yours only: chmod 600 {path}" in result.stderr


def test_without_a_key_file_a_server_still_needs_secret_key(tmp_path):
    result = fresh_shell(tmp_path, "check")
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr
