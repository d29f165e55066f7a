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


def test_a_bad_judge_model_entry_is_named_by_the_system_check(settings) -> None:
    """PARAPLUIE_MODELS is parsed by the scoring app (the settings module imports no app): a bad
    entry fails `manage.py check` (and so migrate and scripts/run.sh) with its reason."""
    import io

    from django.core.management import call_command
    from django.core.management.base import SystemCheckError

    from scoring.metrics import environment
    from scoring.pipeline.metric_settings import check_metric_settings

    settings.PARAPLUIE_MODELS = "smollm2[model=embedded]; smollm2[model=embedded,device=cuda]"
    [error] = check_metric_settings()
    assert error.id == "scoring.E001"
    assert error.msg == "PARAPLUIE_MODELS: model name(s) given twice: smollm2"
    with pytest.raises(SystemCheckError, match="PARAPLUIE_MODELS: model name"):
        call_command("check", stdout=io.StringIO())
    settings.PARAPLUIE_MODELS = "smollm2[model=embedded,device=cuda,batch_size=4]"
    assert check_metric_settings() == []
    [judge] = environment.current().judge_models
    assert (judge.name, judge.device, judge.batch_size) == ("smollm2", "cuda", 4)
    settings.PARAEVAL_METRICS = "lev, bleu[tokenize=moses,lowercase=false];wer"
    assert environment.current().metrics == ("lev", "bleu[tokenize=moses,lowercase=false]", "wer")
