"""What ``manage.py list_metrics`` shows: every registered metric, its configuration and availability.

Without ``probe`` nothing heavy happens: metrics are constructed (cheap by contract) and
``check_available`` only looks for files. With ``probe`` each available metric scores one pair,
which loads its model: the proof that it really runs here.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from scoring.metrics.base import Metric, MetricError
from scoring.metrics.registry import build_specs, entries

PROBE_PAIR = ("The cat is alive.", "The cat was alive.")


@dataclass(frozen=True)
class MetricStatus:
    """One registered metric as the catalogue reports it."""

    name: str
    aliases: tuple[str, ...]
    direction: str = ""
    natural_threshold: float | None = None
    queue: str = ""
    label: str = ""
    config_hash: str = ""
    description: str = ""
    available: bool = False
    reason: str = ""
    probe_value: float | None = None
    probe_seconds: float | None = None


def metric_statuses(names: Iterable[str] | None = None, probe: bool = False) -> list[MetricStatus]:
    """Status of the named metrics (all registered ones by default), in registry order.

    A ParaPLUIE template has one line per judge model of ``PARAPLUIE_MODELS`` (each its own
    configuration, label and queue), as the workers would compute it.
    """
    known = entries()
    wanted = list(names) if names is not None else list(known)
    statuses = []
    for name in wanted:
        entry = known[name]
        try:
            metrics: list[Metric] = build_specs(name)
        except Exception as error:  # noqa: BLE001 - a broken entry is reported, the others still listed
            statuses.append(
                MetricStatus(name, entry.aliases, reason=f"cannot be built: {type(error).__name__}: {error}")
            )
            continue
        statuses += [_status(name, entry.aliases, metric, probe) for metric in metrics]
    return statuses


def _status(name: str, aliases: tuple[str, ...], metric: Metric, probe: bool) -> MetricStatus:
    available, reason = True, ""
    try:
        metric.check_available()
    except MetricError as error:
        available, reason = False, str(error)
    except Exception as error:  # noqa: BLE001 - a metric's own bug is shown, not raised
        available, reason = False, f"{type(error).__name__}: {error}"
    probe_value = probe_seconds = None
    if probe and available:
        started = time.perf_counter()
        try:
            outcome = metric.score_many([PROBE_PAIR])[0]
        except MetricError as error:
            available, reason = False, str(error)
        except Exception as error:  # noqa: BLE001 - e.g. a model that fails to load
            available, reason = False, f"{type(error).__name__}: {error}"
        else:
            probe_seconds = time.perf_counter() - started
            if outcome.ok:
                probe_value = outcome.value
            else:
                available, reason = False, f"probe pair failed: {outcome.error}"
    return MetricStatus(
        name=name,
        aliases=aliases,
        direction=metric.direction.value,
        natural_threshold=metric.natural_threshold,
        queue=metric.queue,
        label=metric.label,
        config_hash=metric.config_hash,
        description=metric.description,
        available=available,
        reason=reason,
        probe_value=probe_value,
        probe_seconds=probe_seconds,
    )
