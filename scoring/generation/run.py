"""The worker side of candidate generation: load the generator model, generate, store each once.

Split from :mod:`scoring.generation.candidates` (plans, templates and sources, which the staff page and the
command use) so that the web process never imports a model library; only the generation task
and ``generate_paraphrases --here`` import this module.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db import transaction

from annotate.models import Pair
from annotate.signals import announce_pairs_created
from scoring.generation.candidates import (
    ORIGIN,
    GenerationSettings,
    GenerationTemplate,
    Generator,
    templates,
)


@dataclass
class GenerationSummary:
    """What one run of a generator over some sources did."""

    system: str
    sources: int = 0
    generated: int = 0
    stored: int = 0
    already: int = 0  # stored before (a re-delivered task) or by a concurrent worker
    empty: int = 0  # the model wrote nothing usable: not stored
    new_tokens: int = 0
    seconds: float = 0.0
    pair_ids: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def clean_candidate(text: str) -> str:
    """The paraphrase in the model's answer: first line, without ``B:`` and the quotes."""
    line = next((part.strip() for part in text.strip().splitlines() if part.strip()), "")
    line = re.sub(r"^\s*B\s*:\s*", "", line)
    if len(line) >= 2 and line[0] in '"«“' and line[-1] in '"»”':
        line = line[1:-1].strip()
    elif line[:1] in '"«“':
        line = line[1:].split('"')[0].strip()
    return line


def generate_texts(lm: Any, prompts: Sequence[str], settings: GenerationSettings) -> list[tuple[str, int]]:
    """Decode one answer per prompt (one batch, left-padded): (text, new tokens) each."""
    import torch

    tokenizer = lm.tokenizer
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    try:
        encoded = tokenizer(list(prompts), return_tensors="pt", padding=True, add_special_tokens=False)
    finally:
        tokenizer.padding_side = side
    encoded = {name: tensor.to(lm.model.device) for name, tensor in encoded.items()}
    options: dict[str, Any] = {
        "max_new_tokens": settings.max_new_tokens,
        "pad_token_id": lm.pad_id,
        "eos_token_id": list(lm.eos_ids) or None,
    }
    if settings.sampled:
        torch.manual_seed(settings.seed)
        options.update(do_sample=True, temperature=settings.temperature, top_k=0, top_p=1.0)
    else:
        options.update(do_sample=False, temperature=None, top_k=None, top_p=None)
    with lm.lock, torch.inference_mode():
        output = lm.model.generate(**encoded, **options)
    new = output[:, encoded["input_ids"].shape[1] :]
    results = []
    for row in new.tolist():
        length = len(row)
        for index, token in enumerate(row):
            if token in lm.eos_ids:
                length = index + 1
                break
        results.append((tokenizer.decode(row[:length], skip_special_tokens=True), length))
    return results


def render(lm: Any, template: GenerationTemplate, source: str) -> str:
    """The prompt text of one source through the model's chat template."""
    text = lm.tokenizer.apply_chat_template(template.messages(source), tokenize=False, add_generation_prompt=True)
    return str(text)


def load_generator_model(generator: Generator) -> Any:
    """The generator's model, loaded once per process (shared with ParaPLUIE's cache)."""
    from django.conf import settings

    from scoring.metrics.lm import load_lm

    judge = generator.judge()
    return load_lm(judge.model, judge.device, judge.dtype, allow_download=settings.PARAEVAL_ALLOW_MODEL_DOWNLOAD)


def generate_missing(
    campaign_id: int, generator: Generator, sources: Sequence[str], *, lm: Any = None
) -> GenerationSummary:
    """Generate and store the candidates of ``sources`` that the campaign does not have yet.

    What is stored is looked up first, so a re-delivered task generates only what is missing;
    the insert ignores conflicts on (campaign, external id), so two workers racing on the same
    task store each candidate once. The new pairs are announced for scoring after the commit.
    """
    summary = GenerationSummary(generator.system, sources=len(sources))
    started = time.perf_counter()
    wanted = {generator.candidate_id(source): source for source in dict.fromkeys(sources)}
    have = set(
        Pair.objects.filter(campaign_id=campaign_id, external_id__in=list(wanted)).values_list("external_id", flat=True)
    )
    summary.already = len(have)
    todo = [(key, source) for key, source in wanted.items() if key not in have]
    if not todo:
        summary.seconds = time.perf_counter() - started
        return summary
    model = lm if lm is not None else load_generator_model(generator)
    template = templates()[generator.template]
    outputs = generate_texts(model, [render(model, template, source) for _, source in todo], generator.settings)
    summary.generated = len(outputs)
    summary.new_tokens = sum(tokens for _, tokens in outputs)
    rows = []
    for (key, source), (text, _) in zip(todo, outputs, strict=True):
        candidate = clean_candidate(text)
        if not candidate:
            summary.empty += 1
            continue
        rows.append(
            Pair(
                campaign_id=campaign_id,
                external_id=key,
                origin=ORIGIN,
                source=source,
                hypothesis=candidate,
                system=generator.system,
            )
        )
    with transaction.atomic():
        Pair.objects.bulk_create(rows, ignore_conflicts=True)
        created = list(
            Pair.objects.filter(campaign_id=campaign_id, external_id__in=[row.external_id for row in rows])
            .exclude(external_id__in=have)
            .values_list("id", flat=True)
        )
        announce_pairs_created(created)
    summary.stored = len(created)
    summary.pair_ids = created
    summary.already += len(rows) - len(created)
    summary.seconds = time.perf_counter() - started
    return summary
