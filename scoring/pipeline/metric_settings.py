"""The metric library's environment, built from the Django settings (the library never reads them).

:func:`from_settings` turns the settings into a :class:`~scoring.metrics.environment.MetricEnvironment`
(parsing ``PARAPLUIE_MODELS`` and ``PARAEVAL_METRICS``); the scoring app registers it as the
library's provider when it starts, and :func:`check_metric_settings` makes ``manage.py check`` (and
so ``migrate``, ``runserver`` and ``scripts/run.sh``) name a bad entry before anything runs.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from scoring.metrics.environment import MetricEnvironment
from scoring.metrics.judges import as_judge_models, default_name, parse_models
from scoring.metrics.specs import SpecError, split_list


def metric_specs(configured: str | Sequence[str]) -> tuple[str, ...]:
    """``PARAEVAL_METRICS`` as a list of specs (one string from the environment, or a list)."""
    return tuple(split_list(configured) if isinstance(configured, str) else configured)


def judge_models(configured: object) -> list[Any]:
    """``PARAPLUIE_MODELS`` parsed; empty: the single-model settings (``PARAPLUIE_MODEL``...)."""
    if isinstance(configured, str):
        text = configured.strip() or (
            f"{default_name(settings.PARAPLUIE_MODEL)}[model={settings.PARAPLUIE_MODEL},"
            f"device={settings.PARAPLUIE_DEVICE},dtype={settings.PARAPLUIE_DTYPE},"
            f"batch_size={settings.PARAPLUIE_BATCH_SIZE}]"
        )
        return parse_models(text)
    return as_judge_models(list(configured))  # type: ignore[call-overload]


_NAMES = (
    "PARAEVAL_METRICS",
    "PARAPLUIE_MODELS",
    "PARAPLUIE_MODEL",
    "PARAPLUIE_DEVICE",
    "PARAPLUIE_DTYPE",
    "PARAPLUIE_BATCH_SIZE",
    "PARAPLUIE_TUNED_DIR",
    "PARAPLUIE_TEMPLATE_DIRS",
    "PARAPLUIE_INDIRECT_MAX_NEW_TOKENS",
    "BERTSCORE_MODEL",
    "BERTSCORE_NUM_LAYERS",
    "SBERT_MODEL",
    "EMBEDDING_DEVICE",
    "PARAEVAL_ALLOW_MODEL_DOWNLOAD",
    "NLTK_DATA",
    "PARAEVAL_SERVED_PROBE_TIMEOUT",
    "PARAEVAL_SERVED_RETRY_AFTER",
)  # every setting from_settings reads: the cache's key


def _frozen(value: object) -> object:
    return tuple(_frozen(item) for item in value) if isinstance(value, list | tuple) else value


def from_settings() -> MetricEnvironment:
    """The environment of the metric library as the settings say now (built once per value of
    the settings it reads: the answer path asks for it on every judgement)."""
    key = tuple(_frozen(getattr(settings, name)) for name in _NAMES)
    try:
        hash(key)
    except TypeError:  # a test's plain dicts in PARAPLUIE_MODELS
        return _build()
    return _cached(key)


@functools.lru_cache(maxsize=8)
def _cached(key: tuple[object, ...]) -> MetricEnvironment:
    return _build()


def _build() -> MetricEnvironment:
    try:
        models = judge_models(settings.PARAPLUIE_MODELS)
    except SpecError as error:
        raise ImproperlyConfigured(f"PARAPLUIE_MODELS: {error}") from None
    return MetricEnvironment(
        metrics=metric_specs(settings.PARAEVAL_METRICS),
        judge_models=tuple(models),
        tuned_dir=Path(settings.PARAPLUIE_TUNED_DIR),
        template_dirs=tuple(Path(folder) for folder in settings.PARAPLUIE_TEMPLATE_DIRS),
        indirect_max_new_tokens=settings.PARAPLUIE_INDIRECT_MAX_NEW_TOKENS,
        bertscore_model=settings.BERTSCORE_MODEL,
        bertscore_num_layers=settings.BERTSCORE_NUM_LAYERS,
        sbert_model=settings.SBERT_MODEL,
        embedding_device=settings.EMBEDDING_DEVICE,
        allow_download=bool(settings.PARAEVAL_ALLOW_MODEL_DOWNLOAD),
        nltk_data=Path(settings.NLTK_DATA) if settings.NLTK_DATA else None,
        served_probe_timeout=float(settings.PARAEVAL_SERVED_PROBE_TIMEOUT),
        served_retry_after=float(settings.PARAEVAL_SERVED_RETRY_AFTER),
    )


@checks.register()
def check_metric_settings(app_configs: object = None, **kwargs: object) -> list[checks.CheckMessage]:
    """A bad ``PARAPLUIE_MODELS`` or ``PARAEVAL_METRICS`` entry, named before anything runs."""
    try:
        from_settings()
    except ImproperlyConfigured as error:
        return [checks.Error(str(error), id="scoring.E001")]
    return []
