"""What the metric library needs to know of its installation, passed in rather than read.

The library never imports Django: the project's scoring app registers a provider that builds a
:class:`MetricEnvironment` from the settings (:mod:`scoring.pipeline.metric_settings`), and each metric,
judge model or template folder asks :func:`current` for it. Used on its own (a benchmark on a GPU
machine without Django), the library runs with :data:`DEFAULTS`: the embedded models, no download.
A provider, not a snapshot: the settings may change while a process runs (the tests do).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # judges asks this module for the configured models
    from scoring.metrics.judges import JudgeModel


@dataclass(frozen=True)
class MetricEnvironment:
    """The installation as the metric library sees it (each field names the setting it comes from)."""

    metrics: tuple[str, ...] = ()  # PARAEVAL_METRICS: the specs the workers compute
    judge_models: tuple[JudgeModel, ...] = ()  # PARAPLUIE_MODELS, parsed (none: the embedded SmolLM2)
    tuned_dir: Path | None = None  # PARAPLUIE_TUNED_DIR
    template_dirs: tuple[Path, ...] = ()  # PARAPLUIE_TEMPLATE_DIRS (beside the shipped templates)
    indirect_max_new_tokens: int = 48  # PARAPLUIE_INDIRECT_MAX_NEW_TOKENS
    bertscore_model: str = "embedded"  # BERTSCORE_MODEL
    bertscore_num_layers: int = 6  # BERTSCORE_NUM_LAYERS
    sbert_model: str = "embedded"  # SBERT_MODEL
    embedding_device: str = "cpu"  # EMBEDDING_DEVICE
    allow_download: bool = False  # PARAEVAL_ALLOW_MODEL_DOWNLOAD
    nltk_data: Path | None = None  # NLTK_DATA (None: NLTK's own search path)
    served_probe_timeout: float = 15.0  # PARAEVAL_SERVED_PROBE_TIMEOUT: seconds one probe request may wait
    served_retry_after: float = 60.0  # PARAEVAL_SERVED_RETRY_AFTER: seconds an unreachable server is not asked
    extra: dict[str, object] = field(default_factory=dict)  # room for a plug-in's own settings


DEFAULTS = MetricEnvironment()
_provider: Callable[[], MetricEnvironment] = lambda: DEFAULTS  # noqa: E731


def use(provider: Callable[[], MetricEnvironment]) -> None:
    """Make ``provider`` the source of :func:`current` (the scoring app does, at start-up)."""
    global _provider
    _provider = provider


def current() -> MetricEnvironment:
    """The installation's environment, as the registered provider gives it now."""
    return _provider()
