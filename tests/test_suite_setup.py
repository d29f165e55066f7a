"""The test command itself: it finds PostgreSQL, says what it skipped, and names no machine's path."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from tests.corpora import BESIDE_CHECKOUT, shared_data_dir
from tests.workers_support import closed_port

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test"
# Not the project's files: the virtual environment, git, generated data and artifacts.
IGNORED_FOLDERS = {
    ".venv",
    ".git",
    ".pytest_cache",
    ".ruff_cache",
    "data",
    "node_modules",
    "test-artifacts",
    "staticfiles",
}


def postgres_answers() -> bool:
    try:
        psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", connect_timeout=3).close()
    except psycopg.Error:
        return False
    return True


def fake_venv(folder: Path) -> Path:
    """A virtual environment whose python is the real one and whose ruff, mypy and pytest only record
    what they were given, so scripts/test.sh runs for real up to the point where pytest starts."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True)
    scripts = {
        "python": f'#!/bin/sh\nexec "{sys.executable}" "$@"\n',
        "pip": "#!/bin/sh\nexit 0\n",
        "ruff": "#!/bin/sh\nexit 0\n",
        "mypy": f'#!/bin/sh\necho mypy >> "{folder}/mypy-ran"\n',
        "lint-imports": f'#!/bin/sh\necho lint-imports >> "{folder}/checks-ran"\n',
        "mkdocs": f'#!/bin/sh\necho "mkdocs $*" >> "{folder}/checks-ran"\n',
        "pytest": (
            f'#!/bin/sh\necho "DATABASE_URL=${{DATABASE_URL:-}}" > "{folder}/pytest-env"\n'
            f'echo "$@" >> "{folder}/pytest-env"\n'
        ),
    }
    for name, text in scripts.items():
        path = bin_dir / name
        path.write_text(text, encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    # setup.sh skips its pip install when the stamp of the requirements is there.
    digest = subprocess.run(
        ["bash", "-c", "cat requirements*.txt | sha256sum | cut -c1-16"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (folder / f".paraeval-{digest}-1").touch()
    return folder


def run_test_script(venv: Path, **env: str) -> tuple[str, str]:
    environ = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    environ.update(PARAEVAL_VENV=str(venv), NLTK_DATA=str(ROOT / "data" / "nltk_data"), **env)
    done = subprocess.run(
        ["scripts/test.sh", "tests/test_x.py", "-q"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return done.stdout, (venv / "pytest-env").read_text(encoding="utf-8")


def test_the_test_command_uses_postgresql_at_the_default_address_when_it_answers(tmp_path: Path) -> None:
    if not postgres_answers():
        pytest.skip(f"needs PostgreSQL at {DEFAULT_DATABASE_URL}")
    stdout, seen = run_test_script(fake_venv(tmp_path / "venv"))
    assert f"[test] database: {DEFAULT_DATABASE_URL}\n" in stdout
    assert seen == f"DATABASE_URL={DEFAULT_DATABASE_URL}\n--durations=15 tests/test_x.py -q\n"


def test_the_test_command_keeps_a_database_url_it_is_given(tmp_path: Path) -> None:
    given = "postgres://postgres@127.0.0.1:5432/elsewhere"
    stdout, seen = run_test_script(fake_venv(tmp_path / "venv"), DATABASE_URL=given)
    assert f"[test] database: {given}\n" in stdout
    assert seen.splitlines()[0] == f"DATABASE_URL={given}"
    # The type check runs before pytest, and so do the layer contracts and
    # the documentation site's strict build.
    assert (tmp_path / "venv" / "mypy-ran").read_text(encoding="utf-8") == "mypy\n"
    assert (tmp_path / "venv" / "checks-ran").read_text(encoding="utf-8") == (
        "lint-imports\nmkdocs build --strict --quiet\n"
    )


def test_the_fast_lane_leaves_out_the_slow_kinds_of_test(tmp_path: Path) -> None:
    _, seen = run_test_script(fake_venv(tmp_path / "venv"), DATABASE_URL="postgres://postgres@127.0.0.1:5432/x")
    assert "-m" not in seen.split()
    with_fast = subprocess.run(
        ["scripts/test.sh", "--fast", "tests/test_x.py"],
        cwd=ROOT,
        env={
            **{key: value for key, value in os.environ.items() if key != "DATABASE_URL"},
            "PARAEVAL_VENV": str(tmp_path / "venv"),
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/x",
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert with_fast.returncode == 0
    # The fast lane runs no browser test: its set-up installs no Chromium; the full run's does.
    assert "no browser: setup.sh --dev --browser adds Chromium" in with_fast.stdout
    full, _ = run_test_script(fake_venv(tmp_path / "full-venv"), DATABASE_URL="postgres://postgres@127.0.0.1:5432/x")
    assert "Chromium included for the browser tests" in full
    args = (tmp_path / "venv" / "pytest-env").read_text(encoding="utf-8").splitlines()[1]
    assert (
        args == "--durations=15 -m not browser and not worker and not model and not served and not slow and not fuzz "
        "-n auto tests/test_x.py"
    )


# What setup.sh (and the recording apt-get, wc) run besides apt-get: linked into a folder that is their
# whole PATH, so chromium, chromedriver and redis-server count as missing whatever this machine has.
SETUP_TOOLS = ("bash", "cat", "cut", "dirname", "grep", "mkdir", "mktemp", "rm", "sha256sum", "sleep", "touch", "wc")


def run_setup_with_a_recording_apt_get(folder: Path, *options: str, lock_held_for: int) -> tuple[str, list[str]]:
    """scripts/setup.sh as root with an apt-get that records its arguments and whose first
    ``lock_held_for`` updates fail as apt-get does while another process holds the lists' lock."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True)
    for tool in SETUP_TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    calls, refusals = folder / "apt-calls", folder / "refusals"
    scripts = {
        "id": "#!/bin/sh\necho 0\n",
        "apt-get": (
            "#!/bin/sh\n"
            f'echo "$*" >> "{calls}"\n'
            'case "$*" in *update*)\n'
            f'  echo x >> "{refusals}"\n'
            f'  if [ "$(wc -l < "{refusals}" 2>/dev/null || echo 0)" -le {lock_held_for} ]; then\n'
            "    echo 'E: Could not get lock /var/lib/apt/lists/lock. It is held by process 7 (apt-get)' >&2\n"
            "    exit 100\n"
            "  fi;;\n"
            "esac\n"
        ),
    }
    for name, text in scripts.items():
        path = bin_dir / name
        path.write_text(text, encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    nltk = folder / "nltk_data"
    (nltk / "corpora" / "wordnet").mkdir(parents=True)
    (nltk / "corpora" / "wordnet" / "lexnames").touch()
    done = subprocess.run(
        ["bash", "scripts/setup.sh", *options],
        cwd=ROOT,
        env={
            "PATH": str(bin_dir),
            "PARAEVAL_VENV": str(fake_venv(folder / "venv")),
            "PARAEVAL_DATA_DIR": str(folder / "data"),
            "NLTK_DATA": str(nltk),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout, calls.read_text(encoding="utf-8").splitlines()


def test_setup_waits_for_the_package_lock_and_installs_no_browser_for_the_fast_lane(tmp_path: Path) -> None:
    stdout, calls = run_setup_with_a_recording_apt_get(tmp_path / "fast", "--dev", lock_held_for=1)
    assert "another process holds the package lists' lock: waiting for it (600 s at most)" in stdout
    install = "-o DPkg::Lock::Timeout=600 install -y -qq"
    assert calls[:2] == ["-o DPkg::Lock::Timeout=600 update -qq"] * 2  # refused once, then done
    assert calls[2].startswith(install) and calls[2].endswith(" redis-server") and "chromium" not in calls[2]

    _, calls = run_setup_with_a_recording_apt_get(tmp_path / "full", "--dev", "--browser", lock_held_for=0)
    assert calls[0] == "-o DPkg::Lock::Timeout=600 update -qq"
    assert calls[1].startswith(install) and calls[1].endswith(" chromium chromium-driver redis-server")


def test_a_run_without_postgresql_ends_with_its_skipped_tests_grouped_by_reason() -> None:
    environ = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_campaign_concurrency.py", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    header = next(index for index, line in enumerate(lines) if "skipped tests, by reason" in line)
    count = int(lines[header].strip("= ").split()[0])
    assert count >= 2
    assert lines[header + 1] == (
        f"{count} skipped: needs PostgreSQL: run with DATABASE_URL=postgres://postgres@127.0.0.1:5432/test"
    )
    listed = lines[header + 2 : header + 2 + count]
    assert all(line.startswith("    tests/test_campaign_concurrency.py::test_") for line in listed)


def test_redis_tests_skip_with_the_reason_when_no_server_answers(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    url = f"redis://127.0.0.1:{closed_port()}/0"
    monkeypatch.setenv("REDIS_URL_TESTS", url)
    with pytest.raises(pytest.skip.Exception, match=f"^needs a Redis server at {url} \\(set REDIS_URL_TESTS"):
        request.getfixturevalue("redis_url")


def test_the_shared_corpora_are_found_beside_the_checkout_or_through_the_variable(tmp_path: Path) -> None:
    assert ROOT.parent / "shared" / "data" == BESIDE_CHECKOUT
    assert shared_data_dir({}) == BESIDE_CHECKOUT
    assert shared_data_dir({"PARAEVAL_SHARED_DATA": str(tmp_path)}) == tmp_path


def test_no_file_of_the_project_names_a_path_of_this_machine() -> None:
    # The folders that hold the checkout are this machine's: no code, doc or script may name them.
    # (The system's temporary folder is nobody's machine path: a clone may sit in /tmp.)
    temporary = Path(tempfile.gettempdir()).resolve()
    machine_paths = [f"{folder}/" for folder in (ROOT, ROOT.parent) if folder not in {folder.parent, temporary}]
    offenders = []
    for folder, subfolders, files in os.walk(ROOT):
        if Path(folder) == ROOT:
            subfolders[:] = [name for name in subfolders if name not in IGNORED_FOLDERS]
        for name in files:
            path = Path(folder, name)
            if path.suffix not in {".py", ".md", ".sh"}:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if any(machine_path in line for machine_path in machine_paths):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


def test_every_model_change_has_its_migration(tmp_path: Path) -> None:
    """A help text changed in a model and not in a migration failed
    ``makemigrations --check`` on main; scripts/test.sh runs that check, and so does this test."""
    done = subprocess.run(
        [sys.executable, "manage.py", "makemigrations", "--check", "--dry-run"],
        cwd=ROOT,
        env={**os.environ, "SECRET_KEY": "makemigrations-check", "DEBUG": "1", "PARAEVAL_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "makemigrations --check --dry-run" in (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
