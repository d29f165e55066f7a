"""Typed readers for settings taken from the environment.

Each reader refuses a malformed value with an error that names the variable, so a
typo in a deployment fails at start-up instead of silently falling back to a default.
"""

from __future__ import annotations

import os
import re

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "", *, allow_file: bool = False) -> str:
    """Return the variable as a string, or ``default`` when it is unset.

    With ``allow_file`` the value may instead come from the file named by ``<name>_FILE``
    (Docker / Kubernetes secrets), so that a password never sits in the environment.
    """
    if allow_file:
        secret = _read_file_variable(name)
        if secret is not None:
            return secret
    return os.environ.get(name, default)


def _read_file_variable(name: str) -> str | None:
    """The content of the file ``<name>_FILE`` names (trailing newline dropped), or None when unset."""
    file_variable = f"{name}_FILE"
    path = os.environ.get(file_variable, "").strip()
    if not path:
        return None
    if os.environ.get(name):
        raise ImproperlyConfigured(f"set {name} or {file_variable}, not both")
    try:
        with open(path, encoding="utf-8") as handle:
            value = handle.read().rstrip("\r\n")
    except OSError as error:
        raise ImproperlyConfigured(f"{file_variable}={path!r} cannot be read: {error.strerror}") from None
    if not value:
        raise ImproperlyConfigured(f"{file_variable}={path!r} is an empty file")
    return value


def env_bool(name: str, default: bool = False) -> bool:
    """Parse a boolean variable (1/0, true/false, yes/no, on/off)."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    """Parse an integer variable, optionally refusing values below ``minimum``."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def env_float(name: str, default: float) -> float:
    """Parse a floating-point variable."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    """Parse a comma-separated list; blanks around items are dropped."""
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_int_map(name: str, *, minimum: int | None = None) -> dict[str, int]:
    """Parse ``key=integer`` entries separated by commas (``bleu=30,parapluie_indirect=900``)."""
    parsed: dict[str, int] = {}
    for item in env_list(name, []):
        key, equals, raw = item.partition("=")
        key = key.strip()
        if not equals or not key:
            raise ImproperlyConfigured(f"{name}: {item!r} is not name=integer")
        try:
            value = int(raw)
        except ValueError:
            raise ImproperlyConfigured(f"{name}: {item!r}: {raw.strip()!r} is not an integer") from None
        if minimum is not None and value < minimum:
            raise ImproperlyConfigured(f"{name}: {item!r} must be at least {minimum}")
        parsed[key] = value
    return parsed


def env_choice(name: str, default: str, choices: set[str]) -> str:
    """Parse a variable that must be one of ``choices``."""
    value = os.environ.get(name, default).strip()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} must be one of {', '.join(sorted(choices))}")
    return value


# django-ratelimit's grammar ("30/10m": 30 per 10 minutes) and DRF's ("60/min", no multiplier).
_RATE = re.compile(r"^[1-9]\d*/\d*[smhd]$")
_DRF_RATE = re.compile(r"^[1-9]\d*/(?:s|sec|second|m|min|minute|h|hour|d|day)$")


def checked_rate(name: str, value: str, *, drf: bool = False) -> str:
    """Refuse a malformed rate, naming the variable ("30/10m"; DRF's throttles: "60/min")."""
    if (_DRF_RATE if drf else _RATE).match(value.strip()):
        return value.strip()
    example = "60/min, 1000/hour or 10000/day" if drf else "30/10m (30 per 10 minutes), 5/m or 100/h"
    raise ImproperlyConfigured(f"{name}={value!r} is not a rate (e.g. {example})")


def installation_secret_key(data_dir: os.PathLike[str] | str) -> str:
    """The key ``scripts/run.sh`` keeps in ``<data_dir>/secret_key``, or "" when there is none.

    Every ``manage.py`` command then signs with the installation's key in a fresh shell, as the
    server does. The file must be readable by its owner only (run.sh creates it with umask 077):
    a key others can read is refused, never used.
    """
    path = os.path.join(os.fspath(data_dir), "secret_key")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return ""
    if mode & 0o077:
        raise ImproperlyConfigured(
            f"{path} can be read by other users (mode {mode & 0o777:o}); make it yours only: chmod 600 {path}"
        )
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError as error:
        raise ImproperlyConfigured(f"{path} cannot be read: {error.strerror}") from None
