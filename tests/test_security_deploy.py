"""Production settings: ``check --deploy`` passes, security headers, secrets read from files."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client, override_settings

ROOT = Path(__file__).resolve().parent.parent

CSP = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "frame-ancestors": ["'none'"],
    "form-action": ["'self'"],
}
PERMISSIONS = (
    "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), microphone=(), payment=(), usb=()"
)


def run_django(tmp_path: Path, env: dict[str, str], *args: str, code: str | None = None) -> subprocess.CompletedProcess:
    """``manage.py ARGS`` (or ``python -c CODE`` after django.setup) with only these settings variables."""
    dropped = {"SECRET_KEY", "DEBUG", "DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS", "SECURE_COOKIES"}
    clean = {key: value for key, value in os.environ.items() if key not in dropped and not key.startswith("SECURE_")}
    clean.update({"DJANGO_SETTINGS_MODULE": "paraeval.settings", "PARAEVAL_DATA_DIR": str(tmp_path / "data")})
    clean.update(env)
    if code is not None:
        command = [sys.executable, "-c", "import django; django.setup()\n" + code]
    else:
        command = [sys.executable, "manage.py", *args]
    return subprocess.run(command, cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120)


def production(**extra: str) -> dict[str, str]:
    return {
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "paraeval.example.org",
        "SECURE_COOKIES": "1",
        **extra,
    }


def test_production_settings_pass_check_deploy_with_no_warning(tmp_path: Path) -> None:
    result = run_django(tmp_path, production(), "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "System check identified no issues (1 silenced)."


def test_https_settings_follow_secure_cookies_and_each_can_be_set(tmp_path: Path) -> None:
    show = (
        "from django.conf import settings as s; import json; print(json.dumps([s.SECURE_SSL_REDIRECT, "
        "s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_HSTS_PRELOAD, s.SECURE_PROXY_SSL_HEADER, "
        "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE]))"
    )
    on = run_django(tmp_path, production(), code=show)
    assert json.loads(on.stdout) == [True, 31_536_000, True, True, None, True, True], on.stderr
    off = run_django(tmp_path, production(SECURE_COOKIES="0"), code=show)
    assert json.loads(off.stdout) == [False, 0, False, False, None, False, False], off.stderr
    chosen = production(
        SECURE_SSL_REDIRECT="0",
        SECURE_HSTS_SECONDS="3600",
        SECURE_HSTS_INCLUDE_SUBDOMAINS="0",
        SECURE_HSTS_PRELOAD="0",
        SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https",
    )
    result = run_django(tmp_path, chosen, code=show)
    assert json.loads(result.stdout) == [False, 3600, False, False, ["HTTP_X_FORWARDED_PROTO", "https"], True, True]
    bad = run_django(tmp_path, production(SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto"), code=show)
    assert bad.returncode != 0
    assert "SECURE_PROXY_SSL_HEADER='X-Forwarded-Proto' must be META_NAME,value" in bad.stderr


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/c/none/", "/admin/login/", "/api/campaigns/", "/static/css/base.css"])
def test_every_response_carries_the_security_headers(client: Client, path: str) -> None:
    response = client.get(path)
    policy = response["Content-Security-Policy"]
    directives = {name: sources for name, *sources in (part.split() for part in policy.split("; "))}
    assert directives == CSP
    assert len(policy.split("; ")) == len(CSP)
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"
    assert response["Permissions-Policy"] == PERMISSIONS
    if not path.startswith("/static/"):  # WhiteNoise answers static files before the clickjacking middleware
        assert response["X-Frame-Options"] == "DENY"


@pytest.mark.django_db
def test_hsts_and_the_https_redirect_when_enabled() -> None:
    with override_settings(
        SECURE_HSTS_SECONDS=31_536_000,
        SECURE_HSTS_INCLUDE_SUBDOMAINS=True,
        SECURE_HSTS_PRELOAD=True,
        SECURE_SSL_REDIRECT=True,
        ALLOWED_HOSTS=["paraeval.example.org"],
    ):
        client = Client(HTTP_HOST="paraeval.example.org")
        redirect = client.get("/admin/login/")
        assert (redirect.status_code, redirect["Location"]) == (301, "https://paraeval.example.org/admin/login/")
        secure = client.get("/admin/login/", secure=True)
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"


SHOW_SECRETS = (
    "from django.conf import settings as s; import json; d = s.DATABASES['default']; "
    "print(json.dumps([s.SECRET_KEY, d['ENGINE'], d['NAME'], d.get('PASSWORD'), s.CELERY_BROKER_URL]))"
)


def test_secrets_are_read_from_files(tmp_path: Path) -> None:
    key = secrets.token_urlsafe(50)
    files = {
        "SECRET_KEY_FILE": key + "\n",
        "DATABASE_URL_FILE": "postgres://paraeval@db.internal:5432/paraeval\n",
        "DATABASE_PASSWORD_FILE": "s3cret pass\n",
        "REDIS_URL_FILE": "redis://redis.internal:6379/2\n",
    }
    env = {"DEBUG": "0"}
    for name, content in files.items():
        path = tmp_path / name.lower()
        path.write_text(content)
        env[name] = str(path)
    result = run_django(tmp_path, env, code=SHOW_SECRETS)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [
        key,
        "django.db.backends.postgresql",
        "paraeval",
        "s3cret pass",
        "redis://redis.internal:6379/2",
    ]


def test_a_missing_secret_file_is_an_error_naming_the_variable(tmp_path: Path) -> None:
    result = run_django(tmp_path, {"SECRET_KEY_FILE": str(tmp_path / "nope")}, code=SHOW_SECRETS)
    assert result.returncode != 0
    assert f"SECRET_KEY_FILE='{tmp_path / 'nope'}' cannot be read: No such file or directory" in result.stderr
    both = run_django(tmp_path, {"SECRET_KEY": "x", "SECRET_KEY_FILE": str(tmp_path / "nope")}, code=SHOW_SECRETS)
    assert both.returncode != 0
    assert "set SECRET_KEY or SECRET_KEY_FILE, not both" in both.stderr
    empty = tmp_path / "empty"
    empty.write_text("")
    database = {"SECRET_KEY": "x", "DATABASE_URL": "postgres://u@h/db", "DATABASE_PASSWORD_FILE": str(empty)}
    result = run_django(tmp_path, database, code=SHOW_SECRETS)
    assert result.returncode != 0
    assert f"DATABASE_PASSWORD_FILE='{empty}' is an empty file" in result.stderr
