#!/usr/bin/env bash
# Start a scoring worker.
#   scripts/worker.sh                      every queue (cpu, llm, llm.<model> for each judge model)
#   scripts/worker.sh --model mistral      one judge model's queue (llm.mistral): only that model is
#                                          ever loaded in this worker (a GPU node)
#   scripts/worker.sh --queues cpu,llm     explicit queues (or WORKER_QUEUES=cpu,llm)
# Further arguments go to `celery worker` (e.g. --concurrency 2 --beat). Same environment as the
# web process (DATABASE_URL, REDIS_URL, PARAPLUIE_MODELS, PARAEVAL_METRICS…): a worker rebuilds
# the configurations the web process hashed, and refuses any that differ.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${PARAEVAL_VENV:-$(pwd)/.venv}
# The Docker image installs into the system Python: use what is on PATH when there is no venv.
if [[ -x "$VENV/bin/python" ]]; then python=$VENV/bin/python; celery=$VENV/bin/celery; else python=python; celery=celery; fi
models=()
queues=""
extra=()
[[ -n "${WORKER_QUEUES:-}" ]] && queues=$WORKER_QUEUES
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model) models+=(--model "$2"); shift 2 ;;
    --model=*) models+=(--model "${1#--model=}"); shift ;;
    --queues) queues=$2; shift 2 ;;
    --queues=*) queues=${1#--queues=}; shift ;;
    *) extra+=("$1"); shift ;;
  esac
done
if [[ -z "$queues" ]]; then
  queues=$("$python" manage.py worker_queues "${models[@]}")
fi
echo "[worker] consuming: $queues" >&2
exec "$celery" -A paraeval worker -Q "$queues" --concurrency 1 --loglevel INFO "${extra[@]}"
