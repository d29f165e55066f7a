#!/usr/bin/env bash
# Run the whole test suite: set up (with test dependencies and Chromium), lint, then pytest.
# With DATABASE_URL set (PostgreSQL) the suite runs on it, SQLite otherwise; the worker and
# queue tests use Redis at REDIS_URL (default redis://127.0.0.1:6379/15).
# Extra arguments go to pytest, e.g. scripts/test.sh tests/test_diff.py -x
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
scripts/setup.sh --dev
VENV=${PARAEVAL_VENV:-$ROOT/.venv}
export NLTK_DATA=${NLTK_DATA:-$ROOT/data/nltk_data}
echo "[test] database: ${DATABASE_URL:-SQLite (set DATABASE_URL for PostgreSQL)}"
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
exec "$VENV/bin/pytest" "$@"
