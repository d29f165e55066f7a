#!/usr/bin/env bash
# Run the campaign: set up, migrate, load the demo campaign, make sure a staff account
# exists, start the two workers (interactive, scoring) and the web server, and print the links.
# Environment: PORT (8000), BIND (127.0.0.1), DATABASE_URL / REDIS_URL (optional), see docs/reference/settings.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
scripts/setup.sh

VENV=${PARAEVAL_VENV:-$ROOT/.venv}
export PARAEVAL_DATA_DIR=${PARAEVAL_DATA_DIR:-$ROOT/data}
export NLTK_DATA=${NLTK_DATA:-$PARAEVAL_DATA_DIR/nltk_data}
PORT=${PORT:-8000}
BIND=${BIND:-127.0.0.1}
export SITE_URL=${SITE_URL:-http://$BIND:$PORT}
mkdir -p "$PARAEVAL_DATA_DIR/logs"

# A stable secret key for this installation, created once and kept out of git.
if [[ -z "${SECRET_KEY:-}" ]]; then
  key_file="$PARAEVAL_DATA_DIR/secret_key"
  [[ -s "$key_file" ]] || (umask 077; "$VENV/bin/python" -c 'import secrets; print(secrets.token_urlsafe(50))' >"$key_file")
  SECRET_KEY=$(cat "$key_file")
  export SECRET_KEY
fi

manage() { "$VENV/bin/python" manage.py "$@"; }
manage migrate --noinput >/dev/null
manage collectstatic --noinput >/dev/null
# The documentation site, served to staff at /docs/ (a failed build leaves the page that says how to build it).
NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --quiet 2>/dev/null || echo "[run] the documentation site did not build: run $VENV/bin/mkdocs build"
manage load_demo
# Prints the staff account and where its password is (a file readable by you only), never the password.
manage ensure_staff

if [[ -n "${PARAEVAL_ADMIN_PASSWORD:-}" ]]; then
  password_hint="the one you set in PARAEVAL_ADMIN_PASSWORD"
elif [[ -s "$PARAEVAL_DATA_DIR/admin_password.txt" ]]; then
  password_hint="in $PARAEVAL_DATA_DIR/admin_password.txt (cat it; readable by you only)"
else
  password_hint="unchanged (an existing account: reset it with manage.py changepassword)"
fi

worker_pid=""
interactive_pid=""
server_pid=""
cleanup() {
  trap - EXIT INT TERM
  for pid in $server_pid $interactive_pid $worker_pid; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  # The workers finish their current task (warm shutdown) before they exit.
  wait $server_pid $interactive_pid $worker_pid 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# Two workers, each named <role>-<pid>@<host> (the status page counts the workers of each queue):
# - interactive: what a researcher waits for at a page (an upload's dry run or import, a report's
#   intervals), at normal priority, with the periodic sweep (beat) embedded; it never scores, so
#   model warm-up and a backlog of scores never hold it up;
# - scoring: every scoring queue (cpu, llm, and llm.<model> for each judge model of
#   PARAPLUIE_MODELS); scale out with `scripts/worker.sh --model NAME` on GPU nodes and
#   `scripts/worker.sh --queues cpu` elsewhere (docs/how-to/gpu-workers.md).
"$VENV/bin/celery" -A paraeval worker -Q "$(manage worker_queues --interactive)" --concurrency 1 \
  --hostname "interactive-$$@%h" --beat --schedule "$PARAEVAL_DATA_DIR/celerybeat-schedule" --loglevel INFO \
  >>"$PARAEVAL_DATA_DIR/logs/interactive-worker.log" 2>&1 &
interactive_pid=$!
queues=$(manage worker_queues)
# On the CPU time the pages leave (Linux's SCHED_IDLE where chrt can set it, else niceness 19):
# on a laptop the web answers volunteers first and the scores follow. Measured with 100
# volunteers and the worker busy: docs/explanation/benchmarks.md.
low_priority=(nice -n 19)
if command -v chrt >/dev/null 2>&1 && chrt --idle 0 true 2>/dev/null; then
  low_priority=(chrt --idle 0 nice -n 19)
fi
"${low_priority[@]}" "$VENV/bin/celery" -A paraeval worker -Q "$queues" --concurrency 1 \
  --hostname "scoring-$$@%h" --loglevel INFO >>"$PARAEVAL_DATA_DIR/logs/worker.log" 2>&1 &
worker_pid=$!

cat <<MSG

  ParaEval is running.
    Volunteer link:   $SITE_URL/c/${PARAEVAL_DEMO_CAMPAIGN:-demo}/
    Staff home:       $SITE_URL/staff/
    Admin:            $SITE_URL/admin/
    Dashboard:        $SITE_URL/staff/dashboard/
    Scoring status:   $SITE_URL/staff/status/
    Documentation:    $SITE_URL/docs/ (or open site/index.html)
    Staff password:   $password_hint
    Worker logs:      $PARAEVAL_DATA_DIR/logs/worker.log (scoring), interactive-worker.log
  Press Ctrl+C to stop.

MSG
# Volunteer requests take milliseconds: a short graceful timeout keeps Ctrl+C prompt even if a
# worker thread is stuck on a half-open connection.
"$VENV/bin/gunicorn" paraeval.wsgi --bind "$BIND:$PORT" --workers 2 --threads 4 --graceful-timeout 10 \
  --access-logfile "$PARAEVAL_DATA_DIR/logs/access.log" --error-logfile - &
server_pid=$!
# Stop everything as soon as either process ends (Ctrl+C, a crash, a failed start).
wait -n $server_pid $interactive_pid $worker_pid || true
echo "[run] stopping the server and the workers"
