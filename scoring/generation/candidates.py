"""Generate candidate paraphrases with LLMs and store them as pairs to judge (paper 000, 3.1, A.1).

The paper's third corpus was generated: sources sampled from PAWS and MRPC, one candidate per
source from each prompt template x generator model (two plain prompts and a deliberately
vulgar one), then judged by volunteers. Here:

* the prompts are data files in ``prompts/`` (``naive``, ``naive_system``,
  ``vulgar`` and their French twins ``*_fr``), dialogues whose last user turn holds ``{source}``;
* a *generator* is a template x a judge model of ``PARAPLUIE_MODELS`` x generation settings
  (greedy or sampled, temperature, max tokens, seed); its :attr:`Generator.system` names it on
  every pair it produced (``naive\u00d7smollm2[greedy,48tok]``, \u00d7 the multiplication
  sign), so the system view compares them;
* sources are sampled (seeded) from a campaign's pairs, or given as a list;
* the work goes to the model's own worker queue (``llm.<model>``), a few sources a task; each
  candidate is a :class:`~annotate.models.Pair` (source, candidate) with origin ``generated``
  and an external id derived from the generator and the source, so the campaign's unique
  (campaign, external id) constraint stores each candidate once, even when a worker is killed
  mid-batch and its task runs again.

torch is imported by the worker side only (:mod:`scoring.generation.run`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from annotate.models import Campaign, Pair
from scoring.metrics.judges import JudgeModel, find_model
from scoring.models import GenerationRun

logger = logging.getLogger(__name__)

TEMPLATES_DIR = Path(__file__).resolve().parent / "prompts"
ORIGIN = "generated"
# Between template and model in a system name: naive\u00d7smollm2[greedy,48tok].
TIMES = "\u00d7"
GENERATE_TASK = "scoring.generation.tasks.generate_candidates"
# Sources per task: a task's work is bounded, and a killed worker loses at most this many.
SOURCES_PER_TASK = 8
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


class GenerationError(ValueError):
    """A generation request that cannot run (unknown template or model, bad settings, no sources)."""


@dataclass(frozen=True)
class GenerationTemplate:
    """One prompt template: a dialogue whose last user turn asks for the paraphrase of ``{source}``."""

    name: str
    description: str
    language: str
    turns: tuple[tuple[str, str], ...]

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.turns, ensure_ascii=False).encode()).hexdigest()

    def messages(self, source: str) -> list[dict[str, str]]:
        """The chat messages for one source (``{source}`` replaced; no other placeholder exists)."""
        return [{"role": role, "content": content.replace("{source}", source)} for role, content in self.turns]


def _read_template(path: Path) -> GenerationTemplate:
    name = path.stem
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise GenerationError(f"{path.name}: not readable JSON: {error}") from None
    turns = data.get("turns") if isinstance(data, dict) else None
    if not _NAME.match(name) or not isinstance(turns, list) or not turns:
        raise GenerationError(f"{path.name}: expected a lower-case name and a non-empty list of turns")
    parsed = []
    for turn in turns:
        if not isinstance(turn, dict) or turn.get("role") not in ("system", "user", "assistant"):
            raise GenerationError(f"{path.name}: each turn needs a role (system, user, assistant) and content")
        parsed.append((str(turn["role"]), str(turn.get("content", ""))))
    if parsed[-1][0] != "user" or "{source}" not in parsed[-1][1]:
        raise GenerationError(f"{path.name}: the last turn must be the user's, with {{source}}")
    return GenerationTemplate(name, str(data.get("description", "")), str(data.get("language", "en")), tuple(parsed))


@cache
def templates() -> dict[str, GenerationTemplate]:
    """The shipped generation templates by name (the paper's order first)."""
    found = {path.stem: _read_template(path) for path in sorted(TEMPLATES_DIR.glob("*.json"))}
    order = ["naive", "naive_system", "vulgar"]
    return {name: found[name] for name in sorted(found, key=lambda n: (n.removesuffix("_fr") not in order, n))}


def default_templates(language: str) -> list[str]:
    """The paper's three prompts in the campaign's language."""
    suffix = "_fr" if language == "fr" else ""
    return [f"naive{suffix}", f"naive_system{suffix}", f"vulgar{suffix}"]


@dataclass(frozen=True)
class GenerationSettings:
    """How a candidate is decoded; part of the generator's identity (and of its system name)."""

    sampled: bool = False
    temperature: float = 1.0
    max_new_tokens: int = 48
    seed: int = 0

    def check(self) -> None:
        if not 1 <= self.max_new_tokens <= 1024:
            raise GenerationError(f"max tokens must be between 1 and 1024, got {self.max_new_tokens}")
        if self.sampled and not 0 < self.temperature <= 5:
            raise GenerationError(f"temperature must be in (0, 5], got {self.temperature}")

    def identity(self) -> dict[str, Any]:
        """What changes the candidates: greedy decoding ignores the temperature and the seed."""
        if not self.sampled:
            return {"sampled": False, "max_new_tokens": self.max_new_tokens}
        return asdict(self)

    @property
    def tag(self) -> str:
        """``greedy,48tok`` or ``t=0.7,seed=3,48tok``."""
        if not self.sampled:
            return f"greedy,{self.max_new_tokens}tok"
        return f"t={self.temperature:g},seed={self.seed},{self.max_new_tokens}tok"


@dataclass(frozen=True)
class Generator:
    """A prompt template x a generator model x generation settings: one system."""

    template: str
    model: str  # a judge model's name (PARAPLUIE_MODELS), which also names its queue
    settings: GenerationSettings = field(default_factory=GenerationSettings)

    @property
    def system(self) -> str:
        return f"{self.template}{TIMES}{self.model}[{self.settings.tag}]"[:100]

    def judge(self) -> JudgeModel:
        return find_model(self.model)

    def identity(self) -> dict[str, Any]:
        """Everything that changes its candidates: template text, model location, settings."""
        judge = self.judge()
        return {
            "template": self.template,
            "template_sha256": templates()[self.template].digest,
            "model": judge.model,
            "dtype": judge.dtype,
            "settings": self.settings.identity(),
        }

    def candidate_id(self, source: str) -> str:
        """The external id of this generator's candidate for ``source``: stored once per campaign."""
        key = hashlib.sha256(json.dumps([self.identity(), source], sort_keys=True).encode()).hexdigest()
        return f"gen-{key[:32]}"


def sample_sources(campaign: Campaign, count: int, seed: int) -> list[str]:
    """``count`` distinct source sentences of the campaign's judged pairs (not training, checks or
    generated pairs), drawn with ``seed``: the same call gives the same sources."""
    texts = (
        Pair.objects.filter(campaign=campaign, is_training=False, is_check=False)
        .exclude(origin=ORIGIN)
        .order_by("id")
        .values_list("source", flat=True)
    )
    distinct = list(dict.fromkeys(text.strip() for text in texts if text.strip()))
    if not distinct:
        raise GenerationError(f"campaign {campaign.slug!r} has no source sentences to sample from")
    return random.Random(seed).sample(distinct, min(count, len(distinct)))


def read_sources(data: bytes, count: int | None = None, seed: int = 0) -> list[str]:
    """Sources from an uploaded list (one sentence a line, UTF-8); ``count`` of them, seeded."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise GenerationError("the source list is not UTF-8 text") from None
    lines = list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))
    if not lines:
        raise GenerationError("the source list has no sentences")
    if count is not None and count < len(lines):
        return random.Random(seed).sample(lines, count)
    return lines


@dataclass(frozen=True)
class GenerationTask:
    """Sources for one generator, on its model's queue: one message."""

    campaign_id: int
    generator: Generator
    sources: tuple[str, ...]

    def args(self, run_id: int | None = None) -> tuple[object, ...]:
        g = self.generator
        return (self.campaign_id, g.template, g.model, asdict(g.settings), list(self.sources), run_id)


def plan(
    campaign: Campaign, generators: Sequence[Generator], sources: Sequence[str], per_task: int = SOURCES_PER_TASK
) -> list[GenerationTask]:
    """Check the generators and split the work into tasks (a few sources each)."""
    if not sources:
        raise GenerationError("no sources to generate from")
    known = templates()
    for generator in generators:
        if generator.template not in known:
            raise GenerationError(f"unknown template {generator.template!r}; templates: {', '.join(known)}")
        generator.settings.check()
        try:
            generator.judge()
        except ValueError as error:
            raise GenerationError(str(error)) from None
    return [
        GenerationTask(campaign.pk, generator, tuple(sources[start : start + per_task]))
        for generator in generators
        for start in range(0, len(sources), per_task)
    ]


def send(tasks: Sequence[GenerationTask]) -> GenerationRun | None:
    """Record the run and queue its tasks on their models' queues once the transaction commits."""
    from paraeval import broker

    if not tasks:
        return None
    queues = [task.generator.judge().queue for task in tasks]
    run = GenerationRun.objects.create(
        campaign_id=tasks[0].campaign_id,
        systems="\n".join(dict.fromkeys(task.generator.system for task in tasks)),
        queues=",".join(dict.fromkeys(queues)),
        sources=len({source for task in tasks for source in task.sources}),
        tasks=len(tasks),
    )
    messages = [
        broker.TaskMessage(GENERATE_TASK, task.args(run.pk), queue) for task, queue in zip(tasks, queues, strict=True)
    ]
    transaction.on_commit(lambda: _send(broker, messages))
    return run


def recent_runs(campaigns: QuerySet[Campaign], limit: int = 10) -> list[GenerationRun]:
    """The latest generation runs of ``campaigns`` (a staff member's teams'), newest first."""
    return list(GenerationRun.objects.filter(campaign__in=campaigns).select_related("campaign")[:limit])


def note_task(run_id: int | None, **counts: int) -> None:
    """A task of run ``run_id`` started, finished or failed: add to its counters (one UPDATE)."""
    if run_id is None:
        return  # a message sent before runs were recorded
    changes = {field: F(field) + value for field, value in counts.items()}
    GenerationRun.objects.filter(pk=run_id).update(**changes, changed_at=timezone.now())


def _send(broker: Any, messages: list[Any]) -> None:
    result = broker.send(messages)
    if result.not_sent:
        logger.warning("generation: %d tasks not sent: %s", result.not_sent, result.error)
