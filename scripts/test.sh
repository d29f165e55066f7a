#!/usr/bin/env bash
# Run the whole test suite: set up (with test dependencies, and Chromium unless --fast), lint, type-check,
# then pytest.
# The database: DATABASE_URL when set; else PostgreSQL at postgres://postgres@127.0.0.1:5432/test
# when that server answers (so the PostgreSQL-only tests, the allocation lock's among them, run);
# else SQLite, and those tests are skipped. The worker and queue tests use Redis at
# REDIS_URL_TESTS (default redis://127.0.0.1:6379/15). pytest ends with the skipped tests
# grouped by reason (no PostgreSQL, no Redis, no shared corpora).
# Extra arguments go to pytest, e.g. scripts/test.sh tests/test_diff.py -x
#   scripts/test.sh --fast   the fast lane: no browser, no worker process, no model, no LLM server,
#                            no large file or fuzzing, on every core (pytest-xdist; PARAEVAL_TEST_PROCESSES=1 for
#                            one process); under 3 minutes on 2 cores. CI runs the whole suite.
set -euo pipefail
MARKERS=()
SETUP=(--dev --browser)
if [[ "${1:-}" == "--fast" ]]; then
  shift
  SETUP=(--dev)  # the fast lane runs no browser test: no Chromium to install
  # Several pytest processes: each gets its own test database (pytest-django adds _gw0, _gw1, ...).
  # The full run stays in one process: its browser and worker tests start servers of their own.
  MARKERS=(-m "not browser and not worker and not model and not served and not slow and not fuzz" -n "${PARAEVAL_TEST_PROCESSES:-auto}")
fi
cd "$(dirname "$0")/.."
ROOT=$(pwd)
scripts/setup.sh "${SETUP[@]}"
VENV=${PARAEVAL_VENV:-$ROOT/.venv}
export NLTK_DATA=${NLTK_DATA:-$ROOT/data/nltk_data}
DEFAULT_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test
if [[ -z "${DATABASE_URL:-}" ]]; then
  # A real connection, not only an open port: the server must accept this user (3 s at most).
  if "$VENV/bin/python" -c "import psycopg, sys; psycopg.connect(sys.argv[1], connect_timeout=3).close()" \
    "${DEFAULT_DATABASE_URL%/*}/postgres" >/dev/null 2>&1; then
    export DATABASE_URL=$DEFAULT_DATABASE_URL
  fi
fi
echo "[test] database: ${DATABASE_URL:-SQLite (no PostgreSQL answers at $DEFAULT_DATABASE_URL; the PostgreSQL-only tests will be skipped)}"
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
"$VENV/bin/lint-imports" --no-cache >/dev/null || "$VENV/bin/lint-imports" --no-cache  # the layer contracts of pyproject.toml
"$VENV/bin/mypy"  # [tool.mypy] files in pyproject.toml (Django, DRF plugins); scoring.analysis and scoring.metrics strict
# Every model change has its migration (a help text too: Django stores it in the migration).
SECRET_KEY=makemigrations-check DEBUG=1 PARAEVAL_DATA_DIR=$(mktemp -d) "$VENV/bin/python" manage.py makemigrations --check --dry-run >/dev/null \
  || { echo "[test] a model change has no migration: run manage.py makemigrations"; exit 1; }
# The documentation site: a broken link, a missing page or a page left out of the navigation fails here.
NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict --quiet
# The slowest tests are listed at the end (--durations), so a slow one is seen when it appears.
exec "$VENV/bin/pytest" --durations=15 "${MARKERS[@]}" "$@"
