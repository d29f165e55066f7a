"""Which metrics exist, and how to build each one from the settings.

Entries name their class as ``"module:Class"`` and are imported only when built, so listing
metrics (or hashing their configurations in the web process) never imports torch.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from scoring.metrics.base import Metric, MetricError


class UnknownMetric(MetricError, KeyError):
    """A metric name that the registry does not know."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


@dataclass(frozen=True)
class MetricEntry:
    """How to build one named metric: its class and the keyword arguments taken from settings."""

    name: str
    target: str
    options: Callable[[], dict[str, Any]] = field(default=dict)
    aliases: tuple[str, ...] = ()

    def build(self, **overrides: Any) -> Metric:
        module_name, class_name = self.target.split(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        return cls(**{**self.options(), **overrides})


def _bertscore_options() -> dict[str, Any]:
    return {
        "model": settings.BERTSCORE_MODEL,
        "num_layers": settings.BERTSCORE_NUM_LAYERS,
        "device": settings.EMBEDDING_DEVICE,
    }


def _sbert_options() -> dict[str, Any]:
    return {"model": settings.SBERT_MODEL, "device": settings.EMBEDDING_DEVICE}


def _parapluie_options(template: str) -> Callable[[], dict[str, Any]]:
    def options() -> dict[str, Any]:
        return {
            "template": template,
            "model": settings.PARAPLUIE_MODEL,
            "device": settings.PARAPLUIE_DEVICE,
            "dtype": settings.PARAPLUIE_DTYPE,
            "batch_size": settings.PARAPLUIE_BATCH_SIZE,
            "max_new_tokens": settings.PARAPLUIE_INDIRECT_MAX_NEW_TOKENS,
        }

    return options


_STATIC_ENTRIES: tuple[MetricEntry, ...] = (
    MetricEntry("lev", "scoring.metrics.lexical:Levenshtein"),
    MetricEntry("wer", "scoring.metrics.lexical:WordEditRate"),
    MetricEntry("bleu", "scoring.metrics.bleu:TorchtextBleu"),
    MetricEntry("sacrebleu", "scoring.metrics.bleu:SacreSentenceBleu"),
    MetricEntry("self_bleu", "scoring.metrics.bleu:SelfBleu"),
    MetricEntry("ibleu", "scoring.metrics.bleu:IBleu"),
    MetricEntry("meteor", "scoring.metrics.meteor:Meteor"),
    MetricEntry("bertscore", "scoring.metrics.bertscore:BertScore", _bertscore_options),
    MetricEntry("parascore", "scoring.metrics.parascore:ParaScore", _bertscore_options),
    MetricEntry("parascore_free", "scoring.metrics.parascore:ParaScoreFree", _bertscore_options),
    MetricEntry("bert_ibleu", "scoring.metrics.parascore:BertIBleu", _bertscore_options),
    MetricEntry("sbert", "scoring.metrics.sbert:SbertCosine", _sbert_options),
)


def _parapluie_entries() -> list[MetricEntry]:
    from scoring.metrics.templates import template_names

    entries = []
    for template in template_names():
        aliases = ("parapluie_fs",) if template == "fs_direct" else ()
        entries.append(
            MetricEntry(
                f"parapluie_{template}", "scoring.metrics.parapluie:ParaPluie", _parapluie_options(template), aliases
            )
        )
    return entries


def entries() -> dict[str, MetricEntry]:
    """Every known metric by name (ParaPLUIE has one entry per prompt template)."""
    known = {entry.name: entry for entry in (*_STATIC_ENTRIES, *_parapluie_entries())}
    return known


def metric_names() -> list[str]:
    return list(entries())


def resolve_name(name: str) -> str:
    """Map an alias (``parapluie_fs``) to its metric name; refuse unknown names clearly."""
    known = entries()
    if name in known:
        return name
    for entry in known.values():
        if name in entry.aliases:
            return entry.name
    raise UnknownMetric(f"unknown metric {name!r}; known metrics: {', '.join(known)}")


def build_metric(name: str, **overrides: Any) -> Metric:
    """Build the named metric from settings (``overrides`` replace individual options)."""
    return entries()[resolve_name(name)].build(**overrides)


def build_metrics(names: Iterable[str]) -> list[Metric]:
    return [build_metric(name) for name in names]


def enabled_metrics() -> list[Metric]:
    """The metrics the workers compute for every pair (``PARAEVAL_METRICS``)."""
    return build_metrics(settings.PARAEVAL_METRICS)
