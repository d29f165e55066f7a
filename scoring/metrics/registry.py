"""Which metrics exist, and how to build each one from the settings or from a spec.

Entries name their class as ``"module:Class"`` and are imported only when built, so listing
metrics (or hashing their configurations in the web process) never imports torch.

A metric is named by a spec, ``name`` or ``name[key=value,...]`` (:mod:`scoring.metrics.specs`):
the keys an entry accepts are the parameters that change its numbers (:data:`SPEC_KEYS`).
``parapluie_<template>`` without ``model=`` means that template on every judge model of
``PARAPLUIE_MODELS`` (:func:`build_specs`); with it, on that one model. Every metric built here
carries its canonical spec (``metric.spec``), stored with its configuration so that a worker
rebuilds exactly that configuration.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import logging
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from scoring.metrics import environment
from scoring.metrics.base import Metric, MetricError
from scoring.metrics.judges import JudgeModel, configured_models, find_model
from scoring.metrics.specs import Spec, SpecError, parse, to_bool, to_int

logger = logging.getLogger(__name__)


class InvalidSpec(MetricError, ValueError):
    """A metric spec with an option the metric does not take, or a bad value; the message says which."""


class UnknownMetric(MetricError, KeyError):
    """A metric name that the registry does not know."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


@dataclass(frozen=True)
class MetricEntry:
    """How to build one named metric: its class and the keyword arguments taken from settings.

    ``package``: the (distribution, version) of a plug-in metric, hashed into its configuration.
    """

    name: str
    target: str
    options: Callable[[], dict[str, Any]] = field(default=dict)
    aliases: tuple[str, ...] = ()
    package: tuple[str, str] | None = None

    def metric_class(self) -> type[Metric]:
        module_name, _, class_name = self.target.partition(":")
        cls = importlib.import_module(module_name)
        for part in class_name.split("."):
            cls = getattr(cls, part)
        if not (isinstance(cls, type) and issubclass(cls, Metric)):
            raise InvalidSpec(f"{self.name}: {self.target} is not a scoring.metrics.base.Metric subclass")
        return cls

    def build(self, **overrides: Any) -> Metric:
        metric = self.metric_class()(**{**self.options(), **overrides})
        if self.package is not None:
            if metric.name != self.name:
                raise InvalidSpec(
                    f"plug-in {self.name!r} ({self.package[0]} {self.package[1]}): its class is named {metric.name!r}; "
                    "the entry point's name and the class's name must be the same"
                )
            metric.package = self.package
        return metric


def _bertscore_options() -> dict[str, Any]:
    installed = environment.current()
    return {
        "model": installed.bertscore_model,
        "num_layers": installed.bertscore_num_layers,
        "device": installed.embedding_device,
    }


def _sbert_options() -> dict[str, Any]:
    installed = environment.current()
    return {"model": installed.sbert_model, "device": installed.embedding_device}


def _parapluie_options(template: str) -> Callable[[], dict[str, Any]]:
    def options() -> dict[str, Any]:
        return {
            "template": template,
            "max_new_tokens": environment.current().indirect_max_new_tokens,
        }

    return options


def judge_options(judge: JudgeModel) -> dict[str, Any]:
    """ParaPLUIE's keyword arguments for one judge model."""
    return {"model": judge.model, "device": judge.device, "dtype": judge.dtype, "batch_size": judge.batch_size}


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


# The entry-point group under which an installed package declares its metric classes:
#   [project.entry-points."paraeval.metrics"]
#   example_overlap = "paraeval_example_metric:CharacterOverlap"
ENTRY_POINT_GROUP = "paraeval.metrics"


def plugin_entries() -> list[MetricEntry]:
    """The metrics that installed packages declare under :data:`ENTRY_POINT_GROUP`, each with
    its package's name and version (nothing is imported until a metric is built).

    Read once per ``sys.path`` (scanning every installed distribution takes milliseconds)."""
    return list(_plugin_entries(tuple(sys.path)))


@functools.lru_cache(maxsize=4)
def _plugin_entries(path: tuple[str, ...]) -> tuple[MetricEntry, ...]:
    found = []
    for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = point.dist
        package = (dist.name, dist.version) if dist is not None else ("unknown", "0")
        found.append(MetricEntry(point.name, point.value, package=package))
    return tuple(sorted(found, key=lambda entry: entry.name))


def entries() -> dict[str, MetricEntry]:
    """Every known metric by name (ParaPLUIE has one entry per prompt template), then the
    plug-ins (a plug-in named like a built-in metric is ignored, with a warning)."""
    known = {entry.name: entry for entry in (*_STATIC_ENTRIES, *_parapluie_entries())}
    for entry in plugin_entries():
        if entry.name in known:
            logger.warning("plug-in metric %s of %s ignored: a metric has this name", entry.name, entry.package)
            continue
        known[entry.name] = entry
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


# --- Specs: the parameters that change a metric's numbers, by metric --------------------------

_BLEU_KEYS = ("tokenize", "lowercase", "tokeniser", "max_n")
_ENCODER_KEYS = ("model", "layers")
SPEC_KEYS: dict[str, tuple[str, ...]] = {
    "bleu": _BLEU_KEYS,
    "self_bleu": _BLEU_KEYS,
    "ibleu": (*_BLEU_KEYS, "alpha"),
    "sacrebleu": ("tokenize", "lowercase", "smooth"),
    "bertscore": _ENCODER_KEYS,
    "parascore": _ENCODER_KEYS,
    "parascore_free": _ENCODER_KEYS,
    "bert_ibleu": _ENCODER_KEYS,
    "sbert": ("model",),
}
PARAPLUIE_KEYS = ("model", "dtype")
# BLEU's tokenisers that have a lower-cased twin (tokenize=moses,lowercase=true -> moses_lower).
_CASED = ("moses", "whitespace", "nltk")


def _bleu_tokeniser(spec: Spec, options: dict[str, str]) -> str | None:
    if "tokeniser" in options:
        if "tokenize" in options or "lowercase" in options:
            raise InvalidSpec(f"{spec}: give tokeniser= alone, or tokenize= and lowercase=")
        return options["tokeniser"]
    if "tokenize" not in options and "lowercase" not in options:
        return None
    tokenize = options.get("tokenize", "moses")
    # Lower-cased by default: the paper's MRPC figures (its PAWS figures keep the case).
    lowercase = to_bool(spec, "lowercase", options.get("lowercase", "true"))
    if tokenize == "basic_english":
        if not lowercase:
            raise InvalidSpec(f"{spec}: basic_english always lower-cases; drop lowercase=false")
        return tokenize
    if tokenize not in _CASED:
        raise InvalidSpec(f"{spec}: tokenize must be one of {', '.join((*_CASED, 'basic_english'))}, got {tokenize!r}")
    return f"{tokenize}_lower" if lowercase else tokenize


def spec_overrides(spec: Spec) -> dict[str, Any]:
    """The constructor keyword arguments a spec's options give (refusing unknown keys and bad values)."""
    name = resolve_name(spec.name)
    options = dict(spec.options)
    entry = entries()[name]
    if entry.package is not None:
        allowed: tuple[str, ...] = entry.metric_class().spec_keys
    else:
        allowed = PARAPLUIE_KEYS if name.startswith("parapluie_") else SPEC_KEYS.get(name, ())
    unknown = [key for key in options if key not in allowed]
    if unknown:
        takes = f"it takes {', '.join(allowed)}" if allowed else "it takes no options"
        raise InvalidSpec(f"{spec}: {name} has no option {', '.join(unknown)}; {takes}")
    if entry.package is not None:
        return options  # a plug-in takes its spec options as strings
    try:
        if name in ("bleu", "self_bleu", "ibleu"):
            overrides: dict[str, Any] = {}
            tokeniser = _bleu_tokeniser(spec, options)
            if tokeniser is not None:
                overrides["tokeniser"] = tokeniser
            if "max_n" in options:
                overrides["max_n"] = to_int(spec, "max_n", options["max_n"])
            if "alpha" in options:
                overrides["alpha"] = float(options["alpha"])
            return overrides
        if name == "sacrebleu":
            overrides = {}
            if "tokenize" in options:
                overrides["tokenize"] = options["tokenize"]
            if "lowercase" in options:
                overrides["lowercase"] = to_bool(spec, "lowercase", options["lowercase"])
            if "smooth" in options:
                overrides["smooth_method"] = options["smooth"]
            return overrides
        if name in SPEC_KEYS:
            overrides = {}
            if "model" in options:
                overrides["model"] = options["model"]
            if "layers" in options:
                overrides["num_layers"] = to_int(spec, "layers", options["layers"])
            return overrides
    except (SpecError, ValueError) as error:
        raise InvalidSpec(str(error)) from None
    return {}


def parse_spec(text: str) -> Spec:
    """Parse a metric spec, resolving aliases; :class:`InvalidSpec` or :class:`UnknownMetric` if wrong."""
    try:
        spec = parse(text)
    except SpecError as error:
        raise InvalidSpec(str(error)) from None
    return Spec(resolve_name(spec.name), spec.options)


def _with_spec(metric: Metric, spec: str) -> Metric:
    metric.spec = spec  # type: ignore[attr-defined]
    return metric


def _generates(template: str) -> bool:
    """An INDIRECT template (the model writes an explanation first): not for served judges."""
    from scoring.metrics.templates import TemplateKind, get_template

    return get_template(template).kind is TemplateKind.INDIRECT


def _build_served(spec: Spec, judge: JudgeModel) -> Metric:
    """ParaPLUIE on a served judge (:mod:`scoring.metrics.served`): asks the server who it is."""
    from scoring.metrics.served import ServedParaPluie

    if spec.option("dtype") is not None:
        raise InvalidSpec(f"{spec}: {judge.name} is a served judge; its server decides the dtype")
    try:
        metric = ServedParaPluie(spec.name.removeprefix("parapluie_"), judge)
    except ValueError as error:
        raise InvalidSpec(f"{spec}: {error}") from None
    metric.judge = judge.name  # type: ignore[attr-defined]
    return _with_spec(metric, str(Spec(spec.name, (("model", judge.name),))))


def _build_parapluie(entry: MetricEntry, spec: Spec, judge: JudgeModel) -> Metric:
    if judge.is_served:
        return _build_served(spec, judge)
    options = judge_options(judge)
    dtype = spec.option("dtype")
    if dtype is not None:
        options["dtype"] = dtype
    try:
        metric = entry.build(**options)
    except ValueError as error:
        raise InvalidSpec(f"{spec}: {error}") from None
    metric.queue = judge.queue  # type: ignore[misc]  # one queue per judge model
    metric.judge = judge.name  # type: ignore[attr-defined]
    canonical = Spec(spec.name, (("model", judge.name), *((("dtype", dtype),) if dtype else ())))
    return _with_spec(metric, str(canonical))


def build_specs(text: str) -> list[Metric]:
    """Every metric a spec names: ParaPLUIE without ``model=`` gives one per configured judge model."""
    spec = parse_spec(text)
    entry = entries()[spec.name]
    if spec.name.startswith("parapluie_"):
        spec_overrides(spec)  # refuses unknown keys
        model = spec.option("model")
        template = spec.name.removeprefix("parapluie_")
        if model is None:
            # Every judge model that judges with this template (a tuned judge: its own template only).
            return [
                _build_parapluie(entry, spec, judge)
                for judge in configured_models()
                if judge.judges_with(template) and not (judge.is_served and _generates(template))
            ]
        try:
            judge = find_model(model)
        except SpecError as error:
            raise InvalidSpec(f"{spec}: {error}") from None
        if not judge.judges_with(template):
            raise InvalidSpec(
                f"{spec}: the tuned judge {judge.name} was tuned with the template {judge.template!r} only"
            )
        return [_build_parapluie(entry, spec, judge)]
    overrides = spec_overrides(spec)
    try:
        metric = entry.build(**overrides)
    except ValueError as error:
        raise InvalidSpec(f"{spec}: {error}") from None
    return [_with_spec(metric, str(spec))]


def build_metric(name: str, **overrides: Any) -> Metric:
    """Build the metric a spec names (``overrides`` replace individual options).

    ParaPLUIE without ``model=`` is built on the first (default) judge model.
    """
    if overrides:
        entry = entries()[resolve_name(name)]
        if entry.name.startswith("parapluie_"):
            judge = configured_models()[0]
            metric = entry.build(**{**judge_options(judge), **overrides})
            if "model" not in overrides:
                metric.queue = judge.queue  # type: ignore[misc]
            else:
                metric.queue = find_model(overrides["model"]).queue  # type: ignore[misc]
            return metric
        return entry.build(**overrides)
    return build_specs(name)[0]


def build_metrics(names: Iterable[str]) -> list[Metric]:
    """Every metric the specs name (ParaPLUIE expanded over the judge models), in order."""
    return [metric for name in names for metric in build_specs(name)]


def enabled_metrics() -> list[Metric]:
    """The metrics the workers compute for every pair (``PARAEVAL_METRICS``)."""
    return build_metrics(environment.current().metrics)
