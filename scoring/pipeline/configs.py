"""Which metric configurations are enabled, and their rows in the database.

A configuration is identified by ``Metric.config_hash`` (metric name + every setting that
changes the number). Building a metric is cheap and imports no model library, so the web
process can call everything here; the models load on the first score, in a worker.

Metrics come from the registry (``scoring.metrics.registry``) and, for metrics that are not
part of the project, from the modules named in ``PARAEVAL_METRIC_PLUGINS``: each defines
``METRICS = {name: factory}`` where ``factory()`` returns a :class:`Metric`.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.db import IntegrityError, transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from scoring.metrics import environment, registry
from scoring.metrics.base import Metric, MetricUnavailable
from scoring.metrics.registry import UnknownMetric, build_metric, build_specs, metric_names, parse_spec
from scoring.models import MetricConfig

logger = logging.getLogger(__name__)

MetricFactory = Callable[[], Metric]


@dataclass(frozen=True)
class UnavailableMetric:
    """A metric listed in ``PARAEVAL_METRICS`` that cannot be built here, and why."""

    name: str
    reason: str
    retry: bool = False  # unavailable for now (a served judge's server unreachable): built again next time


def plugin_metrics() -> dict[str, MetricFactory]:
    """Metric factories of the ``PARAEVAL_METRIC_PLUGINS`` modules, by name."""
    factories: dict[str, MetricFactory] = {}
    for module_name in settings.PARAEVAL_METRIC_PLUGINS:
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise ImproperlyConfigured(f"PARAEVAL_METRIC_PLUGINS: cannot import {module_name!r}: {error}") from error
        metrics = getattr(module, "METRICS", None)
        if not isinstance(metrics, Mapping):
            raise ImproperlyConfigured(
                f"PARAEVAL_METRIC_PLUGINS: {module_name!r} must define METRICS = {{name: factory}}"
            )
        factories.update(metrics)
    return factories


def known_metric_names() -> list[str]:
    """Every metric name that can be built: the registry's, then the plugins'."""
    names = metric_names()
    return names + [name for name in plugin_metrics() if name not in names]


def canonical_name(name: str) -> str:
    """Resolve an alias (``parapluie_fs``) to its metric name, keeping a spec's options
    (``bleu[lowercase=false]``); refuse unknown names clearly."""
    try:
        return str(parse_spec(name))
    except UnknownMetric:
        if name in plugin_metrics():
            return name
        raise UnknownMetric(f"unknown metric {name!r}; known metrics: {', '.join(known_metric_names())}") from None


def build_all(name: str) -> list[Metric]:
    """Every metric a spec names (registry first, then plugins): ParaPLUIE without ``model=``
    gives one configuration per judge model of ``PARAPLUIE_MODELS``."""
    try:
        return build_specs(name)
    except UnknownMetric:
        return [_build_plugin(name)]


def build(name: str) -> Metric:
    """Build the metric a spec names (registry first, then plugins) from the settings.

    A ParaPLUIE spec without ``model=`` gives the first (default) judge model's configuration.
    """
    try:
        return build_metric(name)
    except UnknownMetric:
        return _build_plugin(name)


def _build_plugin(name: str) -> Metric:
    factories = plugin_metrics()
    if name not in factories:
        raise UnknownMetric(f"unknown metric {name!r}; known metrics: {', '.join(known_metric_names())}") from None
    metric = factories[name]()
    if metric.name != name:
        raise ImproperlyConfigured(f"plugin metric {name!r} builds a metric named {metric.name!r}") from None
    metric.spec = name  # type: ignore[attr-defined]
    return metric


def build_enabled() -> tuple[list[Metric], list[UnavailableMetric]]:
    """Build every metric of ``PARAEVAL_METRICS``; those that cannot be built come back with why.

    A metric whose module is missing or whose options are wrong must not stop the others
    (nor a volunteer's answer): it is logged and listed on the status page. The result is
    kept for the life of the process (every judgement dispatches through it) and forgotten
    when a setting changes (tests).
    """
    from scoring.metrics.judges import tuned_state

    # A tuned judge added or removed (scoring.tuning.service) is another set of metrics.
    metrics, unavailable = _build_enabled(tuned_state())
    if any(item.retry for item in unavailable):
        _build_enabled.cache_clear()  # a served judge's server was down: ask it again next time
    return list(metrics), list(unavailable)


@cache
def _build_enabled(tuned: tuple[tuple[str, int], ...] = ()) -> tuple[tuple[Metric, ...], tuple[UnavailableMetric, ...]]:
    metrics: list[Metric] = []
    unavailable: list[UnavailableMetric] = []
    seen: set[str] = set()
    for name in environment.current().metrics:
        try:
            built = build_all(name)
        except Exception as error:  # noqa: BLE001 - any construction error disables only this metric
            reason = f"{type(error).__name__}: {error}"
            logger.warning("metric %s is enabled in PARAEVAL_METRICS but cannot be built: %s", name, reason)
            unavailable.append(UnavailableMetric(name, reason, retry=isinstance(error, MetricUnavailable)))
            continue
        for metric in built:
            if metric.config_hash not in seen:
                seen.add(metric.config_hash)
                metrics.append(metric)
    return tuple(metrics), tuple(unavailable)


def is_dropped(config: MetricConfig) -> bool:
    """Whether a worker drops the queued work of ``config`` instead of computing it: a plug-in
    metric (code outside the project) that this process's ``PARAEVAL_METRICS`` no longer lists.

    A metric of the project keeps being rebuilt from its stored spec when it is not listed (a
    score of ``manage.py score_pairs --metrics`` retried from the admin).
    """
    entry = registry.entries().get(config.metric)
    builtin = entry is not None and entry.package is None
    return not builtin and not is_configured(config)


def is_configured(config: MetricConfig) -> bool:
    """Whether this process's ``PARAEVAL_METRICS`` still lists ``config``'s metric.

    True for an enabled configuration, and for another configuration of a listed metric (other
    settings: the runner says so) or one listed that cannot be built here (the runner says why).
    """
    metrics, unavailable = build_enabled()
    if any(metric.config_hash == config.config_hash or metric.name == config.metric for metric in metrics):
        return True
    listed = {item.name for item in unavailable} | {item.name.split("[", 1)[0].strip() for item in unavailable}
    return config.metric in listed or config.spec in listed


def all_queues() -> list[str]:
    """Every queue work can go to: ``cpu``, ``llm`` (embedding models), one ``llm.<model>`` per
    judge model of ``PARAPLUIE_MODELS``, and any other queue an enabled metric names.

    The embedded worker of ``scripts/run.sh`` consumes them all (``manage.py worker_queues``)."""
    from scoring.metrics.judges import configured_models

    queues = ["cpu", "llm", *(judge.queue for judge in configured_models())]
    metrics, _ = build_enabled()
    queues += [metric.queue for metric in metrics]
    return list(dict.fromkeys(queues))


def queue_models() -> dict[str, str]:
    """The judge model (its name and where it is) each ``llm.<model>`` queue serves."""
    from scoring.metrics.judges import configured_models

    return {
        judge.queue: (
            f"{judge.name} (served at {judge.model})"
            if judge.is_served
            else f"{judge.name} ({judge.model}, {judge.device}, {judge.dtype})"
        )
        for judge in configured_models()
    }


def metric_language(metric: Metric) -> str:
    """The language of the pairs a metric applies to: a ParaPLUIE template's, else "" (any)."""
    template = getattr(metric, "template", None)
    return str(getattr(template, "language", "") or "")


def metric_spec(metric: Metric) -> str:
    """The spec that rebuilds ``metric`` (its name when it was built without one)."""
    return str(getattr(metric, "spec", "") or metric.name)


@receiver(setting_changed)
def _forget_enabled(**kwargs: object) -> None:
    _build_enabled.cache_clear()
    _enabled_cache.forget()


def _fields(metric: Metric) -> dict[str, object]:
    """The stored description of a metric configuration (everything but the hash)."""
    return {
        "metric": metric.name,
        "config": metric.identity(),
        "label": metric.label[:200],
        "higher_is_closer": metric.higher_is_closer,
        "natural_threshold": metric.natural_threshold,
        "queue": metric.queue,
        "spec": metric_spec(metric)[:300],
        "language": metric_language(metric),
    }


def ensure_metric_config(metric: Metric) -> MetricConfig:
    """Get or create the row of ``metric``'s configuration (race-safe: unique ``config_hash``).

    The descriptive fields (label, direction, threshold, queue) follow the code: when they
    changed without changing the numbers, the row is updated.
    """
    return ensure_metric_configs([metric])[0]


def ensure_metric_configs(metrics: Iterable[Metric]) -> list[MetricConfig]:
    """:func:`ensure_metric_config` for several metrics with one query when all rows exist."""
    metrics = list(metrics)
    wanted = {metric.config_hash: metric for metric in metrics}
    rows = {row.config_hash: row for row in MetricConfig.objects.filter(config_hash__in=list(wanted))}
    for config_hash, metric in wanted.items():
        fields = _fields(metric)
        row = rows.get(config_hash)
        if row is None:
            rows[config_hash] = _create(config_hash, fields)
            continue
        described = ("label", "higher_is_closer", "natural_threshold", "queue", "spec", "language")
        changed = [name for name in described if getattr(row, name) != fields[name]]
        if changed:
            for name in changed:
                setattr(row, name, fields[name])
            row.save(update_fields=changed)
    return [rows[metric.config_hash] for metric in metrics]


def _create(config_hash: str, fields: dict[str, object]) -> MetricConfig:
    try:
        # A savepoint, so that losing the race does not break an enclosing transaction.
        with transaction.atomic():
            return MetricConfig.objects.create(config_hash=config_hash, **fields)
    except IntegrityError:
        # Another process created it between our read and our insert.
        return MetricConfig.objects.get(config_hash=config_hash)


def enabled_configs() -> list[MetricConfig]:
    """The database rows of every enabled metric configuration that can be built here."""
    metrics, _ = build_enabled()
    return ensure_metric_configs(metrics)


@dataclass(frozen=True)
class EnabledConfig:
    """What dispatch needs of an enabled configuration: its row id, metric name, queue and the
    language of the campaigns it applies to ("" for every campaign)."""

    id: int
    metric: str
    queue: str
    language: str = ""


# Seconds an answer may rely on the cached rows without looking again: a row deleted or
# re-created by another process (the admin, a migration) is seen within this time.
ENABLED_CACHE_SECONDS = 300.0


class _EnabledCache:
    """The enabled configurations' rows, read once per process (and per ``ENABLED_CACHE_SECONDS``).

    Every answer dispatches through them: rebuilding the metrics' hashes and re-reading the
    rows each time was most of an answer's CPU. Forgotten when a setting changes (tests) or a
    configuration row is saved or deleted in this process.
    """

    def __init__(self) -> None:
        # Re-entrant: reading the rows may save one (descriptive fields), which forgets the cache.
        self._lock = threading.RLock()
        self._rows: tuple[EnabledConfig, ...] | None = None
        self._read_at = 0.0

    def get(self) -> tuple[EnabledConfig, ...]:
        rows, read_at = self._rows, self._read_at
        if rows is not None and time.monotonic() - read_at < ENABLED_CACHE_SECONDS:
            return rows
        with self._lock:
            fresh = tuple(EnabledConfig(row.pk, row.metric, row.queue, row.language) for row in enabled_configs())
            self._rows, self._read_at = fresh, time.monotonic()
            return fresh

    def forget(self) -> None:
        with self._lock:
            self._rows = None


_enabled_cache = _EnabledCache()


def enabled() -> tuple[EnabledConfig, ...]:
    """Id, metric and queue of every enabled configuration, cached per process (see ``_EnabledCache``)."""
    return _enabled_cache.get()


def forget_enabled() -> None:
    """Drop the cached configurations (the next :func:`enabled` builds and reads them again)."""
    _enabled_cache.forget()


@receiver(post_save, sender=MetricConfig)
@receiver(post_delete, sender=MetricConfig)
def _forget_rows(**kwargs: object) -> None:
    _enabled_cache.forget()
