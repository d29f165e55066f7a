#!/usr/bin/env bash
# Start a worker.
#   scripts/worker.sh                      scoring: every scoring queue (cpu, llm, llm.<model> for
#                                          each judge model)
#   scripts/worker.sh --interactive        the interactive queue: what a researcher waits for at a
#                                          page (uploads, report intervals); it never scores
#   scripts/worker.sh --model mistral      one judge model's queue (llm.mistral): only that model is
#                                          ever loaded in this worker (a GPU node)
#   scripts/worker.sh --queues cpu,llm     explicit queues (or WORKER_QUEUES=cpu,llm)
# Each worker is named <role>-<pid>@<host> unless --hostname/-n is given: two workers of one host
# never share a name (the status page counts the workers of each queue by name).
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
role=scoring
named=""
extra=()
[[ -n "${WORKER_QUEUES:-}" ]] && queues=$WORKER_QUEUES
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model) models+=(--model "$2"); shift 2 ;;
    --model=*) models+=(--model "${1#--model=}"); shift ;;
    --queues) queues=$2; shift 2 ;;
    --queues=*) queues=${1#--queues=}; shift ;;
    --interactive) role=interactive; shift ;;
    -n|--hostname|-n=*|--hostname=*) named=1; extra+=("$1"); shift ;;
    *) extra+=("$1"); shift ;;
  esac
done
if [[ "$role" == interactive ]]; then
  queues=$("$python" manage.py worker_queues --interactive)
elif [[ -z "$queues" ]]; then
  queues=$("$python" manage.py worker_queues "${models[@]}")
fi
# $$ is this shell's pid, which exec hands to celery: a name no other process of the host has.
[[ -z "$named" ]] && extra=(--hostname "$role-$$@%h" "${extra[@]}")
echo "[worker] $role, consuming: $queues" >&2
exec "$celery" -A paraeval worker -Q "$queues" --concurrency 1 --loglevel INFO "${extra[@]}"
