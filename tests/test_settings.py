"""Settings come from the environment, with safe defaults and loud refusals."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from paraeval.env import env_bool, env_int, env_list

ROOT = Path(__file__).resolve().parent.parent


def _load_settings(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {key: value for key, value in os.environ.items() if key not in {"SECRET_KEY", "DEBUG", "DATABASE_URL"}}
    code = "import paraeval.settings as s; print(s.DATABASES['default']['ENGINE'], s.DEBUG)"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=60
    )


def test_secret_key_is_required_when_debug_is_off(tmp_path):
    result = _load_settings({"PARAEVAL_DATA_DIR": str(tmp_path)})
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_defaults_are_sqlite_and_debug_off(tmp_path):
    result = _load_settings({"SECRET_KEY": "x", "PARAEVAL_DATA_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["paraeval.sqlite", "False"]  # Django's, creating its folder


def test_database_url_selects_postgresql(tmp_path):
    result = _load_settings({"SECRET_KEY": "x", "DATABASE_URL": "postgres://u@127.0.0.1:5432/db"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "django.db.backends.postgresql"


def test_env_readers_name_the_bad_variable(monkeypatch):
    monkeypatch.setenv("PARAEVAL_X", "maybe")
    with pytest.raises(ImproperlyConfigured, match="PARAEVAL_X"):
        env_bool("PARAEVAL_X")
    monkeypatch.setenv("PARAEVAL_Y", "ten")
    with pytest.raises(ImproperlyConfigured, match="PARAEVAL_Y"):
        env_int("PARAEVAL_Y", 1)
    monkeypatch.setenv("PARAEVAL_Y", "0")
    with pytest.raises(ImproperlyConfigured, match="at least 1"):
        env_int("PARAEVAL_Y", 1, minimum=1)
    monkeypatch.setenv("PARAEVAL_Z", " a, b ,,c ")
    assert env_list("PARAEVAL_Z", []) == ["a", "b", "c"]
